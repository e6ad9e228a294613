"""Every operation of the sidecar, declared once: its name, HTTP method and path, parameters
with their JSON Schema, answer, error codes, handler and MCP exposure.

Everything else is derived from this list: the HTTP routes (`api.py`), the OpenAPI document
(`schemas.openapi`), the MCP tools (`mcp_tools.py`) and the endpoints that need no bearer token
(`app.py`). Adding an operation is one `Operation` in `operations()` (plus a method of
`Operations` when it needs logic of its own); its tests prove it on each surface. The list is
built when a surface is (the app, the document, the tools), from the lane registry as it is
then, so a lane registered later is in the `lanes` enums and the tool descriptions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from groundwiki.core.config.errors import GroundwikiError

from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.response_schemas import (
    BOOLEAN,
    CHUNKS_RESPONSE,
    CITE_RESPONSE,
    DEFAULT_LIMIT,
    HEALTH,
    ID,
    LINKS_RESPONSE,
    MAX_ANSWER_CHARS,
    MAX_GET_QUERY_CHARS,
    MAX_IDS,
    MAX_KEY_CHARS,
    MAX_KIND_CHARS,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MAX_QUOTE_CHARS,
    MAX_TAGS_CHARS,
    OVERVIEW_RESPONSE,
    PAGES_RESPONSE,
    VERIFY_RESPONSE,
    Schema,
    lane_names,
    search_response,
    status_response,
)

if TYPE_CHECKING:
    from groundwiki_sidecar.api.operations import Operations

Args = Mapping[str, Any]
Answer = dict[str, Any]


class OperationError(GroundwikiError):
    """What a caller got wrong (an unknown page, a query too long, the index not built yet):
    HTTP answers it with `status` and `{"error": code, "message": message, **extra}`, MCP with
    a tool error carrying the message."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


# --- parameters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One argument of an operation. `name` is what the handler reads, the MCP argument and the
    JSON body field; `schema` is its JSON Schema on the surfaces that take it; `decode` turns
    the text of a query or path parameter into the value, raising `OperationError` with one of
    `statuses`."""

    name: str
    schema: Schema
    description: str = ""
    required: bool = False
    default: Any = None
    http: Literal["query", "path", "body"] | None = "query"
    http_name: str = ""  # the query parameter's name, when it is not `name`
    tool: bool = True  # an argument of the operation's MCP tool
    decode: Callable[[str | None], Any] | None = None
    statuses: tuple[int, ...] = ()
    style: Mapping[str, Any] = field(default_factory=dict)  # OpenAPI serialisation
    # A body field's error code when it is longer than its schema's maxLength (422, naming the
    # limit), as its query-parameter twin answers; "" for the body's generic invalid_request.
    too_long: str = ""

    @property
    def wire_name(self) -> str:
        return self.http_name or self.name


def _query_text(raw: str | None) -> str:
    if raw is None or not raw.strip():
        raise OperationError(400, "missing_query", "give the query as ?q=...")
    if len(raw) > MAX_GET_QUERY_CHARS:
        message = (
            f"q is at most {MAX_GET_QUERY_CHARS} characters over GET (a URL must fit in 64 KB); "
            f"this one has {len(raw)}: send it as the `query` of a JSON body by POST to the same "
            f"path, which takes up to {MAX_QUERY_CHARS}"
        )
        raise OperationError(422, "query_too_long", message)
    return raw


def _given_query(args: Args) -> str:
    """A body's query, which its schema checks for length but not for words."""
    text: str = args["query"]
    if not text.strip():
        raise OperationError(400, "missing_query", "give the query as the body's `query`")
    return text


def _limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    message = f"limit must be an integer from 1 to {MAX_LIMIT}"
    try:
        value = int(raw)
    except ValueError:
        raise OperationError(400, "bad_limit", message) from None
    if not 1 <= value <= MAX_LIMIT:
        raise OperationError(422, "bad_limit", message)
    return value


def _bounded(name: str, limit: int) -> Callable[[str | None], str]:
    def decode(raw: str | None) -> str:
        value = raw or ""
        if len(value) > limit:
            raise OperationError(422, f"bad_{name}", f"{name} is at most {limit} characters")
        return value

    return decode


