"""Request and response shapes of the HTTP API, declared once as JSON Schema: requests are
validated against them and /openapi.json is built from them."""

from __future__ import annotations

from typing import Any

MAX_IDS = 100
MAX_BODY_BYTES = 256 * 1024
MAX_JSON_DEPTH = 32  # requests need 3 levels; deeper bodies only exhaust the parser's recursion
MAX_KEY_CHARS = 300  # page keys, aliases and chunk IDs
MAX_TAGS_CHARS = 1000
MAX_KIND_CHARS = 100
MAX_ANSWER_CHARS = 100_000

_string_list = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS},
}

POINTER = {
    "type": "object",
    "properties": {
        "chunk_id": {"type": "string"},
        "source": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "weight": {"type": "number"},
        "content_hash": {"type": "string"},
    },
    "required": ["chunk_id", "source", "start_line", "end_line", "weight", "content_hash"],
}

LANE = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "enum": ["lexical", "semantic", "token"]},
        "state": {
            "type": "string",
            "enum": ["ok", "standby", "unavailable", "warming", "failed", "timeout"],
        },
        "reason": {"type": "string"},
        "took_ms": {"type": "number"},
    },
    "required": ["name", "state"],
}

FLAGS = {
    "type": "object",
    "properties": {
        "always": {"type": "boolean"},
        "stale_since": {"type": ["string", "null"]},
        "archived_since": {"type": ["string", "null"]},
        "drifted_sources": _string_list,
    },
    "required": ["always", "stale_since", "archived_since", "drifted_sources"],
}

# A derived summary is the page's first sentence, not what the writer says the page is for.
DERIVED = {
    "type": "boolean",
    "description": "true when the summary is the first sentence of the page, which has no "
    "summary of its own",
}

PAGE_HIT = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "summary_derived": DERIVED,
        "tags": _string_list,
        "url": {"type": "string"},
        "score": {"type": "number"},
        "lanes": _string_list,
        "pointers": {"type": "array", "items": POINTER, "maxItems": 5},
        "flags": FLAGS,
        "explain": {"type": "object"},
    },
    "required": [
        "key",
        "title",
        "summary",
        "summary_derived",
        "tags",
        "url",
        "score",
        "lanes",
        "pointers",
        "flags",
    ],
}

CHUNK = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "source": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "content_hash": {"type": "string"},
        "text": {"type": "string"},
    },
    "required": ["id", "source", "start_line", "end_line", "content_hash", "text"],
}

CHUNK_HIT = {
    "type": "object",
    "properties": {**CHUNK["properties"], "score": {"type": "number"}, "lanes": _string_list},
    "required": [*CHUNK["required"], "score", "lanes"],
}

SEARCH_RESPONSE = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "hits": {"type": "array", "items": PAGE_HIT},
        "lanes": {"type": "array", "items": LANE},
        "generation": {"type": "integer"},
    },
    "required": ["query", "hits", "lanes", "generation"],
}

CHUNK_SEARCH_RESPONSE = {
    **SEARCH_RESPONSE,
    "properties": {**SEARCH_RESPONSE["properties"], "hits": {"type": "array", "items": CHUNK_HIT}},
}

PAGES_REQUEST = {
    "type": "object",
    "properties": {
        "ids": {**_string_list, "minItems": 1, "maxItems": MAX_IDS},
        "include_body": {"type": "boolean"},
    },
    "required": ["ids"],
    "additionalProperties": False,
}

PAGE = {
    "type": "object",
    "properties": {
        "requested": {"type": "string"},
        "key": {"type": "string"},
        "via": {"type": "string", "enum": ["key", "alias", "title"]},
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "summary_derived": DERIVED,
        "tags": _string_list,
        "url": {"type": "string"},
        "usage_mode": {"type": "string"},
        "kind": {"type": "string"},
        "pointers": {"type": "array", "items": POINTER},
        "flags": FLAGS,
        "body": {"type": "string"},
    },
    "required": [
        "requested",
        "key",
        "via",
        "title",
        "summary",
        "summary_derived",
        "tags",
        "url",
        "pointers",
        "flags",
    ],
}

MISSING = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "closest": _string_list},
    "required": ["id", "closest"],
}

PAGES_RESPONSE = {
    "type": "object",
    "properties": {
        "pages": {"type": "array", "items": PAGE},
        "missing": {"type": "array", "items": MISSING},
        "generation": {"type": "integer"},
    },
    "required": ["pages", "missing", "generation"],
}

CHUNKS_REQUEST = {
    "type": "object",
    "properties": {"ids": {**_string_list, "minItems": 1, "maxItems": MAX_IDS}},
    "required": ["ids"],
    "additionalProperties": False,
}

CHUNKS_RESPONSE = {
    "type": "object",
    "properties": {
        "chunks": {"type": "array", "items": CHUNK},
        "missing": {"type": "array", "items": MISSING},
        "generation": {"type": "integer"},
    },
    "required": ["chunks", "missing", "generation"],
}

LINK = {
    "type": "object",
    "properties": {
        "key": {"type": ["string", "null"]},
        "target": {"type": "string"},
        "type": {"type": "string"},
        "title": {"type": ["string", "null"]},
    },
    "required": ["key", "target", "type"],
}

LINKS_RESPONSE = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "outgoing": {"type": "array", "items": LINK},
        "backlinks": {"type": "array", "items": LINK},
        "sources": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["key", "outgoing", "backlinks", "sources"],
}

