"""Checking what a caller sent against what an operation takes, with the same one-line errors on
every surface: a JSON body over HTTP, a query string, the arguments of an MCP tool call.

An error names where the problem is and the fix, never echoes a long value: a list of 101 IDs is
"101 items", not the IDs. A name the operation does not take is refused with the names it does
take, in a query string as in a body (a silently ignored `lanes=nosuchlane` would answer as if
every lane had been asked for).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema

from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.parameters import OperationError
from groundwiki_sidecar.base.health import ERROR_CHARS

_VALIDATORS: dict[tuple[str, str], Any] = {}
_SHOWN_CHARS = 60  # of a value quoted in an error


def unknown_names(given: Iterable[str], allowed: Iterable[str], what: str, where: str) -> None:
    """Refuse the first name of `given` that is not in `allowed` (422 invalid_request)."""
    allowed = list(allowed)
    unknown = [name for name in given if name not in allowed]
    if not unknown:
        return
    takes = ", ".join(allowed) if allowed else "none"
    plural = "s" if len(unknown) > 1 else ""
    names = ", ".join(repr(_shown(name)) for name in unknown[:5])
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    raise OperationError(
        422,
        "invalid_request",
        f"unknown {what}{plural} {names}{more}: {where} takes {takes}",
    )


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "..."


def check(operation: Operation, surface: str, schema: dict[str, Any], data: Any) -> None:
    """Refuse `data` (a body, a tool call's arguments) if `schema` does not hold it, with the
    first problem in one line."""
    found = _VALIDATORS.get((operation.name, surface))
    if found is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = _VALIDATORS[(operation.name, surface)] = cls(schema)
    exc = jsonschema.exceptions.best_match(found.iter_errors(data))
    if exc is None:
        return
    if exc.validator == "additionalProperties" and isinstance(exc.instance, dict):
        known = schema.get("properties", {})
        what = "argument" if surface == "tool" else "field"
        unknown_names(exc.instance, known, what, _taker(operation, surface))
    _too_long(exc, operation)
    where = "/".join(str(p) for p in exc.absolute_path) or (
        "arguments" if surface == "tool" else "body"
    )
    raise OperationError(422, "invalid_request", f"{where}: {message(exc)}") from None


def _taker(operation: Operation, surface: str) -> str:
    if surface == "tool" and operation.tool is not None:
        return operation.tool.name
    return f"{operation.method} {operation.path}"


def message(exc: jsonschema.ValidationError) -> str:
    """The problem in words, a long value summarised by its size instead of quoted whole."""
    value: Any = exc.instance
    limit: Any = exc.validator_value
    if exc.validator == "maxItems":
        return f"at most {limit} items; this list has {len(value)}"
    if exc.validator == "minItems":
        return f"at least {limit} item{'s' if limit != 1 else ''}; this list has {len(value)}"
    if exc.validator == "maxLength":
        return f"at most {limit} characters; this one has {len(value)}"
    if exc.validator == "minLength":
        return f"at least {limit} character{'s' if limit != 1 else ''}; this one is empty"
    if exc.validator == "enum":
        return f"{_quoted(value)} is not one of {', '.join(map(str, limit))}"
    if exc.validator == "type":
        wanted = limit if isinstance(limit, str) else " or ".join(limit)
        return f"{_quoted(value)} is not of type {wanted}"
    if exc.validator == "anyOf" and all(set(arm) == {"required"} for arm in limit):
        names = " or ".join(f"`{name}`" for arm in limit for name in arm["required"])
        return f"give {names}"
    if exc.validator in {"anyOf", "required"} and isinstance(value, dict):
        return exc.message.replace(repr(value), "the body")[:ERROR_CHARS]
    text = exc.message
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "..."


def _quoted(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return f"an object of {len(value)} fields"
    shown = repr(value)
    return shown if len(shown) <= _SHOWN_CHARS else shown[:_SHOWN_CHARS] + "..."


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
