"""`groundwiki mcp` beside a running sidecar: the stdio session forwarded to the sidecar's MCP
endpoint (streamable HTTP at /mcp/), message for message and unchanged, so the tools, their
answers and their errors are the sidecar's, in the scope of the token the session presents.

The two ends are the MCP SDK's own transports: `stdio_server` towards the client and
`streamable_http_client` towards the sidecar. When this process already answered `initialize`
(mcp_handshake), the request still goes to the sidecar, whose HTTP session starts with it, and
the sidecar's answer is dropped: the client has had one.

When the sidecar stops (or was restarted, and no longer knows the session), each request
still waiting gets a JSON-RPC error saying so and the session closes, instead of leaving the
client waiting: the client then starts `groundwiki mcp` again, which forwards to the sidecar
running then, or serves the wiki itself when none holds it.
"""

from __future__ import annotations

import logging
import threading
from contextlib import suppress
from typing import IO, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    PROTOCOL_VERSION_META_KEY,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from groundwiki_sidecar.api import mcp_handshake
from groundwiki_sidecar.api.mcp_tools import _AnswerUnreadable, _DropAnswer, _stdin_after

log = logging.getLogger("groundwiki_sidecar")

AGAIN = "start groundwiki mcp again (it forwards to a running sidecar, else serves the wiki itself)"


