"""Where in a page body's text an edit goes, read from the text alone: the destination of an
inline Markdown link, whether a line is a heading (where no block HTML may go), and the line of
prose a standalone citation comment marks."""

from __future__ import annotations

import re


def link_destination(body: str, at: int) -> tuple[int, int] | None:
    """Where the destination of the inline link whose `[` is at `at` is written, without the
    angle brackets of `<...>`; None when no `](` closes the text (`[text][label]`)."""
    position = closing_bracket(body, at)
    if position is None or not body.startswith("(", position + 1):
        return None
    position += 2
    while position < len(body) and body[position] in " \t":
        position += 1
    if body.startswith("\n", position):  # one line ending may come before the destination
        position += 1
        while position < len(body) and body[position] in " \t>":
            position += 1
    if body.startswith("<", position):
        end = body.find(">", position + 1)
        if end < 0 or "\n" in body[position + 1 : end]:
            return None
        return position + 1, end
    end = bare_destination_end(body, position)
    return (position, end) if end > position else None


def bare_destination_end(text: str, start: int) -> int:
    """Where a destination written without `<...>` that starts at `start` ends: at a space or
    control character, or at the `)` that balances none opened in it."""
    end, depth = start, 0
    while end < len(text):
        char = text[end]
        if char == "\\" and end + 1 < len(text):
            end += 2
            continue
        if char.isspace() or ord(char) < 0x20:
            break
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        end += 1
    return end


def closing_bracket(text: str, at: int) -> int | None:
    """The `]` that closes the `[` at `at`, skipping escaped and nested brackets; None when
    there is none before a blank line (which ends the paragraph, and so the link text)."""
    if not text.startswith("[", at):
        return None
    depth, position = 0, at
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return position
        elif char == "\n" and text.startswith("\n", position + 1):
            return None
        position += 1
    return None


_ATX_HEADING = re.compile(r" {0,3}(?:> ?)*#{1,6}(?:[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def within_heading(lines: list[str], index: int) -> bool:
    """Whether body line `index` is a heading's (an ATX heading, or a setext heading's text):
    what goes there must be inline, and its text is the heading's id."""
    if not 0 <= index < len(lines):
        return True  # unknown position: inline HTML is always safe
    if _ATX_HEADING.match(lines[index]):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return bool(lines[index].strip()) and bool(_SETEXT_UNDERLINE.match(following))


def claim_line(lines: list[str], index: int, column: int) -> int | None:
    """The text line a standalone citation comment belongs to: the nearest line above it that is
    neither blank nor another comment, when that line is prose."""
    if column != 1 and lines[index][: column - 1].strip():
        return None  # the comment stands inside a line of text: mark it in place
    above = index - 1
    while above >= 0 and (not lines[above].strip() or lines[above].strip().startswith("<!--")):
        above -= 1
    if above < 0:
        return None
    line = lines[above]
    if len(line) - len(line.lstrip()) >= 4:
        return None  # Python-Markdown may read it as indented code (or it is nested content)
    if line.lstrip().startswith(("```", "~~~", "#", "|", "<", "---", "***", "___")):
        return None  # not prose: fences, headings, tables, HTML and rules keep it in place
    return above
