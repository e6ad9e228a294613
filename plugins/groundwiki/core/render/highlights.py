"""Obsidian's `==highlight==` as `<mark>`, everywhere but code, math and URLs.

`<mark>` is inline HTML to Python-Markdown: the text between the tags is still Markdown, so
`==**bold** words==` keeps its emphasis.
"""

from __future__ import annotations

import re

from .code import literal_spans, protected_lines

# No space or `=` just inside the marks: `a == b == c` and `=====` are text, as in Obsidian.
_HIGHLIGHT = re.compile(r"(?<!=)==(?=[^\s=])(.+?)(?<=[^\s=])==(?!=)")


def mark_highlights(markdown: str) -> str:
    if "==" not in markdown:
        return markdown
    lines = markdown.split("\n")
    protected = protected_lines(lines)
    for index, line in enumerate(lines):
        if "==" in line and not protected[index]:
            lines[index] = _mark_line(line)
    return "\n".join(lines)


def _mark_line(line: str) -> str:
    pieces: list[str] = []
    cursor = 0
    for start, end in [*literal_spans(line), (len(line), len(line))]:
        if start < cursor:
            continue
        pieces.append(_HIGHLIGHT.sub(r"<mark>\1</mark>", line[cursor:start]))
        pieces.append(line[start:end])
        cursor = end
    return "".join(pieces)