def forward(url: str, token: str | None) -> str:
    """Forward this process's stdio MCP session to the MCP endpoint at `url` until the client
    closes stdin (""), or until the sidecar stops answering (what it did: `stopped answering
    (ConnectError: ...)`)."""
    # The SDK logs each session ID and reconnection at INFO: this process's stderr is the
    # client's log, and the one line that matters is ours.
    for noisy in ("mcp", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    return str(anyio.run(_forward, url, token, mcp_handshake.taken()))


async def _forward(url: str, token: str | None, early: mcp_handshake.EarlyHandshake | None) -> str:
    line, answered = b"", None
    if early is not None:
        line, answered = await anyio.to_thread.run_sync(early.handed_over)
    with _stdin_after(line) as stdin:
        lines = _Lines(stdin.wrapped)
        # stdio_server only iterates its input: lines read by a daemon thread, so a session the
        # sidecar ended does not wait for the client's next line to close.
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            lines.start()
            replies = write if answered is None else _DropAnswer(write, answered)
            session = _Session(answered)
            why = await session.run(_AnswerUnreadable(read, write), replies, url, token)
            if why:
                await session.fail_pending(write, f"the sidecar at {url} {why}")
            lines.close()
            await write.aclose()
    return why


class _Session:
    """One forwarded session: what the client still waits for, and the protocol version the
    sidecar agreed to (sent as a header on each later message, as the SDK's client does)."""

    def __init__(self, answered: RequestId | None) -> None:
        self.answered = answered  # the `initialize` this process answered already
        self.pending: set[RequestId] = set()
        self.hello: RequestId | None = None
        # Set once the sidecar answered `initialize`: its HTTP session exists only then, so a
        # message sent before (the client's `initialized`, at once) would reach no session.
        self.greeted = anyio.Event()
        self.version: str | None = None
        self.ended = ""  # why the sidecar's side ended, when it did

    async def run(self, read: Any, replies: Any, url: str, token: str | None) -> str:
        """Copy messages both ways until either side ends; why the sidecar's ended, or ""."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        try:  # the SDK's client factory: the timeouts it gives the client it makes itself
            async with (
                create_mcp_http_client(headers=headers) as http,
                streamable_http_client(url, http_client=http) as (up_read, up_write),
                anyio.create_task_group() as tasks,
            ):
                tasks.start_soon(self._down, up_read, replies, tasks.cancel_scope)
                await self._up(read, up_write)
                tasks.cancel_scope.cancel()  # the client closed stdin: the session is over
        except Exception as exc:  # a request the sidecar never took (it stopped)
            return f"stopped answering ({_cause(exc)})"
        return self.ended

    async def _up(self, read: Any, up_write: Any) -> None:
        async for item in read:
            message = item.message
            hello = isinstance(message, JSONRPCRequest) and message.method == "initialize"
            if self.hello is not None and not hello:
                await self.greeted.wait()
            if isinstance(message, JSONRPCRequest):
                if hello:
                    self.hello = message.id
                if not (hello and message.id == self.answered):
                    self.pending.add(message.id)
            await up_write.send(SessionMessage(message, metadata=self._stamp(message)))

    async def _down(self, up_read: Any, replies: Any, scope: anyio.CancelScope) -> None:
        async for item in up_read:
            if isinstance(item, Exception):  # an event the SDK could not read: no ID to answer
                log.warning("the sidecar sent a message that is no JSON-RPC: %s", item)
                continue
            message = item.message
            if isinstance(message, JSONRPCResponse | JSONRPCError):
                self.pending.discard(message.id)
                self._agreed(message)
            await replies.send(item)
            if _session_lost(message):
                self.ended = "no longer knows this session (it was restarted)"
                break
        self.ended = self.ended or "closed the session"
        scope.cancel()

    def _stamp(self, message: JSONRPCMessage) -> ClientMessageMetadata | None:
        """The headers the HTTP transport wants beside the message, as the SDK's client sets
        them: a request of the per-request protocol (no `initialize`) says its version,
        method and name; after `initialize`, each message says the version agreed."""
        if isinstance(message, JSONRPCRequest) and (modern := _modern_headers(message)):
            return ClientMessageMetadata(headers=modern)
        hello = isinstance(message, JSONRPCRequest) and message.method == "initialize"
        if self.version is None or hello:
            return None
        return ClientMessageMetadata(headers={MCP_PROTOCOL_VERSION_HEADER: self.version})

    def _agreed(self, message: JSONRPCResponse | JSONRPCError) -> None:
        if message.id != self.hello:
            return
        if isinstance(message, JSONRPCResponse):
            version = message.result.get("protocolVersion")
            self.version = version if isinstance(version, str) else None
        self.greeted.set()

    async def fail_pending(self, write: Any, why: str) -> None:
        """An error for each request the client still waits for: the session is closing."""
        for request_id in sorted(self.pending, key=str):
            error = ErrorData(
                code=CONNECTION_CLOSED,
                message=f"{why}; {AGAIN}",
            )
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await write.send(
                    SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
                )
        self.pending.clear()


def _session_lost(message: JSONRPCMessage) -> bool:
    """Whether the sidecar answered that it has no such session: the SDK's session manager
    says so (404) to a session ID it did not issue, i.e. the sidecar was restarted. Every later
    request would get the same answer, so the session ends and the client starts a new one."""
    return (
        isinstance(message, JSONRPCError)
        and message.error.code == INVALID_REQUEST
        and message.error.message == "Session not found"
    )


def _modern_headers(request: JSONRPCRequest) -> dict[str, str]:
    """The routing headers of a request of the per-request protocol (its version in its
    `_meta`), which the sidecar routes by; {} for any other request. No tool of the sidecar
    declares `x-mcp-header` arguments, so no Mcp-Param header is owed."""
    params = request.params or {}
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if version not in MODERN_PROTOCOL_VERSIONS:
        return {}
    headers = {MCP_PROTOCOL_VERSION_HEADER: str(version), MCP_METHOD_HEADER: request.method}
    name = params.get(NAME_BEARING_METHODS.get(request.method, ""))
    if isinstance(name, str):
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    return headers


def _cause(exc: BaseException) -> str:
    """The first error under a group of them, as `Kind: message`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _Lines:
    """The client's lines, read by a daemon thread and handed to the event loop one at a time.
    An anyio worker thread would keep the process alive, blocked on a read, after the session
    ends; a daemon thread does not. `close()` ends the lines, as the end of input would."""

    def __init__(self, text: IO[str]) -> None:
        self.text = text
        self._send, self._receive = anyio.create_memory_object_stream[str](0)

    def start(self) -> None:
        token = anyio.lowlevel.current_token()
        threading.Thread(
            target=self._read, args=(token,), name="groundwiki-mcp-stdin", daemon=True
        ).start()

    def _read(self, token: Any) -> None:
        try:
            for line in iter(self.text.readline, ""):
                anyio.from_thread.run(self._send.send, line, token=token)
            anyio.from_thread.run_sync(self._send.close, token=token)
        except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return  # the session ended first

    def close(self) -> None:
        self._send.close()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
