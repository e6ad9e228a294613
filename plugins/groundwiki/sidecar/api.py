"""The query endpoints: search, hydration, drill-down, links, overview and verification.

Every error is JSON with a stable `error` code and a message; bad input is a 4xx, never a 500.
Handlers run in a thread pool (Starlette's default for sync endpoints), so a slow query does
not hold the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .. import __version__
from ..core.graph import build_graph
from . import answers, schemas
from .app import error
from .query import MAX_LIMIT, MAX_QUERY_CHARS, Filters, NotReady, QueryEngine
from .service import SidecarService
from .sync import Snapshot

DEFAULT_LIMIT = 10


class BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def _query_text(request: Request) -> str:
    text = request.query_params.get("q", "")
    if not text.strip():
        raise BadRequest(400, "missing_query", "give the query as ?q=...")
    if len(text) > MAX_QUERY_CHARS:
        raise BadRequest(422, "query_too_long", f"queries are at most {MAX_QUERY_CHARS} characters")
    return text


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(
            400, "bad_limit", f"limit must be an integer from 1 to {MAX_LIMIT}"
        ) from None
    if not 1 <= value <= MAX_LIMIT:
        raise BadRequest(422, "bad_limit", f"limit must be an integer from 1 to {MAX_LIMIT}")
    return value


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in {"true", "false", "1", "0", "yes", "no", ""}:
        raise BadRequest(400, f"bad_{name}", f"{name} must be true or false")
    return raw in {"true", "1", "yes"}


async def _body(request: Request, schema: dict[str, Any]) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > schemas.MAX_BODY_BYTES:
        raise BadRequest(
            413, "body_too_large", f"request bodies are at most {schemas.MAX_BODY_BYTES} bytes"
        )
    raw = b""
    async for part in request.stream():
        raw += part
        if len(raw) > schemas.MAX_BODY_BYTES:
            raise BadRequest(
                413, "body_too_large", f"request bodies are at most {schemas.MAX_BODY_BYTES} bytes"
            )
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest(400, "bad_json", "the request body must be JSON") from None
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "body"
        raise BadRequest(422, "invalid_request", f"{where}: {exc.message}") from None
    return data


def routes(service: SidecarService) -> list[Route]:
    settings = service.sidecar.settings
    engine = QueryEngine(service.indexer, settings.weights, settings.rrf_k)
    graphs: dict[int, dict[str, tuple[str, ...]]] = {}

    def snapshot() -> Snapshot:
        current = service.indexer.snapshot
        if current is None:
            raise NotReady("the sidecar is still building its first index")
        return current

    def backlinks(current: Snapshot) -> dict[str, tuple[str, ...]]:
        if current.generation not in graphs:
            graphs.clear()
            graphs[current.generation] = build_graph(current.wiki).backlinks()
        return graphs[current.generation]

    def guarded(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except BadRequest as exc:
                return error(exc.status, exc.code, exc.message, **exc.extra)
            except NotReady as exc:
                return error(503, "not_ready", str(exc))

        return endpoint

    async def search(request: Request) -> dict[str, Any]:
        text, limit, explain = _query_text(request), _limit(request), _flag(request, "explain")
        tags = tuple(
            t.strip() for t in request.query_params.get("tags", "").split(",") if t.strip()
        )
        filters = Filters(tags=tags, kind=request.query_params.get("kind") or None)
        ranking = await run_in_threadpool(engine.search_pages, text, limit, filters)
        return {
            "query": text,
            "hits": [answers.page_hit(ranking.snapshot, f, explain) for f in ranking.fused],
            "lanes": answers.lane_json(ranking.runs),
            "generation": ranking.generation,
        }

    async def chunk_search(request: Request) -> dict[str, Any]:
        text, limit, explain = _query_text(request), _limit(request), _flag(request, "explain")
        ranking = await run_in_threadpool(engine.search_chunks, text, limit)
        return {
            "query": text,
            "hits": [answers.chunk_hit(ranking.snapshot, f, explain) for f in ranking.fused],
            "lanes": answers.lane_json(ranking.runs),
            "generation": ranking.generation,
        }

    async def pages(request: Request) -> dict[str, Any]:
        body = await _body(request, schemas.PAGES_REQUEST)
        current = snapshot()
        found = answers.hydrate_pages(current, body["ids"], bool(body.get("include_body")))
        if not found.found:
            raise BadRequest(
                404, "unknown_pages", _unknown(found.missing, "page"), missing=found.missing
            )
        return {"pages": found.found, "missing": found.missing, "generation": current.generation}

    async def chunks(request: Request) -> dict[str, Any]:
        body = await _body(request, schemas.CHUNKS_REQUEST)
        current = snapshot()
        found = answers.hydrate_chunks(current, body["ids"])
        if not found.found:
            # Every ID unknown: likely invented. Say so loudly, with the nearest real ones.
            raise BadRequest(
                404, "unknown_chunks", _unknown(found.missing, "chunk"), missing=found.missing
            )
        return {"chunks": found.found, "missing": found.missing, "generation": current.generation}

    async def links(request: Request) -> dict[str, Any]:
        current = snapshot()
        name = request.path_params["key"]
        resolution = current.wiki.resolver.resolve_name(name)
        if resolution is None:
            raise BadRequest(404, "unknown_page", f"no page with key or alias '{name}'")
        page = current.wiki.pages[resolution.key]
        return answers.links_of(current, page, backlinks(current).get(page.key, ()))

    async def overview(request: Request) -> dict[str, Any]:
        current = snapshot()
        listed = [
            page
            for page in current.wiki.pages.values()
            if page.usage_mode != "never"
            and (page.kind == "overview" or page.usage_mode == "always")
        ]
        listed.sort(key=lambda p: (p.kind != "overview", p.key))
        return {
            "pages": [
                {
                    "key": p.key,
                    "title": p.title,
                    "summary": p.summary or "",
                    "url": current.wiki.layout.url(p.doc_path),
                    "kind": p.kind,
                    "usage_mode": p.usage_mode,
                }
                for p in listed
            ],
            "generation": current.generation,
        }

    async def verify(request: Request) -> dict[str, Any]:
        body = await _body(request, schemas.VERIFY_REQUEST)
        current = snapshot()
        return answers.verify(
            current, body["answer"], body.get("chunks", []), body.get("pages", [])
        )

    async def openapi(request: Request) -> dict[str, Any]:
        return schemas.openapi(__version__)

    return [
        Route("/search", guarded(search), methods=["GET"]),
        Route("/chunks/search", guarded(chunk_search), methods=["GET"]),
        Route("/pages", guarded(pages), methods=["POST"]),
        Route("/chunks", guarded(chunks), methods=["POST"]),
        Route("/pages/{key:path}/links", guarded(links), methods=["GET"]),
        Route("/overview", guarded(overview), methods=["GET"]),
        Route("/verify", guarded(verify), methods=["POST"]),
        Route("/openapi.json", guarded(openapi), methods=["GET"]),
    ]


def _unknown(missing: list[dict[str, Any]], what: str) -> str:
    parts = []
    for entry in missing[:5]:
        hint = f" (closest: {', '.join(entry['closest'])})" if entry["closest"] else ""
        parts.append(f"{entry['id']}{hint}")
    return f"no such {what}: " + "; ".join(parts) + ". Copy IDs verbatim from search results."
