"""The OpenAPI 3.1 document the sidecar serves at /openapi.json, built from the operations
catalogue (`catalog.py`) and the shapes it answers with (`response_schemas.py`); nothing in it
is written twice.

Every operation has an `operationId` (its catalogue name), so a generated client gets method
names it can keep. The shapes an answer reuses (a hit, a pointer, a chunk) are written once under
`components/schemas` and referenced: the catalogue keeps them inline (the request validator and
the MCP tools need self-contained schemas), and `_Components` hoists each named one out of the
document by equality, so a shape is named where it is declared and nowhere else.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from groundwiki_sidecar.api import catalog, response_schemas
from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.parameters import FORMAT, STYLE, Param
from groundwiki_sidecar.api.response_schemas import ERROR, Schema

VERSION = "3.1.0"
_REF = "#/components/schemas/"
TOON_MEDIA_TYPE = "text/toon"
COMPACT_MEDIA_TYPE = "application/vnd.groundwiki.compact+json"


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
    if param.example is not None:
        found["example"] = param.example
    return {**found, **param.style, "schema": schema}


def _answers(operation: Operation) -> dict[str, Any]:
    """The 200 answer in each format `format` asks for: JSON by default (the schema), compact
    JSON (the same, empty fields left out) and TOON (the same fields as text)."""
    content: dict[str, Any] = {"application/json": {"schema": operation.response}}
    if any(p.name == "format" for p in operation.params):
        content[COMPACT_MEDIA_TYPE] = {"schema": {"type": "object"}}
        content[TOON_MEDIA_TYPE] = {"schema": {"type": "string"}}
    return {
        "description": "the answer; its header X-Groundwiki-Tokens counts the word pieces it "
        "costs in the embedding model's tokenizer",
        "headers": {"X-Groundwiki-Tokens": {"schema": {"type": "integer", "minimum": 0}}},
        "content": content,
    }


def _operation(operation: Operation) -> dict[str, Any]:
    found: dict[str, Any] = {"operationId": operation.name, "summary": operation.summary}
    if operation.tool is not None:
        found["description"] = (
            f"{operation.tool.description}\n\nAlso the MCP tool `{operation.tool.name}`."
        )
    parameters = [_parameter(p) for p in operation.params if p.http in {"query", "path"}]
    if parameters:
        found["parameters"] = parameters
    request = operation.request_schema()
    if request is not None:
        body: dict[str, Any] = {"required": True, **_json(request)}
        if operation.example:
            body["content"]["application/json"]["example"] = operation.example
        found["requestBody"] = body
    errors = {
        str(code): {"description": _STATUS_TEXT.get(code, "error"), **_json(ERROR)}
        for code in operation.statuses()
    }
    found["responses"] = {"200": _answers(operation), **errors}
    if operation.public:
        found["security"] = []  # liveness: answered without a token in every wiki
    return found


_STATUS_TEXT = {
    400: "unreadable request: a parameter that is no value of its type, a body that is no JSON",
    401: "no valid bearer token, in a wiki with user tokens",
    403: "a browser page from a foreign Origin",
    404: "nothing of what was asked for exists; `missing` lists the closest",
    413: "a body over the size limit",
    421: "a Host the sidecar does not serve",
    422: "a request the document refuses: an unknown parameter, a value out of range",
    503: "the indexes are not ready yet; retry after the Retry-After header's seconds",
}


def openapi(version: str, operations: Sequence[Operation] | None = None) -> dict[str, Any]:
    """The document of `operations`, by default the catalogue's as the lane registry is now."""
    if operations is None:
        operations = catalog.operations()
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(operation)
    components = _Components(_named(operations))
    return {
        "openapi": VERSION,
        "info": {
            "title": "groundwiki sidecar",
            "version": version,
            "description": "Search, read and check a grounded wiki: pages first, the raw "
            "sources behind them on demand by chunk ID. The same operations are MCP tools at "
            "/mcp/.",
        },
        "paths": components.hoisted(paths),
        # A wiki without user tokens answers without one; with tokens, each request names its
        # user by its bearer token.
        "security": [{"bearer": []}, {}],
        "components": {
            "schemas": components.schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a user token from `groundwiki token new USER`",
                }
            },
        },
    }


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _named(operations: Sequence[Operation]) -> dict[str, Schema]:
    """Every shape worth a name, in the order a reader meets them: the pieces answers reuse,
    then each operation's answer and request body."""
    found: dict[str, Schema] = {}
    for kind in ("page", "chunk"):
        found[f"{_pascal(kind)}Hit"] = (
            response_schemas.page_hit() if kind == "page" else (response_schemas.chunk_hit())
        )
        found[f"{_pascal(kind)}LaneRun"] = response_schemas.lane_run(kind)
        found[f"{_pascal(kind)}Explain"] = response_schemas.explain(kind)
        found[f"{_pascal(kind)}Bounded"] = response_schemas.bounded(kind)
    found["BriefPageHit"] = response_schemas.brief_page_hit()
    found["PageLane"] = response_schemas.lane_names("page")
    found["ChunkLane"] = response_schemas.lane_names("chunk")
    found["Format"] = FORMAT.schema
    found["ContextStyle"] = STYLE.schema
    found.update(response_schemas.NAMED)
    for operation in operations:
        for suffix, schema in (
            ("Answer", operation.response),
            ("Request", operation.request_schema()),
        ):
            # Two operations answering alike (a GET and its POST twin) share one name.
            if schema is not None and schema not in found.values():
                found[f"{_pascal(operation.name)}{suffix}"] = schema
    return found