VERIFY_REQUEST = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": MAX_ANSWER_CHARS},
        "chunks": {**_string_list, "maxItems": MAX_IDS},
        "pages": {**_string_list, "maxItems": MAX_IDS},
    },
    "required": ["answer"],
    "additionalProperties": False,
}

VERIFY_RESPONSE = {
    "type": "object",
    "properties": {
        "chunks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "status": {
                        "type": "string",
                        "enum": ["quote", "paraphrase", "drifted", "uncited", "none"],
                    },
                    "pages": _string_list,
                    "detail": {"type": "string"},
                },
                "required": ["id", "status", "pages"],
            },
        },
        "pages": {"type": "array", "items": {"type": "object"}},
        "missing": {"type": "array", "items": MISSING},
    },
    "required": ["chunks", "pages", "missing"],
}

FRESHNESS = {
    "description": "Which state of the files the answer was computed from, and whether newer "
    "edits are failing to reach the indexes (sync: failing, with the error and since when).",
    "type": "object",
    "properties": {
        "generation": {"type": "integer"},
        "synced_at": {"type": "number"},
        "sync": {"type": "string", "enum": ["ok", "failing"]},
        "error": {"type": "string"},
        "since": {"type": "number"},
    },
    "required": ["generation", "synced_at", "sync"],
}

# Every query answer carries it, so an agent can tell a fresh answer from one the sync left behind.
for _answer in (
    SEARCH_RESPONSE,
    CHUNK_SEARCH_RESPONSE,
    PAGES_RESPONSE,
    CHUNKS_RESPONSE,
    LINKS_RESPONSE,
    VERIFY_RESPONSE,
):
    _answer["properties"] = {**_answer["properties"], "freshness": FRESHNESS}
    _answer["required"] = [*_answer["required"], "freshness"]

ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
    "required": ["error", "message"],
}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    """Each route's own error codes, and the ones every route gives: 403 for a browser page from
    a foreign Origin, 421 for a Host the sidecar does not serve (DNS rebinding)."""
    return {str(code): {"description": "error", **_json(ERROR)} for code in (*codes, 403, 421)}


def _query(name: str, schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": schema}


def openapi(version: str) -> dict[str, Any]:
    search_params = [
        _query("q", {"type": "string", "minLength": 1, "maxLength": 1000}, required=True),
        _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
    ]
    return {
        "openapi": "3.0.3",
        "info": {"title": "groundwiki sidecar", "version": version},
        "paths": {
            "/search": {
                "get": {
                    "summary": "Hybrid search over wiki pages",
                    "parameters": [
                        *search_params,
                        _query("tags", {"type": "string", "maxLength": MAX_TAGS_CHARS}),
                        _query("kind", {"type": "string", "maxLength": MAX_KIND_CHARS}),
                        _query("explain", {"type": "boolean"}),
                        _query("lanes", {"type": "string", "maxLength": 100}),
                    ],
                    "responses": {"200": _json(SEARCH_RESPONSE), **_errors(400, 401, 422, 503)},
                }
            },
            "/chunks/search": {
                "get": {
                    "summary": "Hybrid search over raw-source chunks",
                    "parameters": [
                        *search_params,
                        _query("explain", {"type": "boolean"}),
                        _query("lanes", {"type": "string", "maxLength": 100}),
                    ],
                    "responses": {
                        "200": _json(CHUNK_SEARCH_RESPONSE),
                        **_errors(400, 401, 422, 503),
                    },
                }
            },
            "/pages": {
                "post": {
                    "summary": "Pages by key or alias",
                    "requestBody": {"required": True, **_json(PAGES_REQUEST)},
                    "responses": {
                        "200": _json(PAGES_RESPONSE),
                        **_errors(400, 401, 404, 413, 422, 503),
                    },
                }
            },
            "/chunks": {
                "post": {
                    "summary": "Chunks verbatim by ID; unknown IDs are listed under missing",
                    "requestBody": {"required": True, **_json(CHUNKS_REQUEST)},
                    "responses": {
                        "200": _json(CHUNKS_RESPONSE),
                        **_errors(400, 401, 404, 413, 422, 503),
                    },
                }
            },
            "/pages/{key}/links": {
                "get": {
                    "summary": "Outgoing links, backlinks and cited sources of a page",
                    "parameters": [
                        {
                            "name": "key",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string", "maxLength": MAX_KEY_CHARS},
                        }
                    ],
                    "responses": {"200": _json(LINKS_RESPONSE), **_errors(401, 404, 422, 503)},
                }
            },
            "/overview": {
                "get": {
                    "summary": "Overview pages and pages marked usage_mode: always",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {"freshness": FRESHNESS},
                                "required": ["freshness"],
                            }
                        ),
                        **_errors(401, 503),
                    },
                }
            },
            "/verify": {
                "post": {
                    "summary": "Check an answer against the chunks and pages it used",
                    "requestBody": {"required": True, **_json(VERIFY_REQUEST)},
                    "responses": {
                        "200": _json(VERIFY_RESPONSE),
                        **_errors(400, 401, 413, 422, 503),
                    },
                }
            },
            "/status": {
                "get": {
                    "summary": "Index counts, generation, embedding progress, lanes",
                    "responses": {"200": _json({"type": "object"}), **_errors(401)},
                }
            },
            "/healthz": {
                "get": {
                    "summary": "Liveness",
                    "responses": {"200": _json({"type": "object"}), **_errors()},
                }
            },
        },
    }
