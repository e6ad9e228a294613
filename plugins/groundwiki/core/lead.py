"""A page's lead: the opening prose of its body, the words a page vector is embedded from.

What is prose is decided by the core's parser, as for links: fenced code is no prose, so a
`[[link]]` or a `<!-- comment -->` quoted in a fence never reaches the lead, and one quoted in a
code span stays the text it is. Headings and comments (provenance) are left out; a wikilink
reads as the words a reader sees, an embed as nothing (it shows another file, not its name).

Everything else is the body's text as written, line by line, Markdown marks included: page
vectors already embedded from it stay valid, and rankings with them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from .markdown import block_tokens, parse_body
from .model import Link, Page

# Blocks that are no prose, dropped with every line they span.
_NOT_PROSE = frozenset({"fence", "heading_open"})
# What a located comment spans in the file: inside a quote, its lines carry `>` the parser
# stripped, so the comment's text as parsed is not what the file holds.
_COMMENT_SPAN = re.compile(r"<!--.*?-->", re.DOTALL)
# Lines that open no prose even outside a block: a tag line (`#tag`), a `---` rule or setext
# underline, a comment never closed.
_SKIPPED_LINE_STARTS = ("#", "<!--", "---")
# Where the parser may find a fence or a heading the line rules above do not drop (one in a
# quote or list item, a setext heading), and inline syntax it reads: text without any of it
# needs no parse. Possessive and anchored, so a line of 100,000 dashes is read once.
_MAY_HOLD_BLOCKS = re.compile(
    r"^[ \t>*+\-\d.)]*+(?:```|~~~)"  # a fence, maybe in a quote or list item
    r"|^[ \t]*+[>*+\-\d.)][ \t>*+\-\d.)]*+#"  # a heading in a quote or list item
    r"|^[ \t>]*+(?:=+|-+)[ \t]*$",  # a setext heading's underline
    re.MULTILINE,
)
_INLINE_MARKS = ("[[", "<!--")
# Words of the opening read beyond the lead's: markup, headings and code it leaves out.
_SLACK = 100


Edit = tuple[int, int, str]  # replace body[start:end] with the text


def lead_text(body: str, words: int) -> str:
    """The first `words` words of the body's prose, joined by single spaces. The body is a
    page's as read (its `%% comments %%` already blanked)."""
    return _opening_lead(body, words, None)


def page_lead(page: Page, words: int) -> str:
    """`lead_text` of the page's body, from the wikilinks and citations its compile located
    where it can: parsing every page again cost a sidecar's restart more than the rest of it."""
    return _opening_lead(page.body, words, _located(page))


def _located(page: Page) -> list[Edit] | None:
    """The page's wikilinks and comments as edits, or None when the body holds a comment that
    is no citation (or `<!--` quoted in code): then only a parse tells where comments are."""
    body = page.body
    comments = [c for c in page.citations if c.origin == "inline"]
    if body.count("<!--") != len(comments):
        return None
    offset = _offsets(body)
    edits: list[Edit] = []
    for comment in comments:
        start = offset(comment.at.line - page.body_line) + comment.at.column - 1
        span = _COMMENT_SPAN.match(body, start)
        if span is None:
            return None
        edits.append((start, span.end(), " "))
    for link in page.links:
        if link.kind == "wikilink":
            start = offset(link.at.line - page.body_line) + link.at.column - 1
            if body.startswith(link.raw, start):
                edits.append((start, start + len(link.raw), _visible_text(link)))
    return edits


def _opening_lead(body: str, words: int, located: list[Edit] | None) -> str:
    # Only as much of the body is read as the lead needs: a long page's lead is in its first
    # blocks.
    lines = body.split("\n")
    need = words + _SLACK
    while True:
        end = _line_with_words(lines, need)
        if end >= len(lines):
            return _lead(body, words, located)
        # The last block of the opening may go on past it (an open fence or comment, a
        # paragraph a later `---` makes a heading): only the blocks before it are read as the
        # whole body reads them.
        opening = "\n".join(lines[:end])
        starts = [t.map[0] for t in block_tokens(opening) if t.level == 0 and t.map]
        lead = _lead("\n".join(lines[: starts[-1] if starts else 0]), words, located)
        if len(lead.split()) >= words:
            return lead
        need *= 2


def _line_with_words(lines: list[str], words: int) -> int:
    """How many lines, from the first, hold at least `words` words as written."""
    count = 0
    for index, line in enumerate(lines):
        count += len(line.split())
        if count >= words:
            return index + 1
    return len(lines)


def _lead(text: str, words: int, located: list[Edit] | None) -> str:
    kept: list[str] = []
    for line in _prose(text, located).splitlines():
        line = line.strip()
        if not line or line.startswith(_SKIPPED_LINE_STARTS):
            continue
        kept.extend(line.split())
        if len(kept) >= words:
            break
    return " ".join(kept[:words])


def _offsets(text: str) -> Callable[[int], int]:
    """0-based line index -> offset of the line's first character."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return lambda index: line_starts[index] if index < len(line_starts) else len(text)


def _prose(text: str, located: list[Edit] | None) -> str:
    """The text with code and headings dropped, comments blanked and wikilinks replaced by
    their visible text, each at the place the parser found it."""
    offset = _offsets(text)
    # Most openings hold no syntax the line rules of `_lead` miss: they are not parsed.
    dropped: list[Edit] = []
    if _MAY_HOLD_BLOCKS.search(text):
        dropped = [
            (offset(token.map[0]), offset(token.map[1]), "")
            for token in block_tokens(text)
            if token.type in _NOT_PROSE and token.map
        ]
    if located is not None:
        edits = [edit for edit in located if edit[1] <= len(text)]
    elif any(mark in text for mark in _INLINE_MARKS):
        edits = _parsed(text, offset)
    else:
        edits = []
    return _apply(text, dropped, edits)


def _parsed(text: str, offset: Callable[[int], int]) -> list[Edit]:
    structure = parse_body(text, "", 1)
    edits: list[Edit] = []
    for link in structure.links:
        if link.kind == "wikilink":
            start = offset(link.at.line - 1) + link.at.column - 1
            if text.startswith(link.raw, start):
                edits.append((start, start + len(link.raw), _visible_text(link)))
    for comment in structure.comments:
        start = offset(comment.line - 1) + comment.column - 1
        span = _COMMENT_SPAN.match(text, start)
        if span:
            edits.append((start, span.end(), " "))
    return edits


def _visible_text(link: Link) -> str:
    if link.embed:
        return ""
    return link.label or link.target or (link.anchor or "").lstrip("^")


def _apply(body: str, dropped: list[Edit], edits: list[Edit]) -> str:
    """The body with the edits made; an edit inside dropped lines (a comment in a heading) or
    overlapping one made before it is not made."""
    dropped.sort()
    merged: list[Edit] = []
    for start, end, text in dropped:
        if merged and start < merged[-1][1]:
            continue
        merged.append((start, end, text))
    starts = [start for start, _, _ in merged]
    for edit in sorted(edits):
        at = bisect_right(starts, edit[0]) - 1
        if at >= 0 and edit[0] < merged[at][1]:
            continue
        if at + 1 < len(merged) and merged[at + 1][0] < edit[1]:
            continue
        merged.insert(at + 1, edit)
        starts.insert(at + 1, edit[0])
    pieces: list[str] = []
    cursor = 0
    for start, end, text in merged:
        pieces.append(body[cursor:start])
        pieces.append(text)
        cursor = end
    pieces.append(body[cursor:])
    return "".join(pieces)
