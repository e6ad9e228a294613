"""The sidecar's HTTP application: the operations of the catalogue (`catalog.py`, routed by
`http_routes.py`) and the MCP tools at `/mcp/`, behind the guards of `http_guards.py` (hosts,
origins, tokens, body size).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount

from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.http_guards import error, guards
from groundwiki_sidecar.api.http_routes import routes
from groundwiki_sidecar.api.mcp_mount import MCPOnFirstUse
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    return error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))


async def _server_error(request: Request, exc: Exception) -> Response:
    return error(500, "internal_error", "the sidecar failed on this request; see its log")


def query_threads() -> int:
    """How many queries run at once: one per core this process may use, at least two."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(2, cores or 1)


def create_app(service: SidecarService, user: str | None = None) -> Starlette:
    """The sidecar's application: the catalogue's operations and the MCP endpoint at /mcp/.
    The service must be started; it is stopped on shutdown."""
    ops = Operations(service)
    operations = catalog.operations()  # the lane registry as it is when the app is made
    mcp = MCPOnFirstUse(ops, operations)
    extra: list[Any] = [*routes(ops, operations), Mount("/mcp", app=mcp)]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Queries are Python under one GIL: more query threads than cores add no throughput,
        # only contention, and the sync thread that keeps answers fresh then gets a small share
        # of the interpreter (bench/soak.py: a 300-page sync took up to 17 s under 8 clients).
        # Requests beyond this wait in the event loop instead.
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = query_threads()
        try:
            async with anyio.create_task_group() as tasks:  # mounted apps get no lifespan
                tasks.start_soon(mcp.run)
                try:
                    yield
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            ops.close()
            service.stop()

    public = [operation.path for operation in operations if operation.public]
    middleware, service.tokens = guards(service.sidecar, user, public)  # /status shows tokens
    return Starlette(
        routes=extra,
        middleware=middleware,
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=lifespan,
    )
