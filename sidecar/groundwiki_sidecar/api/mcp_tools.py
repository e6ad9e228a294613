"""The sidecar's operations as MCP tools (the official `mcp` SDK), over stdio (`groundwiki
mcp`) and over streamable HTTP at /mcp/ on the running sidecar."""

from __future__ import annotations

import functools
import inspect
import io
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field, ValidationError

from groundwiki_sidecar.api import answer_forms, calls, catalog, mcp_handshake, request_checks
from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.http_guards import request_user
from groundwiki_sidecar.api.parameters import FORMAT, OperationError, Param
from groundwiki_sidecar.api.response_schemas import MAX_BODY_BYTES, Schema
from groundwiki_sidecar.base.health import ERROR_CHARS

if TYPE_CHECKING:  # imported by the service's start, not by the MCP session's (groundwiki mcp)
    from groundwiki_sidecar.api.operations import Operations

_SURROGATES = re.compile("[\ud800-\udfff]")


# Every tool reads: the index follows the files, and no call changes them.
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
OVERVIEW_URI = "groundwiki://overview"
ALWAYS_URI = "groundwiki://always"


class _Server(MCPServer):
    """The SDK's server, checking each call's arguments against the catalogue first: one line
    naming the problem and the fix, and an unknown argument refused with the ones the tool
    takes (the SDK would drop it silently and answer as if it had not been given)."""

    def __init__(self, operations: dict[str, Operation], ops: Operations, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.operations, self.ops = operations, ops

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        operation = self.operations.get(name)
        if operation is not None:
            try:
                request_checks.check(operation, "tool", operation.tool_schema(), arguments)
            except OperationError as exc:
                raise ToolError(exc.message) from None
        return await super().call_tool(name, arguments, context)

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        """The wiki's resources in the caller's scope (over HTTP the user its token names),
        which the SDK's resources cannot see."""
        reader = _RESOURCES.get(str(uri))
        if reader is None:
            return await super().read_resource(uri, context)
        mine = self.ops.viewing(_caller(context, self.ops.user) if context else self.ops.user)
        text = await anyio.to_thread.run_sync(reader[2], mine)
        return [ReadResourceContents(content=text, mime_type=reader[1])]


def _overview_text(ops: Operations) -> str:
    answer = calls.answer(_by_name("overview"), ops, {})
    return answer_forms.as_json(answer)


def _always_text(ops: Operations) -> str:
    """The pages every answer must take into account, whole, as Markdown."""
    listed = calls.answer(_by_name("overview"), ops, {})["pages"]
    keys = [page["key"] for page in listed if page["usage_mode"] == "always"]
    if not keys:
        return "No page of this wiki is marked usage_mode: always.\n"
    pages = calls.answer(_by_name("pages"), ops, {"ids": keys, "include_body": True})["pages"]
    return "\n---\n\n".join(
        f"Page `{page['key']}` ({page['url']}):\n\n{page.get('body', '').strip()}\n"
        for page in pages
    )


# uri: (name, MIME type, reader, description)
_RESOURCES: dict[str, tuple[str, str, Callable[[Operations], str], str]] = {
    OVERVIEW_URI: (
        "overview",
        "application/json",
        _overview_text,
        "The wiki's overview pages and those marked usage_mode: always (the wiki_overview tool).",
    ),
    ALWAYS_URI: (
        "always",
        "text/markdown",
        _always_text,
        "The pages marked usage_mode: always, whole: what every answer must take into account.",
    ),
}


def _by_name(name: str) -> Operation:
    return next(op for op in catalog.operations() if op.name == name)


def build_mcp(ops: Operations, operations: Sequence[Operation] | None = None) -> MCPServer:
    """One tool per operation the catalogue exposes to MCP (by default the catalogue's, from the
    lane registry as it is now), each with its arguments' and answer's schemas from the
    catalogue; and the overview as resources."""
    if operations is None:
        operations = catalog.operations()
    tools = {op.tool.name: op for op in operations if op.tool is not None}
    # Name, version and instructions from the module that answers `initialize` before this
    # one loads.
    server = _Server(
        tools,
        ops,
        name=mcp_handshake.SERVER_NAME,
        version=mcp_handshake.SERVER_VERSION,
        instructions=mcp_handshake.INSTRUCTIONS,
        log_level="WARNING",
    )
    for name, operation in tools.items():
        server.add_tool(
            _tool_function(operation, ops),
            name=name,
            description=operation.tool.description if operation.tool else "",
            annotations=_READ_ONLY,
        )
        tool = server._tool_manager.get_tool(name)
        assert tool is not None
        # The catalogue's schemas, as the HTTP routes publish them (not the SDK's reading of
        # the function's signature); the SDK still checks calls against that signature.
        tool.parameters = operation.tool_schema()
        tool.fn_metadata.output_schema = answer_forms.loose(operation.response)
    for uri, (name, mime, reader, description) in _RESOURCES.items():
        server.add_resource(
            FunctionResource(
                uri=uri,
                name=name,
                description=description,
                mime_type=mime,
                fn=functools.partial(reader, ops),
            )
        )
    return server


def _tool_function(operation: Operation, ops: Operations) -> Callable[..., CallToolResult]:
    """A function whose signature carries the tool's arguments, typed from their JSON Schema:
    the SDK builds the tool's input schema and validates calls from it."""
    assert operation.tool is not None

    def call(ctx: Context, **given: Any) -> CallToolResult:
        try:
            mine = ops.viewing(_caller(ctx, ops.user))
            answer = calls.answer(operation, mine, operation.arguments(given))
        except OperationError as exc:
            raise ToolError(exc.message) from None
        return result_of(operation, answer, given.get("format") or FORMAT.default_for_tool)

    parameters = [
        inspect.Parameter(
            param.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=_annotation(param),
            default=inspect.Parameter.empty if param.required else param.default_for_tool,
        )
        for param in operation.params
        if param.tool
    ]
    call.__name__ = call.__qualname__ = operation.tool.name
    # The SDK hands the call's context to the parameter annotated Context (found through the
    # annotations) and leaves it out of the tool's input schema: the caller cannot set it.
    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [context, *parameters], return_annotation=CallToolResult
    )
    call.__annotations__ = {"ctx": Context, "return": CallToolResult}
    return call


