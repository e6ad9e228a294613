"""The OpenAPI document the sidecar serves at /openapi.json, built from the operations catalogue
(`catalog.py`) and the shapes it answers with (`shapes.py`); nothing in it is written twice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.parameters import Param
from groundwiki_sidecar.api.response_schemas import ERROR, Schema


def _json(schema: Schema) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _parameter(param: Param) -> dict[str, Any]:
    found: dict[str, Any] = {
        "name": param.wire_name,
        "in": param.http,
        "required": param.required,
    }
    if param.description:
        found["description"] = param.description
    schema = param.schema
    if isinstance(param.default, bool | int | float | str):
        schema = {**schema, "default": param.default}
    return {**found, **param.style, "schema": schema}


def _operation(operation: Operation) -> dict[str, Any]:
    found: dict[str, Any] = {"summary": operation.summary}
    parameters = [_parameter(p) for p in operation.params if p.http in {"query", "path"}]
    if parameters:
        found["parameters"] = parameters
    request = operation.request_schema()
    if request is not None:
        found["requestBody"] = {"required": True, **_json(request)}
    errors = {str(code): {"description": "error", **_json(ERROR)} for code in operation.statuses()}
    found["responses"] = {
        "200": {"description": "the answer", **_json(operation.response)},
        **errors,
    }
    return found


def openapi(version: str, operations: Sequence[Operation] | None = None) -> dict[str, Any]:
    """The document of `operations`, by default the catalogue's as the lane registry is now."""
    if operations is None:
        operations = catalog.operations()
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(operation)
    return {
        "openapi": "3.0.3",
        "info": {"title": "groundwiki sidecar", "version": version},
        "paths": paths,
    }
