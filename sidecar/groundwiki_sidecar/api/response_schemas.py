"""What the sidecar takes and answers, as JSON Schema, and its limits, each named once.

The operations catalogue (`catalog.py`) builds its requests and answers from these pieces;
requests are validated against them, the MCP tools take their arguments from them, and
/openapi.json publishes them. The shapes that name lanes are functions: they read the lane
registry when a document or a tool is built, so a lane registered later is in them too.
"""

from __future__ import annotations

from typing import Any

from groundwiki_sidecar import lanes

Schema = dict[str, Any]

# A query may be a whole question an agent pasted. Past this it is refused (422
# query_too_long); below it, the lanes bound their own work (terms scored, word pieces embedded)
# and the answer says what they left out. POST /search, POST /chunks/search and MCP take it.
MAX_QUERY_CHARS = 32_000
# A GET's query: its URL must fit the HTTP server's 64 KB (httptools keeps URL offsets in 16
# bits), and a character can take 12 bytes percent-encoded (4 in UTF-8), beside the tags' 12 KB.
MAX_GET_QUERY_CHARS = 4_000
MAX_LIMIT = 100  # hits per search
DEFAULT_LIMIT = 10
MAX_IDS = 100  # IDs per request
MAX_BODY_BYTES = 256 * 1024
MAX_JSON_DEPTH = 32  # requests need 3 levels; deeper bodies only exhaust the parser's recursion
MAX_KEY_CHARS = 300  # page keys, aliases and chunk IDs
MAX_TAGS_CHARS = 1000
MAX_KIND_CHARS = 100
MAX_ANSWER_CHARS = 100_000
MAX_QUOTE_CHARS = 10_000  # a quote to cite: a passage, not a document

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
BOOLEAN: Schema = {"type": "boolean"}
# As JSON Schema writes it, which the request validator and schemathesis both read.
NULLABLE_STRING: Schema = {"type": ["string", "null"]}
NULLABLE_NUMBER: Schema = {"type": ["number", "null"]}
NULLABLE_INTEGER: Schema = {"type": ["integer", "null"]}

