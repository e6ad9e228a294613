"""Every operation of the sidecar, declared once: its name, HTTP method and path, parameters
(`parameters.py`) with their JSON Schema, answer, error codes, handler and MCP exposure.

Everything else is derived from this list: the HTTP routes (`http_routes.py`), the OpenAPI
document (`openapi.py`), the MCP tools (`mcp_tools.py`) and the endpoints that need no bearer
token (`app.py`). Adding an operation is one `Operation` in `operations()` (plus a method of
`Operations` when it needs logic of its own); its tests prove it on each surface. The list is
built when a surface is (the app, the document, the tools), from the lane registry as it is
then, so a lane registered later is in the `lanes` enums and the tool descriptions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.answer_forms import briefed
from groundwiki_sidecar.api.parameters import (
    BUDGET,
    DETAIL,
    EXPLAIN,
    FORMAT,
    KEY,
    KIND,
    LIMIT,
    QUERY,
    QUERY_WHOLE,
    STYLE,
    TAGS_LIST,
    TAGS_TEXT,
    Args,
    Param,
    given_query,
    id_list,
    ids,
    lanes_param,
    search_body,
)
from groundwiki_sidecar.api.response_schemas import (
    BOOLEAN,
    CHUNKS_RESPONSE,
    CITE_RESPONSE,
    CONTEXT_RESPONSE,
    HEALTH,
    ID,
    LINKS_RESPONSE,
    MAX_ANSWER_CHARS,
    MAX_IDS,
    MAX_QUOTE_CHARS,
    OVERVIEW_RESPONSE,
    PAGES_RESPONSE,
    VERIFY_RESPONSE,
    Schema,
    search_response,
    status_response,
)

if TYPE_CHECKING:
    # Only for the handlers' type: the catalogue is read by commands that run without the
    # sidecar's libraries, which `operations.py` imports.
    from groundwiki_sidecar.api.operations import Operations

Answer = dict[str, Any]


def _spelled(names: tuple[str, ...]) -> str:
    """`a, b and c`, as a description reads them."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


