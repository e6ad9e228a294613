"""What the sidecar's operations take: each parameter declared once, with its JSON Schema, how
the text of an HTTP query or path parameter becomes its value, and the statuses that can fail
with; and `OperationError`, for what a caller got wrong. `catalog.py` puts them together into
operations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from groundwiki.core.config.errors import GroundwikiError

from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.response_schemas import (
    BOOLEAN,
    DEFAULT_LIMIT,
    ID,
    MAX_GET_QUERY_CHARS,
    MAX_IDS,
    MAX_KEY_CHARS,
    MAX_KIND_CHARS,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MAX_TAGS_CHARS,
    PAGE_KIND,
    Schema,
    lane_names,
)

Args = Mapping[str, Any]
_SAME: Any = object()


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
    alias_of: str = ""  # another spelling of that parameter (a body's `q` for `query`)
    example: Any = None  # for the OpenAPI document: a value that answers
    # The MCP tool's default, when an agent's prompt is better served by another than HTTP's
    # (a brief, compact answer); `_SAME` for the same default.
    tool_default: Any = field(default_factory=lambda: _SAME)

    @property
    def default_for_tool(self) -> Any:
        return self.default if self.tool_default is _SAME else self.tool_default

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


def given_query(args: Args) -> str:
    """A body's query, spelled `query` or `q` (as the GET spells it), which its schema checks
    for length but not for words."""
    text, short = args.get("query"), args.get("q")
    if text is not None and short is not None and text != short:
        raise OperationError(
            422, "invalid_request", "give the query once, as `query` or as `q`, not both"
        )
    text = text if text is not None else short
    if not isinstance(text, str) or not text.strip():
        raise OperationError(400, "missing_query", "give the query as the body's `query`")
    return text


def _integer(name: str, least: int, most: int, default: int) -> Callable[[str | None], int]:
    def decode(raw: str | None) -> int:
        if raw is None:
            return default
        message = f"{name} must be an integer from {least} to {most}"
        try:
            value = int(raw)
        except ValueError:
            raise OperationError(400, f"bad_{name}", message) from None
        if not least <= value <= most:
            raise OperationError(422, f"bad_{name}", message)
        return value

    return decode


_limit = _integer("limit", 1, MAX_LIMIT, DEFAULT_LIMIT)


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
    value = _bounded("kind", MAX_KIND_CHARS)(raw) or None
    if value is not None and value not in PAGE_KIND["enum"]:
        raise OperationError(
            422, "bad_kind", f"kind must be one of {', '.join(PAGE_KIND['enum'])}, not {value!r}"
        )
    return value


def _choice(name: str, allowed: tuple[str, ...], default: str) -> Callable[[str | None], str]:
    def decode(raw: str | None) -> str:
        value = raw or default
        if value not in allowed:
            shown = value if len(value) <= 40 else value[:40] + "..."
            raise OperationError(
                422, f"bad_{name}", f"{name} must be one of {', '.join(allowed)}, not {shown!r}"
            )
        return value

    return decode


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
    example="how does drift work",
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
    decode=_flag("explain"),
    statuses=(400,),
)
# Tags are one argument with two spellings: comma-separated text over HTTP, a list over MCP.
TAGS_TEXT = Param(
    "tags",
    {"type": "string", "maxLength": MAX_TAGS_CHARS},
    "comma-separated tags; a hit carries every one of them (all, not any)",
    default=(),
    tool=False,
    decode=_tags,
    statuses=(422,),
)
TAGS_LIST = Param(
    "tags",
    {"type": "array", "items": {"type": "string", "maxLength": MAX_TAGS_CHARS}},
    "a hit carries every one of these tags (all, not any)",
    http=None,
)
KIND = Param(
    "kind",
    PAGE_KIND,
    "only pages of this kind: overview (the wiki's top-level summaries) or page",
    decode=_kind,
    statuses=(422,),
)
# How an answer is written: the same fields each time. `json` is the default; `compact` leaves
# out what is empty (null, false, "", [], {}); `toon` is token-oriented object notation, a table
# per list of like objects, which costs an agent fewer tokens than either.
FORMATS = ("json", "compact", "toon")
FORMAT = Param(
    "format",
    {"type": "string", "enum": list(FORMATS)},
    "how the answer is written: json, compact (JSON without its empty fields) or toon "
    "(token-oriented object notation); the same fields in each. Default json over HTTP; "
    "compact over MCP, whose text is then a short list (toon: the whole answer as text)",
    default="json",
    tool_default="compact",
    decode=_choice("format", FORMATS, "json"),
    statuses=(422,),
)
# How much of each page a search hit carries: everything (`full`), or what picks a page and
# leads to its text (`brief`: key, title, summary, score, flags and the chunk IDs of its snippet
# and pointers, which get_pages and get_chunks expand).
DETAILS = ("full", "brief")
DETAIL = Param(
    "detail",
    {"type": "string", "enum": list(DETAILS)},
    "full: every field of each hit (url, tags, snippet text, pointers with lines); brief: key, "
    "title, summary, score, flags and chunk_ids (the snippet's passage first), to expand with "
    "get_pages and get_chunks. Default full over HTTP, brief over MCP",
    default="full",
    tool_default="brief",
    decode=_choice("detail", DETAILS, "full"),
    statuses=(422,),
)

# A context block's budget, in the embedding model's word pieces (what `tokens` counts).
MIN_BUDGET, DEFAULT_BUDGET, MAX_BUDGET = 50, 2000, 32_000
BUDGET = Param(
    "budget",
    {"type": "integer", "minimum": MIN_BUDGET, "maximum": MAX_BUDGET},
    "the most tokens the block may cost (word pieces of the embedding model's tokenizer)",
    default=DEFAULT_BUDGET,
    decode=_integer("budget", MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET),
    statuses=(400, 422),
)
STYLES = ("markdown", "toon", "json")
STYLE = Param(
    "style",
    {"type": "string", "enum": list(STYLES)},
    "how the block is written: markdown, toon (token-oriented object notation: the most hits "
    "per token) or json",
    default="markdown",
    decode=_choice("style", STYLES, "markdown"),
    statuses=(422,),
)

KEY = Param(
    "key", ID, "a page key or alias", required=True, http="path", decode=_key, statuses=(422,)
)


def search_body(kind: str) -> tuple[Param, ...]:
    """A search's parameters as a JSON body (POST): those of the GET, tags and lanes as
    arrays; no URL limit, so any query up to MAX_QUERY_CHARS in any script."""
    found = [
        replace(
            QUERY_WHOLE,
            http="body",
            too_long="query_too_long",
            statuses=(400,),
            example="how does drift work",
        ),
        Param(
            "q",
            QUERY_WHOLE.schema,
            "the same as `query`, as the GET spells it: give one of the two",
            http="body",
            tool=False,
            too_long="query_too_long",
            alias_of="query",
        ),
        Param("limit", LIMIT.schema, LIMIT.description, default=DEFAULT_LIMIT, http="body"),
        Param("explain", BOOLEAN, EXPLAIN.description, default=False, http="body"),
    ]
    if kind == "page":
        found += [
            Param(
                "tags",
                TAGS_LIST.schema,
                TAGS_LIST.description,
                default=(),
                http="body",
            ),
            Param("kind", KIND.schema, KIND.description, http="body"),
            Param("detail", DETAIL.schema, DETAIL.description, default="full", http="body"),
        ]
    lanes_ = lanes_param(kind)
    found.append(Param("lanes", {**lanes_.schema, "minItems": 1}, lanes_.description, http="body"))
    return tuple(found)


def lanes_param(kind: str) -> Param:
    return Param(
        "lanes",
        {"type": "array", "items": lane_names(kind), "minItems": 1},
        "only these lanes (to compare them; comma-separated in a URL); default every lane: "
        + "; ".join(f"{name}: {lanes.get(name).doc}" for name in lanes.names(kind)),
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


def id_list(name: str, description: str) -> Param:
    return Param(
        name, {"type": "array", "items": ID, "maxItems": MAX_IDS}, description, http="body"
    )
