"""Where a page's Markdown is code or math, which the renderer's text passes must leave alone.

Highlights, block ids and callouts are found in the text a writer typed; inside fenced code, a
code span or a `$...$` / `$$...$$` formula the same characters are literal (a mermaid diagram's
`==>`, a formula's `x^2`), and MkDocs' extensions (superfences, arithmatex) need them intact.
The fences are found line by line as Python-Markdown and Obsidian find them, inside quotes and
indented containers too (a callout becomes an indented admonition).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(`{3,}|~{3,})(.*)$")
_MATH_FENCE = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*\$\$")
_BACKTICKS = re.compile(r"`+")
# Inline math as arithmatex reads it: no space just inside the dollars, `$$` as a pair.
_INLINE_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?=\S)[^$\n]*?(?<=\S)\$(?!\d)")
# Text that is a URL: `==` in a query string or base64 is no highlight.
_URL = re.compile(r"\]\([^)\s]*\)|<[a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*>|\b[a-zA-Z][\w+.-]*://\S+")


def protected_lines(lines: list[str]) -> list[bool]:
    """For each line: whether it is inside (or opens or closes) fenced code or a `$$` block."""
    scanner = CodeScanner()
    return [scanner.protected(line) for line in lines]


class CodeScanner:
    """`protected_lines` one line at a time, for a reader that grows its lines as it goes: asking
    `protected_lines` of all of them per line made a callout's 12,000 lazy lines quadratic."""

    def __init__(self) -> None:
        self.fence: str | None = None
        self.math = False

    def protected(self, line: str) -> bool:
        """Whether the line after those seen so far is code or math (opening, inside, closing)."""
        # Most lines hold no fence character: the substring tests spare them the regexes, which
        # made this the costliest step of rendering a vault.
        fence = self.fence
        if fence is not None:
            opened = _FENCE.match(line) if fence[0] in line else None
            if (
                opened
                and opened.group(1)[0] == fence[0]
                and len(opened.group(1)) >= len(fence)
                and not opened.group(2).strip()
            ):
                self.fence = None
            return True
        if self.math:
            self.math = "$$" not in line
            return True
        opened = _FENCE.match(line) if ("`" in line or "~" in line) else None
        if opened and (opened.group(1)[0] == "~" or "`" not in opened.group(2)):
            self.fence = opened.group(1)
            return True
        if "$$" in line and _MATH_FENCE.match(line):
            rest = line.split("$$", 1)[1]
            self.math = "$$" not in rest  # `$$x$$` on one line closes itself
            return True
        return False


def has_math(text: str) -> bool:
    """Whether Markdown text holds a formula arithmatex reads (`$...$`, `$$...$$`, a `$$`
    block) outside fenced code and code spans."""
    if "$" not in text or ("$$" not in text and not _INLINE_MATH.search(text)):
        return False  # most pages: no dollar, or none that could be a formula
    scanner = CodeScanner()
    for line in text.split("\n"):
        if scanner.fence is None and not scanner.math and "$$" in line and _MATH_FENCE.match(line):
            return True
        if scanner.protected(line) or "$" not in line:
            continue
        # Code spans out first, as Python-Markdown takes them before arithmatex: a `$` in one
        # closes no formula.
        for start, end in reversed(code_spans(line)):
            line = f"{line[:start]}\x02{line[end:]}"
        if _INLINE_MATH.search(line):
            return True
    return False


def literal_spans(line: str) -> list[tuple[int, int]]:
    """The (start, end) ranges of a line that are code spans, inline math or URLs, in order."""
    spans = code_spans(line)
    for pattern in (_INLINE_MATH, _URL):
        for match in pattern.finditer(line):
            if not _inside(spans, match.start()):
                spans.append((match.start(), match.end()))
    return sorted(spans)


def code_spans(line: str) -> list[tuple[int, int]]:
    """The (start, end) ranges of a line's code spans, in order."""
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        tick = _BACKTICKS.search(line, position)
        if tick is None:
            break
        closing = _closing_run(line, tick.end(), len(tick.group(0)))
        if closing is None:  # an unmatched run is text; a later run may open a span
            position = tick.end()
            continue
        spans.append((tick.start(), closing))
        position = closing
    return spans


def _inside(spans: list[tuple[int, int]], position: int) -> bool:
    return any(start <= position < end for start, end in spans)


def _closing_run(line: str, after: int, length: int) -> int | None:
    for run in _BACKTICKS.finditer(line, after):
        if len(run.group(0)) == length:
            return run.end()
    return None