def _flag(name: str) -> Callable[[str | None], bool]:
    def decode(raw: str | None) -> bool:
        value = (raw if raw is not None else "false").lower()
        if value not in {"true", "false", "1", "0", "yes", "no", ""}:
            raise OperationError(400, f"bad_{name}", f"{name} must be true or false")
        return value in {"true", "1", "yes"}

    return decode


def _tags(raw: str | None) -> tuple[str, ...]:
    text = _bounded("tags", MAX_TAGS_CHARS)(raw)
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _kind(raw: str | None) -> str | None:
    return _bounded("kind", MAX_KIND_CHARS)(raw) or None


def _lanes(kind: str) -> Callable[[str | None], tuple[str, ...] | None]:
    """`lanes=lexical,semantic`: only these lanes (to compare them); None: every lane."""

    def decode(raw: str | None) -> tuple[str, ...] | None:
        if not raw:
            return None
        allowed = lanes.names(kind)
        wanted = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
        if not wanted or any(lane not in allowed for lane in wanted):
            raise OperationError(
                400, "bad_lanes", f"lanes must be a comma-separated subset of {', '.join(allowed)}"
            )
        return wanted

    return decode


def _key(raw: str | None) -> str:
    key = raw or ""
    if len(key) > MAX_KEY_CHARS:
        raise OperationError(
            422, "invalid_request", f"page keys are at most {MAX_KEY_CHARS} characters"
        )
    return key