# --- operations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    """An operation's MCP tool: its name, and the description an agent reads to pick it. Every
    tool only reads (the index is the files'), so each says so to the client."""

    name: str
    description: str


@dataclass(frozen=True)
class Operation:
    name: str
    method: Literal["GET", "POST"]
    path: str  # as OpenAPI writes it: /pages/{key}/links
    summary: str
    run: Callable[[Operations, Args], Answer]
    response: Schema
    params: tuple[Param, ...] = ()
    errors: tuple[int, ...] = ()  # its own error statuses; the parameters and body add theirs
    tool: Tool | None = None
    public: bool = False  # answered without the bearer token (liveness probes)
    # Answered on the event loop instead of a query thread: cheap, and needed while every query
    # thread is busy (a probe must not wait behind slow searches).
    inline: bool = False
    # Each answer is recorded in the audit trail (audit.py): what was asked, what came back.
    audited: bool = False
    example: Answer | None = None  # a request body that answers, for the OpenAPI document

    def tool_schema(self) -> Schema:
        """The MCP tool's input schema: its arguments, none other, with their defaults."""
        params = [p for p in self.params if p.tool]
        return {
            "type": "object",
            "properties": {p.name: _with_default(p) for p in params},
            "required": [p.name for p in params if p.required],
            "additionalProperties": False,
        }

    @property
    def body(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.http == "body")

    def request_schema(self) -> Schema | None:
        """The JSON body's schema, from the body parameters; None without any."""
        if not self.body:
            return None
        aliased = {p.alias_of: p.name for p in self.body if p.alias_of}
        found: Schema = {
            "type": "object",
            "properties": {p.name: _described(p) for p in self.body},
            "required": [p.name for p in self.body if p.required and p.name not in aliased],
            "additionalProperties": False,
        }
        # A field with two spellings is required in either (`query` or `q`).
        either = [[{"required": [name]}, {"required": [alias]}] for name, alias in aliased.items()]
        if len(either) == 1:
            found["anyOf"] = either[0]
        elif either:
            found["allOf"] = [{"anyOf": pair} for pair in either]
        return found

    def statuses(self) -> list[int]:
        """Every error status it may answer: its own, its parameters', the body's (400 bad
        JSON, 422 invalid), 401 without the token, and the three every route gives: 403 for a
        browser page from a foreign Origin, 413 for a body over MAX_BODY_BYTES (a GET's too),
        421 for a Host the sidecar does not serve (DNS rebinding)."""
        # 422 for a parameter the operation does not take, in a query or a body.
        found = {*self.errors, 403, 413, 421, 422}
        for param in self.params:
            found.update(param.statuses)
        if self.body:
            found.update((400, 422))
        if not self.public:
            found.add(401)
        return sorted(found)

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter's value for the handler: the given ones, and the defaults of those a
        surface does not take (MCP has no `explain`) or a caller left out."""
        found = dict(given)
        for param in self.params:
            found.setdefault(param.name, param.default)
        return found


def _with_default(param: Param) -> Schema:
    found = _described(param)
    default = param.default_for_tool
    if not param.required and isinstance(default, bool | int | float | str):
        found["default"] = default
    return found


def _described(param: Param) -> Schema:
    if not param.description:
        return dict(param.schema)
    return {**param.schema, "description": param.description}


def operations() -> tuple[Operation, ...]:
    """Every operation, as the lane registry stands now; each takes `format` (parameters.py)."""
    return tuple(replace(op, params=(*op.params, FORMAT)) for op in _operations())


def _operations() -> tuple[Operation, ...]:
    return (
        Operation(
            "search",
            "GET",
            "/search",
            "Hybrid search over wiki pages",
            lambda ops, a: briefed(
                ops.search(
                    a["query"], a["limit"], a["tags"] or (), a["kind"], a["explain"], a["lanes"]
                ),
                a["detail"],
            ),
            search_response("page"),
            (
                QUERY,
                QUERY_WHOLE,
                LIMIT,
                EXPLAIN,
                TAGS_TEXT,
                TAGS_LIST,
                KIND,
                lanes_param("page"),
                DETAIL,
            ),
            errors=(503,),
            audited=True,
            tool=Tool(
                "search_wiki",
                f"Search the wiki's pages (hybrid: {_spelled(lanes.names('page'))} lanes). "
                "Each hit has a key, title, summary, score, flags (always, stale, archived, "
                "drifted sources) and chunk_ids: its best-matching passage first, then the "
                "evidence it cites. detail=full adds the url, tags, the passage's text and the "
                "pointers with source and lines. To read the evidence, pass chunk IDs, copied "
                "verbatim, to get_chunks.",
            ),
        ),
        Operation(
            "search_chunks",
            "GET",
            "/chunks/search",
            "Hybrid search over raw-source chunks and page passages",
            lambda ops, a: ops.search_chunks(a["query"], a["limit"], a["explain"], a["lanes"]),
            search_response("chunk"),
            (QUERY, QUERY_WHOLE, LIMIT, EXPLAIN, lanes_param("chunk")),
            errors=(503,),
            audited=True,
            tool=Tool(
                "search_chunks",
                "Search raw-source chunks and the passages of page bodies directly, for questions "
                "no page summary answers. Hits carry the text verbatim with its kind (source or "
                "passage), its source or page, and its line range.",
            ),
        ),
        # The same searches with the parameters in a JSON body: a long question in a URL can
        # pass the HTTP server's limit (about 64 KB; 8,000 CJK characters are 72 KB encoded).
        Operation(
            "search_by_body",
            "POST",
            "/search",
            "Hybrid search over wiki pages, the parameters as JSON (for long questions)",
            lambda ops, a: briefed(
                ops.search(
                    given_query(a), a["limit"], a["tags"], a["kind"], a["explain"], a["lanes"]
                ),
                a["detail"],
            ),
            search_response("page"),
            search_body("page"),
            errors=(503,),
            audited=True,
            example={"query": "how does drift work", "limit": 5},
        ),
        Operation(
            "search_chunks_by_body",
            "POST",
            "/chunks/search",
            "Hybrid search over raw-source chunks and page passages, the parameters as JSON (for "
            "long questions)",
            lambda ops, a: ops.search_chunks(given_query(a), a["limit"], a["explain"], a["lanes"]),
            search_response("chunk"),
            search_body("chunk"),
            errors=(503,),
            audited=True,
            example={"query": "how does drift work", "limit": 5},
        ),
        Operation(
            "pages",
            "POST",
            "/pages",
            "Pages by key or alias",
            lambda ops, a: ops.pages(a["ids"], a["include_body"]),
            PAGES_RESPONSE,
            (
                ids("page keys or aliases", minItems=1, maxItems=MAX_IDS),
                Param(
                    "include_body",
                    BOOLEAN,
                    "add each page's Markdown body (without its frontmatter)",
                    default=False,
                    http="body",
                ),
            ),
            errors=(404, 503),
            audited=True,
            tool=Tool(
                "get_pages",
                "Pages by key or alias (the answer says when an alias was resolved), with "
                "summary, flags and pointers; include_body adds the Markdown body.",
            ),
        ),
        Operation(
            "chunks",
            "POST",
            "/chunks",
            "Chunks verbatim by ID; unknown IDs are listed under missing",
            lambda ops, a: ops.chunks(a["ids"]),
            CHUNKS_RESPONSE,
            (ids("chunk IDs copied verbatim from pointers", minItems=1, maxItems=MAX_IDS),),
            errors=(404, 503),
            audited=True,
            tool=Tool(
                "get_chunks",
                "Raw-source chunks and page passages verbatim: text exactly as in the file, source "
                "path or page, line range, content hash. Unknown IDs are listed under `missing` with the closest "
                "real IDs; if every ID is unknown the call fails. Copy IDs verbatim from search "
                "results.",
            ),
        ),
        Operation(
            "links",
            "GET",
            "/pages/{key}/links",
            "Outgoing links, backlinks and cited sources of a page",
            lambda ops, a: ops.links(a["key"]),
            LINKS_RESPONSE,
            (KEY,),
            errors=(404, 503),
            tool=Tool(
                "page_links",
                "The graph around a page: outgoing refs and wikilinks, backlinks, cited sources.",
            ),
        ),
        Operation(
            "overview",
            "GET",
            "/overview",
            "Overview pages and pages marked usage_mode: always",
            lambda ops, a: ops.overview(),
            OVERVIEW_RESPONSE,
            errors=(503,),
            tool=Tool(
                "wiki_overview",
                "What an agent should always know about this wiki: its overview pages and the "
                "pages marked usage_mode: always, each with its title, summary and url. Read it "
                "once at the start of a session; it is also the resource groundwiki://overview.",
            ),
        ),
        Operation(
            "verify",
            "POST",
            "/verify",
            "Check an answer against the chunks and pages it used",
            lambda ops, a: ops.verify(a["answer"], a["chunks"] or (), a["pages"] or ()),
            VERIFY_RESPONSE,
            (
                Param(
                    "answer",
                    {"type": "string", "maxLength": MAX_ANSWER_CHARS},
                    "the answer to check, as it will be given: quotes in it are matched "
                    "against the chunks' text",
                    required=True,
                    http="body",
                ),
                id_list("chunks", "the chunk IDs the answer was written from (get_chunks)"),
                id_list("pages", "the keys of the pages the answer relies on"),
            ),
            errors=(503,),
            audited=True,
            tool=Tool(
                "verify_citations",
                "Check an answer against the chunks read and the pages used. Per chunk: quote "
                "(current and quoted verbatim), paraphrase (current, not quoted), drifted (changed "
                "since the page was locked), uncited (a used page points at it but it was not "
                "read), none (a used page whose evidence was not read at all).",
            ),
        ),
        Operation(
            "cite",
            "POST",
            "/cite",
            "The provenance comment for a quote, from the lines where it stands in a raw source",
            lambda ops, a: ops.cite(a["source"], a["text"]),
            CITE_RESPONSE,
            (
                Param(
                    "source",
                    {
                        **ID,
                        "description": "the raw source, as citations spell it: raw-sources/a.md",
                    },
                    required=True,
                    http="body",
                ),
                Param(
                    "text",
                    {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE_CHARS},
                    "the exact text to cite (line breaks and runs of spaces aside)",
                    required=True,
                    http="body",
                ),
            ),
            errors=(404, 422, 503),
            tool=Tool(
                "cite_source",
                "Where a quote stands in a raw source, as a provenance comment to put after the "
                "claim it supports (`found.comment`, with the line range). When the text does not "
                "stand verbatim, `found` is null and `candidates` holds the closest lines with "
                "their text. Read-only: it changes no page.",
            ),
        ),
        Operation(
            "context",
            "GET",
            "/context",
            "A prompt-ready block for a question: the overview, then the best pages' titles, "
            "summaries, snippets and chunk IDs, packed by score until a token budget is spent",
            lambda ops, a: ops.context(
                a["query"], a["budget"], a["limit"], a["style"], a["tags"] or (), a["kind"]
            ),
            CONTEXT_RESPONSE,
            (QUERY, QUERY_WHOLE, BUDGET, LIMIT, STYLE, TAGS_TEXT, TAGS_LIST, KIND),
            errors=(503,),
            audited=True,
            tool=Tool(
                "get_context",
                "The wiki's context for a question, ready to put in a prompt and never over "
                "`budget` tokens: the overview, then the best pages (title, summary, snippet and "
                "the chunk IDs of their evidence), best first. Read the evidence behind a claim "
                "with get_chunks, passing those chunk IDs verbatim.",
            ),
        ),
        Operation(
            "status",
            "GET",
            "/status",
            "Index counts, generation, embedding progress, lanes",
            lambda ops, a: ops.status(),
            status_response(),
            inline=True,
        ),
        Operation(
            "healthz",
            "GET",
            "/healthz",
            "Liveness",
            lambda ops, a: ops.health(),
            HEALTH,
            public=True,
            inline=True,
        ),
    )
