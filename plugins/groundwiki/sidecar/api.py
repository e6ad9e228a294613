"""The query endpoints over HTTP: search, hydration, drill-down, links, overview, verification.

Parameters are checked here and answered by `operations`, which the MCP tools share. Every error
is JSON with a stable `error` code and a message; bad input is a 4xx, never a 500. Operations
run in Starlette's thread pool, so a slow query does not hold the event loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import jsonschema
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import __version__
from . import schemas
from .app import JSONAnswer, error
from .operations import OperationError, Operations
from .query import LANES, MAX_LIMIT, MAX_QUERY_CHARS

DEFAULT_LIMIT = 10


def _query_text(request: Request) -> str:
    text = request.query_params.get("q", "")
    if not text.strip():
        raise OperationError(400, "missing_query", "give the query as ?q=...")
    if len(text) > MAX_QUERY_CHARS:
        raise OperationError(
            422, "query_too_long", f"queries are at most {MAX_QUERY_CHARS} characters"
        )
    return text


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit")
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


def _bounded(request: Request, name: str, limit: int) -> str:
    value = request.query_params.get(name, "")
    if len(value) > limit:
        raise OperationError(422, f"bad_{name}", f"{name} is at most {limit} characters")
    return value


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in {"true", "false", "1", "0", "yes", "no", ""}:
        raise OperationError(400, f"bad_{name}", f"{name} must be true or false")
    return raw in {"true", "1", "yes"}


async def _body(request: Request, schema: dict[str, Any]) -> dict[str, Any]:
    # The app's BodyLimit middleware has already refused bodies over schemas.MAX_BODY_BYTES.
    raw = await request.body()
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        raise OperationError(400, "bad_json", "the request body must be JSON") from None
    except RecursionError:
        data = _TOO_DEEP
    problem = _unusable(data)
    if problem:
        raise OperationError(400, "bad_json", f"the request body must be JSON {problem}")
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "body"
        message = exc.message if len(exc.message) <= 300 else exc.message[:300] + "..."
        raise OperationError(422, "invalid_request", f"{where}: {message}") from None
    return data


_TOO_DEEP = object()
_SURROGATES = re.compile("[\ud800-\udfff]")
_LONE = "holds a lone surrogate escape (\\ud800-\\udfff without its pair); send UTF-8 text"


def _unusable(data: Any) -> str:
    """Why parsed JSON cannot be served, or "": nested deeper than any request needs (the
    validator and error messages recurse), or holding a lone surrogate such as "\\ud800" (valid
    JSON escapes, but no text: it cannot be looked up, stored or written back as UTF-8)."""
    if data is _TOO_DEEP:
        return f"nested at most {schemas.MAX_JSON_DEPTH} levels deep"
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > schemas.MAX_JSON_DEPTH:
            return f"nested at most {schemas.MAX_JSON_DEPTH} levels deep"
        if isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATES.search(key):
                    return f"of valid Unicode text: a key in {where or 'body'} {_LONE}"
                stack.append((item, _child(where, key[:50]), depth + 1))
        elif isinstance(value, list):
            stack.extend((item, _child(where, n), depth + 1) for n, item in enumerate(value))
        elif isinstance(value, str) and _SURROGATES.search(value):
            return f"of valid Unicode text: {where or 'body'} {_LONE}"
    return ""


def _child(where: str, part: object) -> str:
    return f"{where}/{part}" if where else str(part)


def _lanes(request: Request, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """`lanes=lexical,semantic`: only these lanes (to compare them); default all."""
    raw = request.query_params.get("lanes")
    if not raw:
        return allowed
    wanted = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [lane for lane in wanted if lane not in allowed]
    if unknown or not wanted:
        raise OperationError(
            400, "bad_lanes", f"lanes must be a comma-separated subset of {', '.join(allowed)}"
        )
    return wanted


Handler = Callable[[Request], Awaitable[dict[str, Any]]]


def _guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return JSONAnswer(await handler(request))
        except OperationError as exc:
            return error(exc.status, exc.code, exc.message, **exc.extra)

    return endpoint


def routes(ops: Operations) -> list[Route]:
    async def search(request: Request) -> dict[str, Any]:
        text, limit, explain = _query_text(request), _limit(request), _flag(request, "explain")
        raw_tags = _bounded(request, "tags", schemas.MAX_TAGS_CHARS)
        tags = [t.strip() for t in raw_tags.split(",") if t.strip()]
        kind = _bounded(request, "kind", schemas.MAX_KIND_CHARS) or None
        lanes = _lanes(request, LANES)
        return await run_in_threadpool(ops.search, text, limit, tags, kind, explain, lanes)

    async def chunk_search(request: Request) -> dict[str, Any]:
        text, limit, explain = _query_text(request), _limit(request), _flag(request, "explain")
        lanes = _lanes(request, ("lexical", "semantic"))
        return await run_in_threadpool(ops.search_chunks, text, limit, explain, lanes)

    async def pages(request: Request) -> dict[str, Any]:
        body = await _body(request, schemas.PAGES_REQUEST)
        # In the thread pool: an operation may wait for a batch being applied.
        return await run_in_threadpool(ops.pages, body["ids"], bool(body.get("include_body")))

    async def chunks(request: Request) -> dict[str, Any]:
        body = await _body(request, schemas.CHUNKS_REQUEST)
        return await run_in_threadpool(ops.chunks, body["ids"])

    async def links(request: Request) -> dict[str, Any]:
        key = request.path_params["key"]
        if len(key) > schemas.MAX_KEY_CHARS:
            raise OperationError(
                422, "invalid_request", f"page keys are at most {schemas.MAX_KEY_CHARS} characters"
            )
        return await run_in_threadpool(ops.links, key)

    async def overview(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(ops.overview)

    async def verify(request: Request) -> dict[str, Any]:
        body = await _body(request, schemas.VERIFY_REQUEST)
        return await run_in_threadpool(
            ops.verify, body["answer"], body.get("chunks", []), body.get("pages", [])
        )

    async def openapi(request: Request) -> dict[str, Any]:
        return schemas.openapi(__version__)

    return [
        Route("/search", _guarded(search), methods=["GET"]),
        Route("/chunks/search", _guarded(chunk_search), methods=["GET"]),
        Route("/pages", _guarded(pages), methods=["POST"]),
        Route("/chunks", _guarded(chunks), methods=["POST"]),
        Route("/pages/{key:path}/links", _guarded(links), methods=["GET"]),
        Route("/overview", _guarded(overview), methods=["GET"]),
        Route("/verify", _guarded(verify), methods=["POST"]),
        Route("/openapi.json", _guarded(openapi), methods=["GET"]),
    ]
