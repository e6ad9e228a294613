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

import jsonschema
from groundwiki import __version__
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from groundwiki_sidecar.api import calls, catalog
from groundwiki_sidecar.api import openapi as schemas
from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.http_guards import JSONAnswer, error, request_user
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.parameters import OperationError
from groundwiki_sidecar.api.response_schemas import MAX_JSON_DEPTH
from groundwiki_sidecar.base.health import ERROR_CHARS


async def _arguments(operation: Operation, request: Request) -> dict[str, Any]:
    given: dict[str, Any] = {}
    for param in operation.params:
        if param.decode is None:
            continue
        source = request.path_params if param.http == "path" else request.query_params
        given[param.name] = param.decode(source.get(param.wire_name))
    schema = operation.request_schema()
    if schema is not None:
        given.update(await _body(request, schema, operation))
    return operation.arguments(given)


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
    exc = jsonschema.exceptions.best_match(_validator(operation.name, schema).iter_errors(data))
    if exc is not None:
        _too_long(exc, operation)
        where = "/".join(str(p) for p in exc.absolute_path) or "body"
        message = (
            exc.message if len(exc.message) <= ERROR_CHARS else exc.message[:ERROR_CHARS] + "..."
        )
        raise OperationError(422, "invalid_request", f"{where}: {message}") from None
    assert isinstance(data, dict)  # the schema says an object
    return data


_VALIDATORS: dict[str, Any] = {}


def _validator(name: str, schema: dict[str, Any]) -> Any:
    """One checked validator per operation: `jsonschema.validate` checks the schema itself and
    builds a validator on every call, some milliseconds a request."""
    found = _VALIDATORS.get(name)
    if found is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = _VALIDATORS[name] = cls(schema)
    return found


def _too_long(exc: jsonschema.ValidationError, operation: Operation) -> None:
    """A body field over its maxLength answers as its query-parameter twin does, when the
    catalogue gives it a code of its own (`Param.too_long`)."""
    if exc.validator != "maxLength" or len(exc.absolute_path) != 1:
        return
    for param in operation.body:
        if param.name == exc.absolute_path[0] and param.too_long:
            message = (
                f"{param.name} is at most {exc.validator_value} characters; this one has "
                f"{len(str(exc.instance))}"
            )
            raise OperationError(422, param.too_long, message) from None


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
        return JSONAnswer(answer)

    return Route(_route_path(operation.path), endpoint, methods=[operation.method])


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
