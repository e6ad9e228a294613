"""Lists nested deeper than Python-Markdown can take, flattened at a fixed depth.

Python-Markdown reads each level of a nested list with a recursive call: a page of 500 levels
(500 lines, a few KB) ended the build with `RecursionError`, in plain MkDocs too. Quotes and
callouts have their depth guard (see callouts.py); lists get theirs here: a line indented past
`MAX_INDENT` columns, outside fenced code, is indented `MAX_INDENT`, so its item stays at the
deepest level allowed, a sibling of the one before it. Lint names the page (`deep-list`).
"""

from __future__ import annotations

from groundwiki.core.read.markdown import MAX_INDENT, indent_width
from groundwiki.core.render.body.code import protected_lines


def flatten_deep_lists(markdown: str) -> str:
    """`markdown` with no line outside fenced code indented past `MAX_INDENT` columns."""
    deep = " " * (MAX_INDENT + 1)
    if deep not in markdown and "\t" not in markdown:
        return markdown  # most pages: no line is indented that far
    lines = markdown.split("\n")
    protected: list[bool] | None = None
    for index, line in enumerate(lines):
        if indent_width(line) <= MAX_INDENT:
            continue
        if protected is None:
            protected = protected_lines(lines)
        if not protected[index]:
            lines[index] = " " * MAX_INDENT + line.lstrip(" \t")
    return "\n".join(lines)
