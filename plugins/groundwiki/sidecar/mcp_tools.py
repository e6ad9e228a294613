"""The sidecar's operations as MCP tools (the official `mcp` SDK), over stdio (`groundwiki
mcp`) and over streamable HTTP at /mcp/ on the running sidecar."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field

from .operations import OperationError, Operations
from .query import MAX_LIMIT, MAX_QUERY_CHARS
from .schemas import MAX_ANSWER_CHARS, MAX_IDS

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
Ids = Annotated[list[str], Field(min_length=1, max_length=MAX_IDS)]


def _call(function: Any, *args: Any) -> dict[str, Any]:
    try:
        return function(*args)
    except OperationError as exc:
        raise ToolError(exc.message) from None


def build_mcp(ops: Operations, host: str = "127.0.0.1") -> MCPServer:
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
    def page_links(key: Annotated[str, Field(description="a page key or alias")]) -> dict[str, Any]:
        """The graph around a page: outgoing refs and wikilinks, backlinks, cited sources."""
        return _call(ops.links, key)

    @server.tool()
    def verify_citations(
        answer: Annotated[str, Field(max_length=MAX_ANSWER_CHARS)],
        chunks: Annotated[list[str], Field(max_length=MAX_IDS)] | None = None,
        pages: Annotated[list[str], Field(max_length=MAX_IDS)] | None = None,
    ) -> dict[str, Any]:
        """Check an answer against the chunks read and the pages used. Per chunk: quote (current
        and quoted verbatim), paraphrase (current, not quoted), drifted (changed since the page
        was locked), uncited (a used page points at it but it was not read), none (a used page
        whose evidence was not read at all)."""
        return _call(ops.verify, answer, chunks or [], pages or [])

    return server


def http_app(server: MCPServer, host: str) -> Any:
    """The streamable HTTP transport, to mount at /mcp."""
    loopback = host in {"127.0.0.1", "localhost", "::1"}
    security = (
        TransportSecuritySettings(
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
        if loopback
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)  # the token guards it
    )
    return server.streamable_http_app(streamable_http_path="/", transport_security=security)
