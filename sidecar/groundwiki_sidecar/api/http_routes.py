"""The operations over HTTP: one route per operation of the catalogue, and /openapi.json.

Query and path parameters are decoded as the catalogue declares them; a JSON body is checked
against the operation's request schema. Every error is JSON with a stable `error` code and a
message; bad input is a 4xx, never a 500. Operations run in Starlette's thread pool, so a slow
query does not hold the event loop (all but the cheap `inline` ones, which must answer while
every query thread is busy).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from groundwiki import __version__
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from groundwiki_sidecar.api import answer_forms, calls, catalog, request_checks
from groundwiki_sidecar.api import openapi as schemas
from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.http_guards import JSONAnswer, error, request_user
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.parameters import OperationError, Param
from groundwiki_sidecar.api.response_schemas import MAX_JSON_DEPTH


async def _arguments(operation: Operation, request: Request) -> dict[str, Any]:
    taken = [p.wire_name for p in operation.params if p.http == "query"]
    request_checks.unknown_names(
        request.query_params.keys(),
        taken,
        "query parameter",
        f"{operation.method} {operation.path}",
    )
    given: dict[str, Any] = {}
    for param in operation.params:
        if param.decode is None:
            continue
        if param.http == "path":
            given[param.name] = param.decode(request.path_params.get(param.wire_name))
        else:
            given[param.name] = param.decode(_query_value(request, param))
    schema = operation.request_schema()
    if schema is not None:
        given.update(await _body(request, schema, operation))
    return operation.arguments(given)


def _query_value(request: Request, param: Param) -> str | None:
    """A query parameter's text. A list may come comma-separated (`lanes=a,b`, as the document
    says) or repeated (`lanes=a&lanes=b`, as many clients write lists): both mean the same. A
    value given twice is refused: the one read would be a guess."""
    values = request.query_params.getlist(param.wire_name)
    if len(values) <= 1:
        return values[0] if values else None
    if param.schema.get("type") == "array":
        return ",".join(values)
    raise OperationError(
        422,
        "invalid_request",
        f"give {param.wire_name} once; this request gives it {len(values)} times",
    )


async def _body(request: Request, schema: dict[str, Any], operation: Operation) -> dict[str, Any]:
    # The app's BodyLimit middleware has already refused bodies over shapes.MAX_BODY_BYTES.
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
    request_checks.check(operation, "body", schema, data)
    assert isinstance(data, dict)  # the schema says an object
    # JSON Schema's integers include 88.0; the handlers slice and count with them.
    for param in operation.body:
        value = data.get(param.name)
        if param.schema.get("type") == "integer" and isinstance(value, float):
            data[param.name] = int(value)
    return data


_TOO_DEEP = object()
_SURROGATES = re.compile("[\ud800-\udfff]")
_LONE = "holds a lone surrogate escape (\\ud800-\\udfff without its pair); send UTF-8 text"


def _unusable(data: Any) -> str:
    """Why parsed JSON cannot be served, or "": nested deeper than any request needs (the
    validator and error messages recurse), or holding a lone surrogate such as "\\ud800" (valid
    JSON escapes, but no text: it cannot be looked up, stored or written back as UTF-8)."""
    if data is _TOO_DEEP:
        return f"nested at most {MAX_JSON_DEPTH} levels deep"
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"nested at most {MAX_JSON_DEPTH} levels deep"
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


def _route_path(path: str) -> str:
    """Starlette's pattern for an OpenAPI path: a path parameter such as a page key may hold
    slashes (`guide/linting`)."""
    return re.sub(r"\{(\w+)\}", r"{\1:path}", path)


def route(operation: Operation, ops: Operations) -> Route:
    async def endpoint(request: Request) -> Response:
        try:
            args = await _arguments(operation, request)
            mine = ops.viewing(request_user(request.scope))
            if operation.inline:
                answer = calls.answer(operation, mine, args)
            else:
                answer = await run_in_threadpool(calls.answer, operation, mine, args)
        except OperationError as exc:
            return error(exc.status, exc.code, exc.message, **exc.extra)
        return await run_in_threadpool(_written, answer, args.get("format", "json"))

    return Route(_route_path(operation.path), endpoint, methods=[operation.method])


_MEDIA_TYPES = {
    "json": "application/json",
    "compact": schemas.COMPACT_MEDIA_TYPE,
    "toon": schemas.TOON_MEDIA_TYPE + "; charset=utf-8",
}


def _written(answer: dict[str, Any], form: str) -> Response:
    """The answer in the form asked for, with what it costs in tokens (a header: the body
    stays the answer's fields and nothing else)."""
    # A lone surrogate echoed from a request becomes U+FFFD instead of failing the answer.
    text = _SURROGATES.sub("\ufffd", answer_forms.written(answer, form))
    response = Response(text.encode("utf-8"), media_type=_MEDIA_TYPES[form])
    response.headers["X-Groundwiki-Tokens"] = str(answer_forms.tokens(text))
    return response


def routes(ops: Operations, operations: Sequence[Operation] | None = None) -> list[Route]:
    """The routes of `operations` (by default the catalogue's, from the lane registry as it is
    now) and the document that describes them."""
    if operations is None:
        operations = catalog.operations()

    async def openapi(request: Request) -> Response:
        return JSONAnswer(schemas.openapi(__version__, operations))

    return [
        *(route(operation, ops) for operation in operations),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
