"""The sidecar's operations as MCP tools (the official `mcp` SDK), over stdio (`groundwiki
mcp`) and over streamable HTTP at /mcp/ on the running sidecar."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import Field, ValidationError

from .operations import OperationError, Operations
from .query import MAX_LIMIT, MAX_QUERY_CHARS
from .schemas import MAX_ANSWER_CHARS, MAX_BODY_BYTES, MAX_IDS, MAX_KEY_CHARS

_SURROGATES = re.compile("[\ud800-\udfff]")

INSTRUCTIONS = (
    "A grounded wiki: every page summarises a topic and points at the raw-source chunks its "
    "claims come from. Search pages first (one summary per topic beats many raw chunks); read "
    "chunks when you need exact wording or must verify a claim. Chunk IDs look like "
    "ch_0123456789abcdef: copy them verbatim from the `pointers` of search hits, never invent "
    "or shorten them. Before answering, call verify_citations with the chunks you read."
)

Query = Annotated[
    str, Field(description="what to look for", min_length=1, max_length=MAX_QUERY_CHARS)
]
Limit = Annotated[int, Field(description="how many hits", ge=1, le=MAX_LIMIT)]
Id = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS)]  # as in the HTTP API
Ids = Annotated[list[Id], Field(min_length=1, max_length=MAX_IDS)]


def _call(function: Any, *args: Any) -> dict[str, Any]:
    try:
        return function(*args)
    except OperationError as exc:
        raise ToolError(exc.message) from None


def build_mcp(ops: Operations) -> MCPServer:
    server = MCPServer("groundwiki", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool()
    def search_wiki(
        query: Query, limit: Limit = 10, tags: list[str] | None = None
    ) -> dict[str, Any]:
        """Search the wiki's pages (hybrid: lexical, semantic and token lanes). Each hit has a
        key, title, summary, url, flags (always, stale, archived, drifted sources) and up to 5
        pointers: chunk IDs with source and lines. To read the evidence, pass those chunk IDs,
        copied verbatim, to get_chunks."""
        return _call(ops.search, query, limit, tags or [], None, False)

    @server.tool()
    def search_chunks(query: Query, limit: Limit = 10) -> dict[str, Any]:
        """Search raw-source chunks directly, for questions no page answers. Hits carry the
        chunk text verbatim with its source and line range."""
        return _call(ops.search_chunks, query, limit, False)

    @server.tool()
    def get_pages(
        ids: Annotated[Ids, Field(description="page keys or aliases")], include_body: bool = False
    ) -> dict[str, Any]:
        """Pages by key or alias (the answer says when an alias was resolved), with summary,
        flags and pointers; include_body adds the Markdown body."""
        return _call(ops.pages, ids, include_body)

    @server.tool()
    def get_chunks(
        ids: Annotated[Ids, Field(description="chunk IDs copied verbatim from pointers")],
    ) -> dict[str, Any]:
        """Raw-source chunks verbatim: text exactly as in the source, source path, line range,
        content hash. Unknown IDs are listed under `missing` with the closest real IDs; if every
        ID is unknown the call fails. Copy IDs verbatim from search results."""
        return _call(ops.chunks, ids)

    @server.tool()
    def page_links(
        key: Annotated[Id, Field(description="a page key or alias")],
    ) -> dict[str, Any]:
        """The graph around a page: outgoing refs and wikilinks, backlinks, cited sources."""
        return _call(ops.links, key)

    @server.tool()
    def verify_citations(
        answer: Annotated[str, Field(max_length=MAX_ANSWER_CHARS)],
        chunks: Annotated[list[Id], Field(max_length=MAX_IDS)] | None = None,
        pages: Annotated[list[Id], Field(max_length=MAX_IDS)] | None = None,
    ) -> dict[str, Any]:
        """Check an answer against the chunks read and the pages used. Per chunk: quote (current
        and quoted verbatim), paraphrase (current, not quoted), drifted (changed since the page
        was locked), uncited (a used page points at it but it was not read), none (a used page
        whose evidence was not read at all)."""
        return _call(ops.verify, answer, chunks or [], pages or [])

    return server


def http_app(server: MCPServer) -> Any:
    """The streamable HTTP transport, to mount at /mcp. The sidecar's own middleware checks Host,
    Origin and the body size on every route, /mcp/ included, so the SDK's Host check is off (it
    would refuse the names in sidecar.allowed_hosts); its body cap repeats ours."""
    return server.streamable_http_app(
        streamable_http_path="/",
        max_request_body_size=MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def serve_stdio(server: MCPServer) -> None:
    """The MCP tools over stdin and stdout until stdin closes."""
    anyio.run(_serve_stdio, server)


async def _serve_stdio(server: MCPServer) -> None:
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, too
    async with stdio_server() as (read, write):
        await lowlevel.run(
            _AnswerUnreadable(read, write), write, lowlevel.create_initialization_options()
        )


class _AnswerUnreadable:
    """The stdio read stream, answering each line that is no JSON-RPC message (bad JSON, a lone
    surrogate such as \\ud800, a missing method) with a JSON-RPC error instead of dropping it,
    so the client is not left waiting; the session goes on with the next line."""

    def __init__(self, inner: Any, write: Any) -> None:
        self.inner, self.write = inner, write

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item
            await self.write.send(SessionMessage(_error_reply(item)))

    def __aiter__(self) -> _AnswerUnreadable:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _AnswerUnreadable:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _error_reply(exc: Exception) -> JSONRPCError:
    """A parse error for a line the SDK could not read as JSON (a lone surrogate escape, or no
    JSON at all), an invalid-request error for JSON that is no JSON-RPC message; either carries
    the request's ID when Python's more lenient parser finds a usable one in the line."""
    problems = exc.errors() if isinstance(exc, ValidationError) else []
    given = problems[0].get("input") if problems else None
    # The problem's type, not its input, tells an unreadable line from a JSON-RPC message with
    # a bad field: the input of a bad field can be a string too (`"jsonrpc": "1.0"`).
    unparsed = bool(problems) and problems[0].get("type") == "json_invalid"
    if unparsed and isinstance(given, str):
        try:
            given = json.loads(given)
        except (ValueError, RecursionError):
            given = None
    request_id = given.get("id") if isinstance(given, dict) else None
    usable = isinstance(request_id, int | str) and not isinstance(request_id, bool)
    if not usable or (isinstance(request_id, str) and _SURROGATES.search(request_id)):
        request_id = None  # an ID the reply could not carry: JSON-RPC says null
    detail = problems[0].get("msg", "") if problems else str(exc)
    if unparsed:
        code, message = PARSE_ERROR, "the line is not valid JSON text in UTF-8"
    else:
        code, message = INVALID_REQUEST, "the line is not a JSON-RPC 2.0 message"
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=ErrorData(code=code, message=f"{message}: {_SURROGATES.sub('?', detail)[:300]}"),
    )