def result_of(operation: Operation, answer: dict[str, Any], form: str) -> CallToolResult:
    """The answer once, as structured content (without its empty fields unless `json` was
    asked for), and as text: a few lines for a client that shows text, or the whole answer
    in TOON when `toon` was asked for. Its cost in tokens is in the result's _meta."""
    structured = answer if form == "json" else answer_forms.compacted(answer)
    text = answer_forms.written(answer, "toon") if form == "toon" else text_form(answer)
    cost = answer_forms.tokens(text if form == "toon" else answer_forms.as_json(structured) + text)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        _meta={"groundwiki/tokens": cost},
    )


def text_form(answer: dict[str, Any]) -> str:
    """A few lines saying what the answer holds, for clients that show text only: each hit or
    page by key and title, at most _TEXT_ITEMS of them; the structured content has it all."""
    for field in ("hits", "pages", "chunks", "outgoing"):
        items = answer.get(field)
        if isinstance(items, list):
            break
    else:
        return _summary_of(answer)
    lines = [f"{len(items)} {field}" + (":" if items else ".")]
    for n, item in enumerate(items[:_TEXT_ITEMS], 1):
        lines.append(f"{n}. {item.get('key') or item.get('id') or item.get('target') or ''}")
    if len(items) > _TEXT_ITEMS:
        lines.append(f"... and {len(items) - _TEXT_ITEMS} more in the structured content")
    if answer.get("block"):
        lines.append(answer["block"])
    return "\n".join(lines)


_TEXT_ITEMS = 10


def _summary_of(answer: dict[str, Any]) -> str:
    if "block" in answer:
        return str(answer["block"])
    found = answer.get("found")
    if isinstance(found, dict):
        return str(found.get("comment", ""))
    return ", ".join(
        f"{key}: {value}" for key, value in answer.items() if isinstance(value, str | int | float)
    )[:400]


def _caller(ctx: Context, default: str | None) -> str | None:
    """Whose scope a tool call answers in: over HTTP the user the request's token names (the
    sidecar's Identity middleware put it on the request), over stdio the one user it serves."""
    try:
        request = ctx.request_context.request
    except (ValueError, AttributeError):  # no request context: a direct call
        return default
    scope = getattr(request, "scope", None)
    return request_user(scope) if isinstance(scope, dict) else default


def _annotation(param: Param) -> Any:
    typed = _typed(param.schema)
    if not param.required and param.default_for_tool is None:
        typed = typed | None
    if param.description:
        return Annotated[typed, Field(description=param.description)]
    return typed


_SCALARS: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
# JSON Schema keywords and the pydantic Field arguments that say the same.
_LIMITS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "minimum": "ge",
    "maximum": "le",
    "minItems": "min_length",
    "maxItems": "max_length",
}


def _typed(schema: Schema) -> Any:
    """The Python type of a value of `schema` (scalars, enums of strings and arrays of them,
    which is all the tools take), its limits as pydantic constraints."""
    kind = schema["type"]
    if "enum" in schema:
        base: Any = Literal[tuple(schema["enum"])]
    elif kind == "array":
        base = list[_typed(schema["items"])]  # type: ignore[misc]
    else:
        base = _SCALARS[kind]
    limits = {_LIMITS[key]: value for key, value in schema.items() if key in _LIMITS}
    unknown = set(schema) - {"type", "items", "description", "enum", *_LIMITS}
    if unknown:
        raise ValueError(f"no MCP argument type for the JSON Schema keywords {sorted(unknown)}")
    return Annotated[base, Field(**limits)] if limits else base


