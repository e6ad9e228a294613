"""Obsidian's `%% comments %%`: private notes that must never be published.

They are blanked in a page's body as soon as it is read (every character but newlines becomes a
space), so lines and columns stay where the writer sees them and nothing downstream (rendering,
site search, the sidecar, lint) can show or follow what a comment holds. Code keeps its `%%`:
fenced code and inline code spans are text, as in Obsidian. Like Obsidian, a `%%` that is never
closed comments out the rest of the page.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)*[ \t]{0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
MARK = "%%"


def blank_comments(body: str) -> str:
    """The body with every `%% ... %%` outside code replaced by spaces (newlines kept)."""
    if MARK not in body:
        return body
    out: list[str] = []
    fence: str | None = None
    in_comment = False
    for line in body.split("\n"):
        if not in_comment:
            opened = _FENCE.match(line)
            if fence is not None:
                closes = opened and opened.group(1)[0] == fence[0]
                if (
                    closes
                    and len(opened.group(1)) >= len(fence)
                    and not line[opened.end() :].strip()
                ):
                    fence = None
                out.append(line)
                continue
            if opened and (opened.group(1)[0] == "~" or "`" not in line[opened.end() :]):
                fence = opened.group(1)
                out.append(line)
                continue
        text, in_comment = _blank_line(line, in_comment)
        out.append(text)
    return "\n".join(out)


def _blank_line(line: str, in_comment: bool) -> tuple[str, bool]:
    """One line outside fenced code: comments blanked, code spans kept."""
    pieces: list[str] = []
    position = 0
    start = 0  # where the current comment began, while in one
    while position < len(line):
        if in_comment:
            end = line.find(MARK, position)
            if end < 0:
                break
            pieces.append(" " * (end + len(MARK) - start))
            position = end + len(MARK)
            in_comment = False
            continue
        tick = _BACKTICKS.search(line, position)
        mark = line.find(MARK, position)
        if mark < 0:
            pieces.append(line[position:])
            return "".join(pieces), False
        if tick is not None and tick.start() < mark:
            closing = _closing_run(line, tick.end(), len(tick.group(0)))
            if closing is not None:  # a code span on this line: its `%%` are text
                pieces.append(line[position:closing])
                position = closing
                continue
        pieces.append(line[position:mark])
        start = position = mark
        position = mark + len(MARK)
        in_comment = True
    if in_comment:
        pieces.append(" " * (len(line) - start))
        return "".join(pieces), True
    return "".join(pieces), False


def _closing_run(line: str, after: int, length: int) -> int | None:
    """The end of the backtick run that closes a code span opened by `length` backticks."""
    for run in _BACKTICKS.finditer(line, after):
        if len(run.group(0)) == length:
            return run.end()
    return None