class _Components:
    """Named schemas, and the document with each of their occurrences replaced by a `$ref`."""

    def __init__(self, named: dict[str, Schema]) -> None:
        # Hoisting inside the named schemas too: a hit references its pointer.
        self._named = named
        self.schemas: dict[str, Schema] = {}
        for name, schema in named.items():
            self.schemas[name] = self._inner(copy.deepcopy(schema), name)

    def _name_of(self, schema: Schema) -> str | None:
        for name, named in self._named.items():
            if schema == named:
                return name
        return None

    def _inner(self, schema: Schema, own: str) -> Schema:
        return {key: self.hoisted(value, own) for key, value in schema.items()}

    def _reference(self, value: Schema, own: str) -> Schema | None:
        """`value` as a reference to a named schema, or None: the named schema itself, the same
        with a default or a description of its own (kept beside the `$ref`), or either of those
        that may also be null (`anyOf` the reference and null: a generated client then names
        the type as the schema, not as one arm of a type list)."""
        if not isinstance(value.get("type"), str | list):  # a `properties` map, not a schema
            return None
        exact = self._name_of(value)
        if exact is not None:
            return None if exact == own else {"$ref": _REF + exact}
        extra: Schema = {
            key: value[key] for key in ("default", "description", "example") if key in value
        }
        base = {key: item for key, item in value.items() if key not in extra}
        kinds = base.get("type")
        nullable = isinstance(kinds, list) and "null" in kinds and len(kinds) == 2
        if isinstance(kinds, list) and nullable:
            base["type"] = next(kind for kind in kinds if kind != "null")
        name = self._name_of(base)
        if name is None or name == own:
            return None
        ref = {"$ref": _REF + name}
        if nullable:
            return {"anyOf": [ref, {"type": "null"}], **extra}
        return {**ref, **extra}

    def hoisted(self, value: Any, own: str = "") -> Any:
        if isinstance(value, dict):
            reference = self._reference(value, own)
            if reference is not None:
                return reference
            return {key: self.hoisted(item, own) for key, item in value.items()}
        if isinstance(value, list):
            return [self.hoisted(item, own) for item in value]
        return value


def resolved(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with every `$ref` replaced by the schema it names: what a reader that follows
    no references (a test, a quick look) reads."""
    named = document.get("components", {}).get("schemas", {})

    def inline(value: Any) -> Any:
        if isinstance(value, dict):
            ref = value.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF):
                return inline(named[ref[len(_REF) :]])
            return {key: inline(item) for key, item in value.items()}
        if isinstance(value, list):
            return [inline(item) for item in value]
        return value

    return {**document, "paths": inline(document["paths"])}
