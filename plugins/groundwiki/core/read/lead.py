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
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import accumulate

from groundwiki.core.model.records import BodyMap, Link, Page
from groundwiki.core.read.markdown import block_tokens, parse_body

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
Offset = Callable[[int], int]  # 0-based line -> offset of its first character in a text


class _Reading:
    """Where the blocks, comments and wikilinks of a body's opening are: found by parsing it.
    A text read is the body's first `lines` lines; `offset` gives a line's place in it."""

    def block_starts(self, lines: list[str], end: int) -> list[int]:
        """Lines where the top-level blocks of `lines[:end]` start."""
        opening = "\n".join(lines[:end])
        return [t.map[0] for t in block_tokens(opening) if t.level == 0 and t.map]

    def code_and_headings(self, text: str, lines: int, offset: Offset) -> list[Edit]:
        # Most openings hold no syntax the line rules of `_lead` miss: they are not parsed.
        if not _MAY_HOLD_BLOCKS.search(text):
            return []
        return [
            (offset(token.map[0]), offset(token.map[1]), "")
            for token in block_tokens(text)
            if token.type in _NOT_PROSE and token.map
        ]

    def edits(self, text: str, lines: int, offset: Offset) -> list[Edit]:
        """The text's comments blanked and wikilinks replaced by their visible text."""
        if not any(mark in text for mark in _INLINE_MARKS):
            return []
        return _parsed(text, offset)


class _Compiled(_Reading):
    """The same, from what the page's compile found: its blocks where they are the site's
    (see `BodyMap`), its comments and its wikilinks. Parsing every page again cost a sidecar's
    restart more than the rest of it."""

    def __init__(self, page: Page, body_map: BodyMap) -> None:
        self.page = page
        self.map = body_map

    def block_starts(self, lines: list[str], end: int) -> list[int]:
        # The blocks of an opening but its last are the body's: no line after the opening
        # changes them. The last starts where the body's block does.
        if not self.map.site_blocks:
            return super().block_starts(lines, end)
        starts = self.map.block_starts
        return list(starts[: bisect_left(starts, end)])

    def code_and_headings(self, text: str, lines: int, offset: Offset) -> list[Edit]:
        if not self.map.site_blocks:
            return super().code_and_headings(text, lines, offset)
        # Without the parse's gate: where it finds no syntax, the parser finds only headings
        # whose line opens with `#`, which `_lead` skips all the same.
        return [
            (offset(first), offset(end), "")
            for first, end in self.map.code_and_headings
            if first < lines
        ]

    def edits(self, text: str, lines: int, offset: Offset) -> list[Edit]:
        page, size = self.page, len(text)
        edits: list[Edit] = []
        for start in self.map.comments:
            if start < size:
                span = _COMMENT_SPAN.match(page.body, start)
                if span and span.end() <= size:
                    edits.append((start, span.end(), " "))
        for link in page.links:  # in the body's order
            index = link.at.line - page.body_line
            if index >= lines:
                break
            if link.kind == "wikilink":
                start = offset(index) + link.at.column - 1
                if text.startswith(link.raw, start):
                    edits.append((start, start + len(link.raw), _visible_text(link)))
        return edits


def lead_text(body: str, words: int) -> str:
    """The first `words` words of the body's prose, joined by single spaces. The body is a
    page's as read (its `%% comments %%` already blanked)."""
    return _opening_lead(body, words, _Reading())


def page_lead(page: Page, words: int) -> str:
    """`lead_text` of the page's body, read from what its compile found."""
    if page.body_map is None:
        return lead_text(page.body, words)
    return _opening_lead(page.body, words, _Compiled(page, page.body_map))


def _opening_lead(body: str, words: int, reading: _Reading) -> str:
    # Only as much of the body is read as the lead needs: a long page's lead is in its first
    # blocks.
    lines = body.split("\n")
    # A line's offset in the body: the lines before it and a newline after each.
    before = list(accumulate(map(len, lines), initial=0))
    need = words + _SLACK
    while True:
        end = _line_with_words(body, need)
        if end is None or end >= len(lines):
            return _lead(body, len(lines), before, words, reading)
        # The last block of the opening may go on past it (an open fence or comment, a
        # paragraph a later `---` makes a heading): only the blocks before it are read as the
        # whole body reads them.
        starts = reading.block_starts(lines, end)
        cut = starts[-1] if starts else 0
        text = body[: before[cut] + cut - 1] if cut else ""
        lead = _lead(text, cut, before, words, reading)
        if len(lead.split()) >= words:
            return lead
        need *= 2


def _line_with_words(body: str, words: int) -> int | None:
    """How many lines, from the first, hold at least `words` words as written; None when the
    body holds fewer."""
    parts = body.split(None, words)
    if len(parts) < words:
        return None
    # The last of those words ends where its last spelling before the rest of the body does.
    rest = len(body) - len(parts[-1]) if len(parts) > words else len(body)
    word = parts[words - 1]
    return body.count("\n", 0, body.rfind(word, 0, rest) + len(word)) + 1


def _lead(text: str, lines: int, before: list[int], words: int, reading: _Reading) -> str:
    """The lead of `text`, the body's first `lines` lines."""
    size = len(text)

    def offset(index: int) -> int:
        return before[index] + index if index < lines else size

    kept: list[str] = []
    for line in _prose(text, lines, offset, reading).splitlines():
        line = line.strip()
        if not line or line.startswith(_SKIPPED_LINE_STARTS):
            continue
        kept.extend(line.split())
        if len(kept) >= words:
            break
    return " ".join(kept[:words])


def _prose(text: str, lines: int, offset: Offset, reading: _Reading) -> str:
    """The text with code and headings dropped, comments blanked and wikilinks replaced by
    their visible text, each at the place the parser found it."""
    dropped = reading.code_and_headings(text, lines, offset)
    return _apply(text, dropped, reading.edits(text, lines, offset))


def _parsed(text: str, offset: Offset) -> list[Edit]:
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
