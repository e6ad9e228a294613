"""The MCP endpoint at /mcp/, made on its first request: importing the MCP SDK (its pydantic
models) took 1.3 s of the 5 s a sidecar process needs to start on a small wiki, and most
sidecars are never asked over MCP.

The SDK's session manager lives in a task of the application's lifespan (a task group must be
left by the task that entered it); a request waits until that task has built the tools and
started the manager, then goes to the SDK's application.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.to_thread
from starlette.types import Receive, Scope, Send

from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.operations import Operations

log = logging.getLogger("groundwiki_sidecar")


class MCPOnFirstUse:
    """An ASGI application to mount at /mcp; `run` must run in the lifespan's task group."""

    def __init__(self, ops: Operations, operations: Sequence[Operation]) -> None:
        self._ops = ops
        self._operations = operations
        self._wanted: anyio.Event | None = None
        self._ready: anyio.Event | None = None
        self._app: Any = None
        self._failure = ""

    async def run(self) -> None:
        """Until cancelled: on the first request, build the MCP tools and run their sessions."""
        self._wanted, self._ready = anyio.Event(), anyio.Event()
        await self._wanted.wait()
        try:
            server, app = await anyio.to_thread.run_sync(self._build)
        except Exception as problem:  # the HTTP routes go on; each MCP request is refused
            self._failure = f"the MCP endpoint could not be made: {problem}"
            log.error("%s", self._failure)
            self._ready.set()
            return
        async with server.session_manager.run():
            self._app = app
            self._ready.set()
            await anyio.sleep_forever()

    def _build(self) -> tuple[Any, Any]:
        from groundwiki_sidecar.api.mcp_tools import build_mcp, http_app

        server = build_mcp(self._ops, self._operations)
        return server, http_app(server)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            if self._wanted is None or self._ready is None:
                raise RuntimeError("the MCP endpoint answers only while the application runs")
            self._wanted.set()
            await self._ready.wait()
            if self._app is None:
                raise RuntimeError(self._failure)
        await self._app(scope, receive, send)
