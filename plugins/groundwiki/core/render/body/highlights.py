"""Obsidian's `==highlight==` as `<mark>`, everywhere but code, math and URLs.

`<mark>` is inline HTML to Python-Markdown: the text between the tags is still Markdown, so
`==**bold** words==` keeps its emphasis.
"""

from __future__ import annotations

import re

from groundwiki.core.render.body.code import literal_spans, protected_lines

# No space or `=` just inside the marks: `a == b == c` and `=====` are text, as in Obsidian.
_HIGHLIGHT = re.compile(r"(?<!=)==(?=[^\s=])(.+?)(?<=[^\s=])==(?!=)")
# An HTML tag, its quoted attribute values whole: `<span title="a==b==c">` holds no highlight.
_TAG = re.compile(r"""</?[A-Za-z][\w:-]*(?:\s(?:[^<>"']|"[^"]*"|'[^']*')*)?/?>""")
# Base64 ends in `=` or `==`: a `data:` URI anywhere in text is no highlight's edge.
_DATA_URI = re.compile(r"\bdata:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+(?:=[\w.+-]*)?)*,[\w+/=%.-]*")
# Neither space nor `=`: a masked stretch can sit inside a highlight, never be its mark.
_MASK = "\x00"


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
    """The line with its highlights marked. Code, math, URLs, HTML tags and `data:` URIs are
    masked with a character of the same length, so no `==` of theirs opens or closes a mark,
    while a highlight may still span them (`==a `code` b==`, as in Obsidian)."""
    masked = list(line)
    spans = [*literal_spans(line)]
    spans += [match.span() for match in _TAG.finditer(line)]
    spans += [match.span() for match in _DATA_URI.finditer(line)]
    for start, end in spans:
        masked[start:end] = _MASK * (end - start)
    pieces: list[str] = []
    cursor = 0
    for match in _HIGHLIGHT.finditer("".join(masked)):
        start, end = match.span()
        pieces.append(line[cursor:start])
        pieces.append(f"<mark>{line[start + 2 : end - 2]}</mark>")
        cursor = end
    pieces.append(line[cursor:])
    return "".join(pieces)