def http_app(server: MCPServer) -> Any:
    """The streamable HTTP transport, to mount at /mcp. The sidecar's own middleware checks Host,
    Origin and the body size on every route, /mcp/ included, so the SDK's Host check is off (it
    would refuse the names in sidecar.allowed_hosts); its body cap repeats ours."""
    return server.streamable_http_app(
        streamable_http_path="/",
        max_request_body_size=MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def serve_stdio(server: MCPServer) -> None:
    """The MCP tools over stdin and stdout until stdin closes; after this process's early
    `initialize` answer (mcp_handshake), when one was started."""
    anyio.run(_serve_stdio, server, mcp_handshake.taken())


async def _serve_stdio(server: MCPServer, early: mcp_handshake.EarlyHandshake | None) -> None:
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, too
    options = lowlevel.create_initialization_options()
    if early is None:
        async with stdio_server() as (read, write):
            await lowlevel.run(_AnswerUnreadable(read, write), write, options)
        return
    line, answered = await anyio.to_thread.run_sync(early.handed_over)
    with _stdin_after(line) as stdin:
        async with stdio_server(stdin=stdin) as (read, write):
            replies = write if answered is None else _DropAnswer(write, answered)
            await lowlevel.run(_AnswerUnreadable(read, write), replies, options)


@contextmanager
def _stdin_after(line: bytes) -> Iterator[Any]:
    """The wire's input for the SDK: the line the early answer read, then the rest of fd 0.
    Like the SDK's own claim of stdin, fd 0 points at the null device meanwhile, so nothing
    else in the process reads the wire."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        text = io.TextIOWrapper(
            io.BufferedReader(_Replayed(line, wire)), encoding="utf-8", errors="replace"
        )
        yield anyio.wrap_file(text)
    finally:
        os.dup2(wire, 0)
        os.close(wire)


class _Replayed(io.RawIOBase):
    """`first`, then what the file descriptor `fd` reads."""

    def __init__(self, first: bytes, fd: int) -> None:
        self.first, self.fd = first, fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.first:
            size = min(len(buffer), len(self.first))
            buffer[:size], self.first = self.first[:size], self.first[size:]
            return size
        data = os.read(self.fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _DropAnswer:
    """The write stream, less the SDK's result for the `initialize` request the early answer
    already answered (an error for it still goes out: the client must hear of it)."""

    def __init__(self, inner: Any, answered: int | str) -> None:
        self.inner = inner
        self.answered: int | str | None = answered

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if (
            self.answered is not None
            and isinstance(message, JSONRPCResponse)
            and message.id == self.answered
        ):
            self.answered = None
            return
        await self.inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> _DropAnswer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.aclose()


class _AnswerUnreadable:
    """The stdio read stream, answering each line that is no JSON-RPC message (bad JSON, a lone
    surrogate such as \\ud800, a missing method) with a JSON-RPC error instead of dropping it,
    so the client is not left waiting; the session goes on with the next line."""

    def __init__(self, inner: Any, write: Any) -> None:
        self.inner, self.write = inner, write

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item
            await self.write.send(SessionMessage(_error_reply(item)))

    def __aiter__(self) -> _AnswerUnreadable:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _AnswerUnreadable:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _error_reply(exc: Exception) -> JSONRPCError:
    """A parse error for a line the SDK could not read as JSON (a lone surrogate escape, or no
    JSON at all), an invalid-request error for JSON that is no JSON-RPC message; either carries
    the request's ID when Python's more lenient parser finds a usable one in the line."""
    problems = exc.errors() if isinstance(exc, ValidationError) else []
    given = problems[0].get("input") if problems else None
    # The problem's type, not its input, tells an unreadable line from a JSON-RPC message with
    # a bad field: the input of a bad field can be a string too (`"jsonrpc": "1.0"`).
    unparsed = bool(problems) and problems[0].get("type") == "json_invalid"
    if unparsed and isinstance(given, str):
        try:
            given = json.loads(given)
        except (ValueError, RecursionError):
            given = None
    request_id = given.get("id") if isinstance(given, dict) else None
    usable = isinstance(request_id, int | str) and not isinstance(request_id, bool)
    if not usable or (isinstance(request_id, str) and _SURROGATES.search(request_id)):
        request_id = None  # an ID the reply could not carry: JSON-RPC says null
    detail = problems[0].get("msg", "") if problems else str(exc)
    if unparsed:
        code, message = PARSE_ERROR, "the line is not valid JSON text in UTF-8"
    else:
        code, message = INVALID_REQUEST, "the line is not a JSON-RPC 2.0 message"
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=ErrorData(
            code=code, message=f"{message}: {_SURROGATES.sub('?', detail)[:ERROR_CHARS]}"
        ),
    )