ID: Schema = {"type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS}
# The page contract's kinds and usage modes (core/schemas/page.schema.json).
PAGE_KIND: Schema = {"type": "string", "enum": ["page", "overview"]}
USAGE_MODE: Schema = {"type": "string", "enum": ["always", "auto", "never"]}


def strings() -> Schema:
    return {"type": "array", "items": STRING}


def obj(properties: dict[str, Schema], *optional: str) -> Schema:
    """An object with these properties, all required but `optional`; more may come."""
    return {
        "type": "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
    }


def listing(items: Schema, **limits: int) -> Schema:
    return {"type": "array", "items": items, **limits}


def lane_names(kind: str | None = None) -> Schema:
    """One lane's name: those that rank `kind` (page, chunk), every lane for None."""
    return {"type": "string", "enum": list(lanes.names(kind))}


POINTER = obj(
    {
        "chunk_id": STRING,
        "source": STRING,
        "start_line": INTEGER,
        "end_line": INTEGER,
        "weight": NUMBER,
        "content_hash": STRING,
    }
)


def lane_run(kind: str) -> Schema:
    """How one lane took part in a search of `kind`."""
    return obj(
        {
            "name": lane_names(kind),
            "state": {
                "type": "string",
                "enum": list(lanes.RUN_STATES),
                "description": "ok: ranked; standby: held back while the lane it fills in for "
                "finds hits; skipped: declined the query (no words to rank by, or words too "
                "common in the wiki: see reason); the others: not ready, failed or too slow",
            },
            "reason": STRING,
            "took_ms": NUMBER,
            "weight": NUMBER,
            "measured": {
                "type": "object",
                "description": "what the lane measured of the query, which the fusion's "
                "weights adapt to: coverage and terms (lexical), similarity (semantic)",
                "additionalProperties": NUMBER,
            },
        },
        "reason",
        "took_ms",
        "weight",
        "measured",
    )


def explain(kind: str) -> Schema:
    """`explain=true`: each lane that found the hit, with its rank and share of the score."""
    return {
        "type": "object",
        "properties": {
            name: obj({"rank": INTEGER, "contribution": NUMBER}) for name in lanes.names(kind)
        },
        "additionalProperties": False,
    }


FLAGS = obj(
    {
        "always": BOOLEAN,
        "stale_since": NULLABLE_STRING,
        "archived_since": NULLABLE_STRING,
        "drifted_sources": strings(),
    }
)

# A derived summary is the page's first sentence, not what the writer says the page is for.
DERIVED = {
    "type": "boolean",
    "description": "true when the summary is the first sentence of the page, which has no "
    "summary of its own",
}

# How many pointers a page carries is the wiki's to say (its `max_pointers` option), not the
# API's: a hit carries all of them.
HIT_POINTERS = {
    **listing(POINTER),
    "description": "the chunks the page cites, heaviest first: at most the wiki's max_pointers "
    "(a groundwiki option in mkdocs.yml)",
}


SNIPPET = {
    **obj(
        {
            "id": STRING,
            "text": STRING,
            "heading_path": strings(),
            "start_line": INTEGER,
            "end_line": INTEGER,
        }
    ),
    # An object, or null for a page with an empty body (required/properties bind objects only).
    "type": ["object", "null"],
    "description": "the passage of the page's body that best matched the query (the page's "
    "first passage when none did; null for an empty body): its ID for POST /chunks, its text "
    "verbatim, the headings it sits under and its lines in the page file",
}


def page_hit() -> Schema:
    return obj(
        {
            "key": STRING,
            "title": STRING,
            "summary": STRING,
            "summary_derived": DERIVED,
            "tags": strings(),
            "url": STRING,
            "score": NUMBER,
            "lanes": listing(lane_names("page")),
            "snippet": SNIPPET,
            "pointers": HIT_POINTERS,
            "flags": FLAGS,
            "explain": explain("page"),
        },
        "explain",
    )


# What chunk search and hydration answer: raw-source chunks (`kind: source`) and passages of
# page bodies (`kind: passage`), one shape with the fields of each kind.
CHUNK = obj(
    {
        "id": STRING,
        "kind": {
            "type": "string",
            "enum": ["source", "passage"],
            "description": "source: a raw-source chunk (with `source`); passage: a passage of a "
            "page's body (with `page`, `path`, `url` and `heading_path`)",
        },
        "source": {"type": "string", "description": "the raw source, inside raw-sources"},
        "copies": {
            **strings(),
            "description": "other raw sources with the same text, searched as this one and "
            "citable at the same lines (only when there are any)",
        },
        "page": {"type": "string", "description": "the key of the page the passage is in"},
        "path": {"type": "string", "description": "the page file, relative to the wiki root"},
        "url": {"type": "string", "description": "the page's URL in the site"},
        "heading_path": {
            **strings(),
            "description": "the headings the passage sits under, outermost first",
        },
        "start_line": INTEGER,
        "end_line": INTEGER,
        "content_hash": STRING,
        "text": STRING,
    },
    "source",
    "copies",
    "page",
    "path",
    "url",
    "heading_path",
)


def chunk_hit() -> Schema:
    return obj(
        {
            **CHUNK["properties"],
            "score": NUMBER,
            "lanes": listing(lane_names("chunk")),
            "explain": explain("chunk"),
        },
        "source",
        "copies",
        "page",
        "path",
        "url",
        "heading_path",
        "explain",
    )


PAGE = obj(
    {
        "requested": STRING,
        "key": STRING,
        "via": {"type": "string", "enum": ["key", "alias", "title"]},
        "title": STRING,
        "summary": STRING,
        "summary_derived": DERIVED,
        "tags": strings(),
        "url": STRING,
        "usage_mode": USAGE_MODE,
        "kind": PAGE_KIND,
        "pointers": listing(POINTER),
        "flags": FLAGS,
        "body": STRING,
    },
    "body",
)

OVERVIEW_PAGE = obj(
    {
        "key": STRING,
        "title": STRING,
        "summary": STRING,
        "summary_derived": DERIVED,
        "url": STRING,
        "kind": PAGE_KIND,
        "usage_mode": USAGE_MODE,
    }
)

MISSING = obj({"id": STRING, "closest": strings()})

LINK = obj(
    {
        "key": NULLABLE_STRING,
        "target": STRING,
        "type": {"type": "string", "enum": ["wikilink", "link", "ref", "backlink"]},
        "title": NULLABLE_STRING,
    }
)

SOURCE = obj(
    {
        "source": STRING,
        "citation": STRING,
        "status": STRING,
        "line": INTEGER,
    }
)

CHUNK_CHECK = obj(
    {
        "id": STRING,
        "status": {
            "type": "string",
            "enum": ["quote", "paraphrase", "drifted", "uncited", "none"],
        },
        "pages": strings(),
        "detail": STRING,
    },
    "detail",
)

PAGE_CHECK = obj(
    {
        "key": STRING,
        "drilled": INTEGER,
        "pointers": INTEGER,
        "status": {"type": "string", "enum": ["drilled", "none"]},
    }
)

FRESHNESS = {
    "description": "Which state of the files the answer was computed from, and whether newer "
    "edits are failing to reach the indexes (sync: failing, with the error and since when).",
    **obj(
        {
            "generation": INTEGER,
            "synced_at": NUMBER,
            "sync": {"type": "string", "enum": ["ok", "failing"]},
            "error": STRING,
            "since": NUMBER,
            "vectors": {
                "description": "Share (0-1) of the pages, page passages and chunks this viewer "
                "sees whose vectors are computed: below 1 while embedding runs, and the semantic "
                "lane ranks only those.",
                **obj({"pages": NUMBER, "passages": NUMBER, "chunks": NUMBER}),
            },
        },
        "error",
        "since",
    ),
}


def answer(properties: dict[str, Schema], *optional: str) -> Schema:
    """A query answer: every one carries `freshness`, so an agent can tell a fresh answer from
    one the sync left behind."""
    return obj({**properties, "freshness": FRESHNESS}, *optional)


QUERY_TRUNCATED = {
    **BOOLEAN,
    "description": "true when a lane ranked on part of a long query only (see `bounded`)",
}


def bounded(kind: str) -> Schema:
    """Per lane, what it left out of a long query to bound its work."""
    return {
        "type": "object",
        "properties": {name: STRING for name in lanes.names(kind)},
        "additionalProperties": False,
        "description": "for each lane that ranked on part of a long query only, what it left "
        "out (the least weighty terms, the word pieces past the model's bound); absent when "
        "every lane read the whole query",
    }


SPREAD = {
    **obj(
        {
            "per_source": {
                **INTEGER,
                "description": "the chunks_per_source setting: at most this many chunks of one "
                "raw source or passages of one page (0: no cap)",
            },
            "capped": {
                **INTEGER,
                "description": "hits passed over because their source or page had its share; "
                "their places went to the next best hits",
            },
            "duplicates": {
                **INTEGER,
                "description": "hits cut because a better-ranked hit has the same text (the "
                "first 200 characters, whitespace aside)",
            },
        }
    ),
    "description": "what the per-source cap and the duplicate cut removed from the hits; absent "
    "when they removed nothing",
}


def brief_page_hit() -> Schema:
    """A page hit with `detail=brief`."""
    return obj(
        {
            "key": STRING,
            "title": STRING,
            "summary": STRING,
            "score": NUMBER,
            "flags": FLAGS,
            "chunk_ids": {
                **strings(),
                "description": "the snippet's passage, then the chunks the page cites: for "
                "get_chunks (POST /chunks)",
            },
            "explain": explain("page"),
        },
        "explain",
    )


def search_response(kind: str) -> Schema:
    """The answer to a search of pages (`page`) or of chunks (`chunk`)."""
    hit = {"anyOf": [page_hit(), brief_page_hit()]} if kind == "page" else chunk_hit()
    spread = {"spread": SPREAD} if kind == "chunk" else {}
    return answer(
        {
            "query": STRING,
            "hits": listing(hit),
            "lanes": listing(lane_run(kind)),
            "query_truncated": QUERY_TRUNCATED,
            "bounded": bounded(kind),
            **spread,
            "generation": INTEGER,
        },
        "bounded",
        "spread",
    )


PAGES_RESPONSE = answer(
    {"pages": listing(PAGE), "missing": listing(MISSING), "generation": INTEGER}
)
CHUNKS_RESPONSE = answer(
    {"chunks": listing(CHUNK), "missing": listing(MISSING), "generation": INTEGER}
)
LINKS_RESPONSE = answer(
    {
        "key": STRING,
        "outgoing": listing(LINK),
        "backlinks": listing(LINK),
        "sources": listing(SOURCE),
    }
)
OVERVIEW_RESPONSE = answer({"pages": listing(OVERVIEW_PAGE), "generation": INTEGER})
VERIFY_RESPONSE = answer(
    {"chunks": listing(CHUNK_CHECK), "pages": listing(PAGE_CHECK), "missing": listing(MISSING)}
)

CONTEXT_HIT = obj(
    {
        "key": STRING,
        "title": STRING,
        "score": NUMBER,
        "chunk_ids": {
            **strings(),
            "description": "the evidence the block points at for this page, for get_chunks",
        },
    }
)
CONTEXT_RESPONSE = answer(
    {
        "query": STRING,
        "style": {"type": "string", "enum": ["markdown", "toon", "json"]},
        "budget": INTEGER,
        "tokens": {
            **INTEGER,
            "description": "what the block costs, in the embedding model's word pieces: never "
            "over the budget",
        },
        "block": {**STRING, "description": "the context, ready to put in a prompt"},
        "overview": {**strings(), "description": "the overview pages in the block, by key"},
        "hits": {**listing(CONTEXT_HIT), "description": "the pages in the block, best first"},
        "left_out": {
            **INTEGER,
            "description": "hits the search found that did not fit in the budget",
        },
        "generation": INTEGER,
    }
)

CITE_PLACE = obj(
    {
        "citation": {**STRING, "description": "as a citation spells it: raw-sources/a.md#L3-L5"},
        "comment": {**STRING, "description": "the provenance comment to paste after the claim"},
        "start": INTEGER,
        "end": INTEGER,
        "text": {**STRING, "description": "the cited lines verbatim"},
        "closeness": {**NUMBER, "description": "1.0 for the quote itself, else 0 to 1"},
    }
)

CITE_RESPONSE = answer(
    {
        "source": STRING,
        "found": {
            **CITE_PLACE,
            "type": ["object", "null"],
            "description": "where the quote stands verbatim (the first place); null if nowhere",
        },
        "occurrences": INTEGER,
        "candidates": {
            **listing(CITE_PLACE),
            "description": "the closest lines when the quote does not stand verbatim",
        },
        "generation": INTEGER,
    }
)

# How far a start has come (base/startup.py): a share, never counts of files.
STARTING = {
    "description": "how far the start has come, while `warming`; null after",
    "type": ["object", "null"],
    "properties": {
        "stage": STRING,
        "doing": STRING,
        "percent": {"type": "number"},
        "since": {"type": "number"},
        "seconds": {"type": "number"},
    },
}
WARMING = {
    "type": "boolean",
    "description": "true while the first sync is still indexing: pages are searched first, "
    "passages and raw-source chunks join as they are in",
}

HEALTH = obj(
    {
        "ok": {"type": "boolean", "description": "false until the first sync is done"},
        "generation": INTEGER,
        "sync": {"type": "string", "enum": ["ok", "failing"]},
        "warming": WARMING,
        "starting": STARTING,
    },
    "warming",
    "starting",
)

_WORK = obj(
    {
        "state": {"type": "string", "enum": ["ok", "failing"]},
        "error": STRING,
        "since": NULLABLE_NUMBER,
        "last_ok": NULLABLE_NUMBER,
    }
)


# The sync's health, and whether one is running: since when (epoch seconds), on how many changed
# page files, and how many large ones are still to be indexed after the rest (null for a viewer
# of a scoped wiki: they would count other users' edits).
_SYNC = obj(
    {
        **_WORK["properties"],
        "running": BOOLEAN,
        "running_since": NULLABLE_NUMBER,
        "pages": NULLABLE_INTEGER,
        "following": NULLABLE_INTEGER,
    }
)


_LANE_STATE = obj({"state": {"type": "string", "enum": list(lanes.LANE_STATES)}, "reason": STRING})
LANE_STATUS = obj(
    {
        **_LANE_STATE["properties"],
        "kinds": {
            "description": "per kind the lane ranks, the state a search of that kind finds",
            "type": "object",
            "properties": {kind: _LANE_STATE for kind in lanes.KINDS},
            "additionalProperties": False,
        },
    }
)


def status_response() -> Schema:
    return obj(
        {
            "generation": INTEGER,
            "pages": INTEGER,
            "chunks": INTEGER,
            "page_vectors": INTEGER,
            "chunk_vectors": INTEGER,
            "passages": INTEGER,
            "passage_vectors": INTEGER,
            "lexical_docs": {"type": "object", "additionalProperties": INTEGER},
            "embedding_pending": INTEGER,
            "texts_embedded": INTEGER,
            "embedding_texts_per_s": NULLABLE_NUMBER,
            "embedding_eta_s": NULLABLE_NUMBER,
            "model": STRING,
            "last_sync": NULLABLE_NUMBER,
            "last_sync_seconds": NULLABLE_NUMBER,
            "pending_events": INTEGER,
            "watcher": STRING,
            "watcher_rearmed": INTEGER,
            "lanes": obj({name: LANE_STATUS for name in lanes.names()}),
            "sync": _SYNC,
            "embedding": _WORK,
            # records, lost: null in a scoped wiki (they count every viewer's requests)
            "audit": obj(
                {
                    "state": {"type": "string", "enum": ["off", "ok", "failing", "starting"]},
                    "error": STRING,
                    "records": NULLABLE_INTEGER,
                    "lost": NULLABLE_INTEGER,
                }
            ),
            "tokens": obj(
                {
                    "state": {"type": "string", "enum": ["off", "ok", "failing", "starting"]},
                    "error": STRING,
                }
            ),
            # raw-source chunks cut but not indexed as junk: total, sources, and per kind
            "skipped_chunks": {"type": "object", "additionalProperties": INTEGER},
            "scope": STRING,  # whose view the answers are from: global, or user:<id>
            "warming": WARMING,
            "starting": STARTING,
        },
        "warming",
        "starting",
    )


ERROR = obj({"error": STRING, "message": STRING})


def _non_null(schema: Schema) -> Schema:
    """A schema that may be null, as its value when it is not (the named shape)."""
    kinds = [kind for kind in schema["type"] if kind != "null"]
    found = {key: value for key, value in schema.items() if key != "description"}
    return {**found, "type": kinds[0]}


# The shapes the OpenAPI document names under components/schemas (openapi.py): each is written
# inline wherever it is used, and the document refers to it by this name instead.
NAMED: dict[str, Schema] = {
    "Pointer": POINTER,
    "Flags": FLAGS,
    "Snippet": _non_null(SNIPPET),
    "Chunk": CHUNK,
    "Page": PAGE,
    "OverviewPage": OVERVIEW_PAGE,
    "Missing": MISSING,
    "Link": LINK,
    "CitedSource": SOURCE,
    "ChunkCheck": CHUNK_CHECK,
    "PageCheck": PAGE_CHECK,
    "Freshness": FRESHNESS,
    "CitePlace": CITE_PLACE,
    "ContextHit": CONTEXT_HIT,
    "Starting": _non_null(STARTING),
    "Health": HEALTH,
    "WorkHealth": _WORK,
    "SyncHealth": _SYNC,
    "LaneStatus": LANE_STATUS,
    "Error": ERROR,
}
