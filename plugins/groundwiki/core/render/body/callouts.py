"""Obsidian callouts (`> [!tip]- Title`) as mkdocs-material admonitions.

A callout is a block quote whose first line is `[!type]`, with `+` (foldable, open) or `-`
(folded) after it and an optional title. It is rewritten to the syntax of the `admonition`
extension (`!!! tip "Title"`) or, when it folds, of `pymdownx.details` (`???+ tip "Title"`),
with its content indented under it, so Python-Markdown renders the content as any other
Markdown (lists, code, nested callouts) and material styles it. Obsidian's types are
material's, one to one; an unknown type looks like a note and keeps its name as a class.

Only quote markers are rewritten: the content's lines, fences included, keep their text. A
quote without `[!type]` stays a quote (a callout inside it is still converted).
"""

from __future__ import annotations

import re
from html import escape

from groundwiki.core.render.body.code import CodeScanner, protected_lines

KNOWN_TYPES = frozenset(
    [
        "note",
        "abstract",
        "summary",
        "tldr",
        "info",
        "todo",
        "tip",
        "hint",
        "important",
        "success",
        "check",
        "done",
        "question",
        "help",
        "faq",
        "warning",
        "caution",
        "attention",
        "failure",
        "fail",
        "missing",
        "danger",
        "error",
        "bug",
        "example",
        "quote",
        "cite",
    ]
)

_QUOTE = re.compile(r"^([ \t]*)>[ \t]?(.*)$")
_CALLOUT = re.compile(r"^[ \t]*\[!([^\]\n]+)\]([+-]?)[ \t]*(.*?)[ \t]*$")
# A line that starts a block of its own: it cannot continue a quoted paragraph lazily.
_BLOCK_START = re.compile(
    r"^[ \t]*(?:#|`{3}|~{3}|[-*+][ \t]|\d+[.)][ \t]|\||<|-{3,}|\*{3,}|_{3,}|\$\$)"
)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_NOT_CLASS = re.compile(r"[^\w-]+")
# Quotes nested deeper than this are left as written: each level is a recursive call here and
# in Python-Markdown, and a page of `>>>>…` must not crash the build. No real note nests so deep.
MAX_DEPTH = 20


def convert_callouts(markdown: str) -> str:
    if "[!" not in markdown:
        return markdown
    lines = markdown.split("\n")
    converted = _convert(lines)
    return markdown if converted is lines else "\n".join(converted)


def _convert(lines: list[str], depth: int = 0) -> list[str]:
    """The lines with every callout converted; the same list when there is none."""
    if depth >= MAX_DEPTH:
        return lines
    out: list[str] = []
    changed = False
    protected = protected_lines(lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        quote = None if protected[index] else _QUOTE.match(line)
        if quote is None:
            out.append(line)
            index += 1
            continue
        indent = quote.group(1)
        inner, end = _quote_group(lines, index, indent)
        callout = _CALLOUT.match(inner[0])
        if callout is not None:
            if out and out[-1].strip():
                out.append("")  # a callout may interrupt a paragraph; an admonition may not
            # A list item's content is indented by its marker's width (CommonMark, Obsidian),
            # Python-Markdown's by 4: under 4, the admonition would end the list and leak `!!!`.
            if 0 < len(indent) < 4 and indent.strip(" ") == "" and _in_list_item(lines, index):
                indent = "    "
            out.extend(_admonition(indent, callout, _convert(inner[1:], depth + 1)))
            out.append("")
            changed = True
        else:
            converted = _convert(inner, depth + 1)
            if converted is inner:
                out.extend(lines[index:end])
            else:
                out.extend(f"{indent}> {text}".rstrip() for text in converted)
                changed = True
        index = end
    return out if changed else lines


def _in_list_item(lines: list[str], index: int) -> bool:
    """Whether the indented line `index` continues a list item: the nearest line above it that
    is indented less is a list item's first line."""
    own = len(lines[index]) - len(lines[index].lstrip())
    for above in range(index - 1, -1, -1):
        line = lines[above]
        if not line.strip() or len(line) - len(line.lstrip()) >= own:
            continue
        return _LIST_ITEM.match(line) is not None
    return False


def _quote_group(lines: list[str], start: int, indent: str) -> tuple[list[str], int]:
    """The content of the block quote starting at `start` (markers removed), and where it ends.
    A line without `>` continues it when it continues a quoted paragraph (CommonMark's lazy
    continuation, which Obsidian follows)."""
    inner: list[str] = []
    # Whether the last line of `inner` is code, read as the lines come.
    scanner, last_protected = CodeScanner(), False
    index = start
    while index < len(lines):
        line = lines[index]
        quote = _QUOTE.match(line)
        if quote is not None and len(quote.group(1)) <= len(indent) + 3:
            inner.append(quote.group(2))
        elif (
            inner
            and inner[-1].strip()
            and line.strip()
            and not _BLOCK_START.match(line)
            and not _BLOCK_START.match(inner[-1])
            and not _CALLOUT.match(inner[-1])
            and not last_protected
        ):
            inner.append(line.strip())
        else:
            break
        last_protected = scanner.protected(inner[-1])
        index += 1
    return inner, index


def _admonition(indent: str, callout: re.Match[str], content: list[str]) -> list[str]:
    kind = callout.group(1).strip().lower()
    name = _NOT_CLASS.sub("-", kind).strip("-") or "note"
    classes = name if name in KNOWN_TYPES else f"note {name}"
    marker = {"": "!!!", "+": "???+", "-": "???"}[callout.group(2)]
    title = callout.group(3) or (kind[:1].upper() + kind[1:])
    head = f'{indent}{marker} {classes} "{_title(title)}"'
    body = [f"{indent}    {text}" if text.strip() else "" for text in content]
    return [head, *body]


def _title(text: str) -> str:
    """A title as the admonition's one-line quoted string: HTML and quotes escaped (a title is
    shown as text with its Markdown), and a leading `#` kept from making it a heading."""
    escaped = escape(text, quote=True)
    return "&#35;" + escaped[1:] if escaped.startswith("#") else escaped