QUERY_TEXT = (
    "what to look for: a few words or a whole question (a long one is ranked on its most "
    "telling terms and first word pieces, and the answer says so under `bounded`)"
)
QUERY = Param(
    "query",
    {"type": "string", "minLength": 1, "maxLength": MAX_GET_QUERY_CHARS},
    QUERY_TEXT + f"; over GET at most {MAX_GET_QUERY_CHARS} characters, by POST {MAX_QUERY_CHARS}",
    required=True,
    http_name="q",
    tool=False,
    decode=_query_text,
    statuses=(400, 422),
)
# The query as MCP and a POST body take it: no URL to fit.
QUERY_WHOLE = Param(
    "query",
    {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
    QUERY_TEXT,
    required=True,
    http=None,
)
LIMIT = Param(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
    "how many hits",
    default=DEFAULT_LIMIT,
    decode=_limit,
    statuses=(400, 422),
)
EXPLAIN = Param(
    "explain",
    BOOLEAN,
    "add each lane's rank and share of the score to every hit",
    default=False,
    tool=False,
    decode=_flag("explain"),
    statuses=(400,),
)
# Tags are one argument with two spellings: comma-separated text over HTTP, a list over MCP.
TAGS_TEXT = Param(
    "tags",
    {"type": "string", "maxLength": MAX_TAGS_CHARS},
    "comma-separated: every one must be on the page",
    default=(),
    tool=False,
    decode=_tags,
    statuses=(422,),
)
TAGS_LIST = Param("tags", {"type": "array", "items": {"type": "string"}}, http=None)
KIND = Param(
    "kind",
    {"type": "string", "maxLength": MAX_KIND_CHARS},
    "only pages of this kind",
    tool=False,
    decode=_kind,
    statuses=(422,),
)

KEY = Param(
    "key", ID, "a page key or alias", required=True, http="path", decode=_key, statuses=(422,)
)


def search_body(kind: str) -> tuple[Param, ...]:
    """A search's parameters as a JSON body (POST): those of the GET, tags and lanes as
    arrays; no URL limit, so any query up to MAX_QUERY_CHARS in any script."""
    found = [
        replace(QUERY_WHOLE, http="body", too_long="query_too_long", statuses=(400,)),
        Param("limit", LIMIT.schema, LIMIT.description, default=DEFAULT_LIMIT, http="body"),
        Param("explain", BOOLEAN, EXPLAIN.description, default=False, http="body"),
    ]
    if kind == "page":
        found += [
            Param(
                "tags",
                {"type": "array", "items": {"type": "string", "maxLength": MAX_TAGS_CHARS}},
                "every one must be on the page",
                default=(),
                http="body",
            ),
            Param("kind", KIND.schema, KIND.description, http="body"),
        ]
    lanes_ = lanes_param(kind)
    found.append(Param("lanes", {**lanes_.schema, "minItems": 1}, lanes_.description, http="body"))
    return tuple(found)


def _spelled(names: tuple[str, ...]) -> str:
    """`a, b and c`, as a description reads them."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def lanes_param(kind: str) -> Param:
    return Param(
        "lanes",
        {"type": "array", "items": lane_names(kind)},
        "only these lanes, comma-separated (to compare them); default every lane: "
        + "; ".join(f"{name}: {lanes.get(name).doc}" for name in lanes.names(kind)),
        tool=False,
        decode=_lanes(kind),
        statuses=(400,),
        style={"style": "form", "explode": False},
    )


def ids(description: str, **limits: int) -> Param:
    return Param(
        "ids",
        {"type": "array", "items": ID, **limits},
        description,
        required=True,
        http="body",
    )


def id_list(name: str) -> Param:
    return Param(name, {"type": "array", "items": ID, "maxItems": MAX_IDS}, http="body")


# --- operations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    """An operation's MCP tool: its name, and the description an agent reads to pick it."""

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

    @property
    def body(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.http == "body")

    def request_schema(self) -> Schema | None:
        """The JSON body's schema, from the body parameters; None without any."""
        if not self.body:
            return None
        return {
            "type": "object",
            "properties": {p.name: _described(p) for p in self.body},
            "required": [p.name for p in self.body if p.required],
            "additionalProperties": False,
        }

    def statuses(self) -> list[int]:
        """Every error status it may answer: its own, its parameters', the body's (400 bad
        JSON, 422 invalid), 401 without the token, and the three every route gives: 403 for a
        browser page from a foreign Origin, 413 for a body over MAX_BODY_BYTES (a GET's too),
        421 for a Host the sidecar does not serve (DNS rebinding)."""
        found = {*self.errors, 403, 413, 421}
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


def _described(param: Param) -> Schema:
    if not param.description:
        return dict(param.schema)
    return {**param.schema, "description": param.description}


def operations() -> tuple[Operation, ...]:
    """Every operation, as the lane registry stands now."""
    return (
        Operation(
            "search",
            "GET",
            "/search",
            "Hybrid search over wiki pages",
            lambda ops, a: ops.search(
                a["query"], a["limit"], a["tags"] or (), a["kind"], a["explain"], a["lanes"]
            ),
            search_response("page"),
            (QUERY, QUERY_WHOLE, LIMIT, EXPLAIN, TAGS_TEXT, TAGS_LIST, KIND, lanes_param("page")),
            errors=(503,),
            audited=True,
            tool=Tool(
                "search_wiki",
                f"Search the wiki's pages (hybrid: {_spelled(lanes.names('page'))} lanes). "
                "Each hit has a key, title, summary, snippet (its best-matching passage), url, "
                "flags (always, stale, archived, drifted sources) and pointers (as many as the wiki's max_pointers allows): chunk IDs "
                "with source and lines. To read the evidence, pass those chunk IDs, copied "
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
            lambda ops, a: ops.search(
                _given_query(a), a["limit"], a["tags"], a["kind"], a["explain"], a["lanes"]
            ),
            search_response("page"),
            search_body("page"),
            errors=(503,),
            audited=True,
        ),
        Operation(
            "search_chunks_by_body",
            "POST",
            "/chunks/search",
            "Hybrid search over raw-source chunks and page passages, the parameters as JSON (for "
            "long questions)",
            lambda ops, a: ops.search_chunks(_given_query(a), a["limit"], a["explain"], a["lanes"]),
            search_response("chunk"),
            search_body("chunk"),
            errors=(503,),
            audited=True,
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
                Param("include_body", BOOLEAN, default=False, http="body"),
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
                    required=True,
                    http="body",
                ),
                id_list("chunks"),
                id_list("pages"),
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
