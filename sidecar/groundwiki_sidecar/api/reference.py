"""The handbook's reference of the API, written from the catalogue: each operation with its HTTP
method and path, its MCP tool, its arguments (type, defaults on each surface, what they mean) and
its errors; and a worked agent session, recorded by calling the tools through the catalogue as an
MCP client would (`tests/sidecar/test_api_copies.py` keeps the handbook's copies current).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from groundwiki_sidecar.api import calls, catalog
from groundwiki_sidecar.api.catalog import Operation
from groundwiki_sidecar.api.parameters import FORMAT, Param

if TYPE_CHECKING:
    from groundwiki_sidecar.api.operations import Operations


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(f"`{value}`" for value in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {_type(schema['items'])}"
    limits = [
        f"{word} {schema[key]}"
        for key, word in (("minimum", "≥"), ("maximum", "≤"), ("maxLength", "≤"))
        if key in schema
    ]
    kind = str(schema.get("type", "any"))
    if schema.get("maxLength"):
        kind += f" (≤ {schema['maxLength']} chars)"
    elif limits:
        kind += f" ({', '.join(limits)})"
    return kind


def _where(param: Param, operation: Operation) -> str:
    places = []
    if param.http == "query":
        places.append(f"`?{param.wire_name}=`")
    elif param.http == "path":
        places.append("path")
    elif param.http == "body":
        places.append("body")
    if param.tool and operation.tool:
        places.append("MCP")
    return ", ".join(places)


def _default(param: Param, operation: Operation) -> str:
    if param.required:
        return "required"
    http, tool = param.default, param.default_for_tool
    shown = "" if http in (None, (), []) else f"`{json.dumps(http)}`"
    if tool != http and operation.tool and param.tool:
        return f"{shown or 'none'} (MCP `{json.dumps(tool)}`)"
    return shown or "none"


# An operation that is also a tool: how a parameter's defaults read in the introduction.
_ANY = Operation("any", "GET", "/", "", lambda ops, a: {}, {}, tool=catalog.Tool("any", ""))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def operations_markdown(operations: Sequence[Operation] | None = None) -> str:
    """Every operation of the catalogue as Markdown, one section each."""
    if operations is None:
        operations = catalog.operations()
    lines = [
        "# The sidecar's operations",
        "",
        "Written from the operations catalogue (`api/catalog.py`); the OpenAPI document at",
        "/openapi.json and the MCP tools at /mcp/ and `groundwiki mcp` are made from the same list.",
        "",
        f"Every operation also takes `format` ({_type(FORMAT.schema)}; {_default(FORMAT, _ANY)}):",
        FORMAT.description + ".",
    ]
    for operation in operations:
        tool = f", MCP tool `{operation.tool.name}`" if operation.tool else ""
        lines += [
            "",
            f"## {operation.name}: {operation.method} {operation.path}{tool}",
            "",
            operation.summary + ".",
        ]
        if operation.tool:
            lines += ["", f"For agents: {operation.tool.description}"]
        taken = [p for p in operation.params if (p.http or p.tool) and p.name != "format"]
        seen: dict[str, Param] = {}
        for param in taken:  # one row per name: the GET's and the tool's spelling of it
            seen.setdefault(f"{param.name} {param.wire_name} {param.http}", param)
        if seen:
            lines += [
                "",
                "| argument | where | type | default | meaning |",
                "|---|---|---|---|---|",
            ]
            for param in seen.values():
                name = param.wire_name if param.http == "query" else param.name
                lines.append(
                    f"| `{name}` | {_where(param, operation)} | {_cell(_type(param.schema))} | "
                    f"{_cell(_default(param, operation))} | {_cell(param.description)} |"
                )
        lines += ["", "Errors: " + ", ".join(str(code) for code in operation.statuses()) + "."]
    return "\n".join(lines) + "\n"


# --- a worked session ---------------------------------------------------------------------------

QUESTION = "how does the lock detect drifted evidence"
# What changes from run to run (times, generations) or with any edit of the handbook (BM25's
# scores move with every page's words): the record keeps the order of the hits instead.
_VOLATILE = {"freshness", "took_ms", "generation", "synced_at", "score"}
_SCORE = re.compile(r", score [0-9.]+\)")


def _steady(value: Any) -> Any:
    """An answer without what changes from run to run (times, generations)."""
    if isinstance(value, dict):
        return {key: _steady(item) for key, item in value.items() if key not in _VOLATILE}
    if isinstance(value, list):
        return [_steady(item) for item in value]
    return value


def _call(ops: Operations, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A tool's structured content and text, as an MCP client receives them (the tool's
    defaults filled in as the SDK fills them)."""
    from groundwiki_sidecar.api.mcp_tools import result_of

    operation = next(op for op in catalog.operations() if op.tool and op.tool.name == tool)
    given = {p.name: p.default_for_tool for p in operation.params if p.tool and not p.required}
    given.update(arguments)
    answer = calls.answer(operation, ops, operation.arguments(given))
    result = result_of(operation, answer, given["format"])
    return _steady(result.structured_content or {}), result.content[0].text  # type: ignore[union-attr]


def agent_session(ops: Operations) -> str:
    """Search, context, drill-down and verify on this wiki, as Markdown: each call's arguments
    and what came back."""
    steps: list[tuple[str, str, dict[str, Any], str]] = []

    def step(title: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        structured, _ = _call(ops, tool, arguments)
        if tool == "get_context":
            shown = _SCORE.sub(")", structured["block"])
        else:
            shown = json.dumps(structured, indent=2, ensure_ascii=False)
        steps.append((title, tool, arguments, shown))
        return structured

    found = step("Search the pages (brief hits, compact: the defaults over MCP)", "search_wiki",
                 {"query": QUESTION, "limit": 3})  # fmt: skip
    step("Or take a prompt-ready block within a budget", "get_context",
         {"query": QUESTION, "budget": 400, "limit": 3, "style": "markdown"})  # fmt: skip
    top = found["hits"][0]
    raw = [chunk for chunk in top.get("chunk_ids", []) if chunk.startswith("ch_")][:1]
    chunks = step("Drill down: the evidence behind the best page, verbatim", "get_chunks",
                  {"ids": raw or top["chunk_ids"][:1]})  # fmt: skip
    quote = " ".join(chunks["chunks"][0]["text"].split()[:12])
    step("Verify the answer against what was read", "verify_citations",
         {"answer": f'The handbook says: "{quote}"', "chunks": [chunks["chunks"][0]["id"]],
          "pages": [top["key"]]})  # fmt: skip
    lines = [
        "# A worked agent session",
        "",
        "Recorded on this handbook by calling the MCP tools through the operations catalogue",
        "(`api/reference.py`), with the lexical and token lanes only, so that the record is the",
        "same on every machine. Times, generations and scores are left out.",
        "",
        f"The question: *{QUESTION}*",
    ]
    for n, (title, tool, arguments, shown) in enumerate(steps, 1):
        fence = "markdown" if tool == "get_context" else "json"
        lines += [
            "",
            f"## {n}. {title}",
            "",
            f"`{tool}` with",
            "",
            "```json",
            json.dumps(arguments, ensure_ascii=False),
            "```",
            "",
            "answers" + (" (its `block`)" if tool == "get_context" else "") + ":",
            "",
            f"````{fence}",
            shown.rstrip("\n"),
            "````",
        ]
    return "\n".join(lines) + "\n"
