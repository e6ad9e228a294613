"""Obsidian's `%% comments %%`: private notes that must never be published.

They are blanked in a page's body as soon as it is read (every character but newlines becomes a
space), so lines and columns stay where the writer sees them and nothing downstream (rendering,
site search, the sidecar, lint) can show or follow what a comment holds.

What is code is decided by a CommonMark parser, not guessed line by line: fenced code (inside quotes and lists too, closed where the container ends) and code spans
(across lines, not opened by an escaped backtick) keep their `%%` as text, as in Obsidian, and
so do HTML comments. A comment, once open, runs to the next `%%` whatever lies between, fences
included: it opened first. Like Obsidian, a `%%` that is never closed comments out the rest of
the page. A comment that swallowed code markers changes what is code after it, so the page is
parsed again from there.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from groundwiki.core.read.markdown import block_tokens

MARK = "%%"
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


# What reading the page again after comments that change code may cost, in characters parsed:
# this many times the page, plus a fixed allowance. Each such comment re-reads the page from
# the block before it, and 50,000 of them must not cost 50,000 readings (a reading costs about
# 3 s per MB of short blocks: 950 KB of them took 42 s at 16 times; at 2, at most about three
# readings). A page past it (no real note comes near: it takes dozens of comments that each hold
# a fence or a lone backtick, near its start) has the rest of its text blanked, as an unclosed
# `%%` would: hidden, never published.
REPARSE_BUDGET = 2
REPARSE_ALLOWANCE = 1 << 18


def blank_comments(body: str) -> str:
    """The body with every `%% ... %%` outside code replaced by spaces (newlines kept)."""
    if MARK not in body:
        return body
    quick = _blank_unparsed(body)
    return quick if quick is not None else _blank_parsed(body)


def _blank_unparsed(body: str) -> str | None:
    """`_blank_parsed(body)` without parsing the page, or None where that cannot be known so.

    Parsing is needed only to tell a `%%` inside code from one outside. `_Maybe` holds ranges
    that cover every range the parser could call code, found by looking at backticks, fence
    lines and `<!--` alone; a mark outside all of them is outside code whatever the parse. When
    every comment opens outside them and none changes what is code after it (the parsed
    reading then never reads the page again), the comments are the ones the parsed reading
    finds. Most notes of a real vault are so (the parse was a third of reading a page)."""
    maybe = _Maybe(body)
    blanked: list[tuple[int, int]] = []
    cursor = 0
    while True:
        opened = body.find(MARK, cursor)
        if opened < 0:
            break
        if maybe.holds(opened):
            return None
        closing = body.find(MARK, opened + len(MARK))
        end = len(body) if closing < 0 else closing + len(MARK)
        if end < len(body) and _changes_code(body[opened:end]):
            return None
        blanked.append((opened, end))
        cursor = end
    return _apply(body, blanked, 0)


class _Maybe:
    """Ranges of a page that hold every range `_Protected` could find, looked for without a
    parse: from each backtick run to the next run of its length (a code span's opener closes
    at the first such run, if its block has one), from each line holding ``` or ~~~ to the end
    of the next line that starts (after spaces and `>`) with as long a run of that character (a
    fence cannot close sooner, though its container may end it), and from each `<!--` to the
    next `-->`."""

    def __init__(self, text: str) -> None:
        ranges: list[tuple[int, int]] = []
        runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
        by_length: dict[int, list[int]] = {}
        for a, b in runs:
            by_length.setdefault(b - a, []).append(a)
        # A code span never holds a blank line (its block, a paragraph, a heading or a table
        # row, ends there): a run opens no span past the next one.
        blank_lines = [m.start() for m in _BLANK_LINE.finditer(text)]
        for a, b in runs:
            # An escaped first backtick leaves a run one shorter, opening at the next one.
            for start, size in ((a, b - a), (a + 1, b - a - 1)):
                same = by_length.get(size, [])
                index = bisect_right(same, start)
                if not size or index == len(same):
                    continue
                blank = bisect_right(blank_lines, start)
                if blank == len(blank_lines) or blank_lines[blank] > same[index]:
                    ranges.append((start, same[index] + size))
        for fence in ("`", "~"):
            ranges.extend(_maybe_fences(text, fence))
        for m in re.finditer("<!--", text):
            closing = text.find("-->", m.end())
            if closing >= 0:
                ranges.append((m.start(), closing + 3))
        ranges.sort()
        self.starts = [a for a, _ in ranges]
        # The furthest end of the ranges starting at or before each: one look finds a holder.
        self.reach: list[int] = []
        furthest = -1
        for _, b in ranges:
            furthest = max(furthest, b)
            self.reach.append(furthest)

    def holds(self, position: int) -> bool:
        index = bisect_right(self.starts, position) - 1
        return index >= 0 and self.reach[index] > position


def _maybe_fences(text: str, fence: str) -> list[tuple[int, int]]:
    run = re.compile(re.escape(fence) + "{3,}")
    lines = [(m.start(), m.end()) for m in _LINE.finditer(text) if m.end() > m.start()]
    closers: list[int] = []  # line numbers of lines that may close a fence
    lengths: list[int] = []  # and their runs' lengths
    openers: list[tuple[int, int]] = []
    for number, (a, b) in enumerate(lines):
        line = text[a:b]
        if fence * 3 not in line:
            continue
        openers.append((number, max(len(m.group(0)) for m in run.finditer(line))))
        head = run.match(line.lstrip(" \t>"))
        if head:
            closers.append(number)
            lengths.append(len(head.group(0)))
    ranges: list[tuple[int, int]] = []
    looks = 4 * len(lines) + 1000  # a page made of fence lines is left to the parse
    for number, size in openers:
        end = len(text)
        for index in range(bisect_right(closers, number), len(closers)):
            looks -= 1
            if looks < 0:
                return [(0, len(text))]
            if lengths[index] >= size:
                end = lines[closers[index]][1]
                break
        ranges.append((lines[number][0], end))
    return ranges


def _blank_parsed(body: str) -> str:
    """The comments blanked, code told from text by a CommonMark parse."""
    # Blanking keeps every offset, so comments are collected as ranges and the text is built
    # once: splicing it per comment made 200,000 `%% ` (600 KB) take 31 s.
    blanked: list[tuple[int, int]] = []
    cursor = 0
    protected = _Protected(body)
    budget = REPARSE_BUDGET * len(body) + REPARSE_ALLOWANCE
    unread: int | None = None  # the first comment blanked since the page was last read
    while True:
        opened = protected.next_mark(cursor)
        if opened is None:
            break
        closing = body.find(MARK, opened + len(MARK))
        end = len(body) if closing < 0 else closing + len(MARK)
        blanked.append((opened, end))
        cursor = end
        unread = opened if unread is None else unread
        if end < len(body) and _changes_code(body[opened:end]):
            # What is code after it may have changed: read the page again from the block
            # before the first comment blanked since the last reading (the blocks before that
            # one cannot change), as reading the whole page again would.
            restart = protected.restart_before(unread)
            unread = None
            budget -= len(body) - restart
            if budget < 0:
                blanked.append((end, len(body)))
                break
            protected = protected.reread(_apply(body, blanked, restart), restart)
    return _apply(body, blanked, 0)


def _apply(body: str, blanked: list[tuple[int, int]], start: int) -> str:
    """`body[start:]` with the ranges `blanked` (in order, not overlapping) blanked."""
    pieces: list[str] = []
    position = start
    for first, last in blanked[max(bisect_right(blanked, (start, -1)) - 1, 0) :]:
        if last <= position:
            continue
        first = max(first, position)
        pieces.append(body[position:first])
        pieces.append(_blank(body[first:last]))
        position = last
    pieces.append(body[position:])
    return "".join(pieces)


_LINE = re.compile(r"[^\n]*(?:\n|$)")
_BLANK_LINE = re.compile(r"^[ \t]*$", re.MULTILINE)
_FENCE_LINE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})", re.MULTILINE)


def _changes_code(comment: str) -> bool:
    """Whether blanking this comment can change what is code after it: it held a fence line,
    part of an HTML comment, or backtick runs left unpaired. Most comments hold none, and the
    page is then not parsed again."""
    if "<!--" in comment or "-->" in comment or _FENCE_LINE.search(comment):
        return True
    lengths: dict[int, int] = {}
    for run in re.finditer(r"`+", comment):
        size = len(run.group(0))
        lengths[size] = lengths.get(size, 0) + 1
    return any(count % 2 for count in lengths.values())


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


class _Protected:
    """Where `%%` is text, not a comment mark: code and HTML comments, as character ranges."""

    def __init__(self, text: str, base: int = 0, kept: _Protected | None = None) -> None:
        """The ranges of `text`, which is the page from offset `base` on (offsets are the
        page's); before `base`, those of `kept`, the page's earlier reading."""
        self.text = text
        self.base = base
        self.ranges: list[tuple[int, int]]
        self.top_starts: list[int]
        self.starts: list[int]
        line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

        def offset(line: int) -> int:
            return base + (line_starts[line] if line < len(line_starts) else len(text))

        ranges: list[tuple[int, int]] = []
        # Where blocks of the top level start: reading again from one of them reads the same
        # blocks before it (a block's start depends only on the lines before it and its own).
        top_starts: list[int] = []
        seen: set[tuple[int, int]] = set()
        for token in block_tokens(text):
            if not token.map:
                continue
            start, end = offset(token.map[0]), offset(token.map[1])
            if token.level == 0 and token.nesting != -1:
                top_starts.append(start)
            if token.type == "fence":
                # Only fences: indented text may be an admonition's or a tab's content to the
                # site, so its `%%` are comments (blanking real indented code costs less than
                # publishing a comment).
                ranges.append((start, end))
            elif token.type == "html_block":
                ranges.extend(
                    (start + m.start(), start + m.end())
                    for m in _comments(text, start - base, end - base)
                )
            elif token.type == "inline" and (start, end) not in seen:
                seen.add((start, end))  # a table's cells share their row's lines
                ranges.extend(
                    (base + a, base + b) for a, b in _code_spans(text, start - base, end - base)
                )
                ranges.extend(
                    (start + m.start(), start + m.end())
                    for m in _comments(text, start - base, end - base)
                )
        ranges.sort()
        starts = [s for s, _ in ranges]
        if kept is not None:
            # Blocks before `base` end before it: their ranges do too. The earlier reading's
            # lists are cut and extended in place (readings only move forward): copying them
            # per reading would cost the whole page each time.
            cut = bisect_left(kept.starts, base)
            del kept.ranges[cut:], kept.starts[cut:]
            del kept.top_starts[bisect_left(kept.top_starts, base) :]
            kept.ranges.extend(ranges)
            kept.starts.extend(starts)
            kept.top_starts.extend(top_starts)
            ranges, starts, top_starts = kept.ranges, kept.starts, kept.top_starts
        self.ranges = ranges
        self.starts = starts
        self.top_starts = top_starts

    def restart_before(self, position: int) -> int:
        """Where to read the page again from after a change at `position`: the start of the
        top-level block before the one holding it (a paragraph there may run on into the
        changed block once the change removes what interrupted it)."""
        index = bisect_right(self.top_starts, position) - 2
        return self.top_starts[index] if index >= 0 else 0

    def reread(self, text: str, base: int) -> _Protected:
        """The page read again from `base` on, where it is now `text`."""
        return _Protected(text, base, self)

    def _inside(self, position: int) -> int | None:
        """The end of the protected range holding `position`, if one does."""
        index = bisect_right(self.starts, position) - 1
        # Ranges may nest (a code span inside a table row's second cell): check a few back.
        for candidate in range(index, max(index - 4, -1), -1):
            start, end = self.ranges[candidate]
            if start <= position < end:
                return end
        return None

    def next_mark(self, cursor: int) -> int | None:
        """The first `%%` at or after the page offset `cursor` that is a mark."""
        position = max(cursor, self.base)
        while True:
            found = self.text.find(MARK, position - self.base)
            if found < 0:
                return None
            found += self.base
            end = self._inside(found)
            if end is None:
                return found
            position = max(end, found + 1)


def _comments(text: str, start: int, end: int) -> list[re.Match[str]]:
    return list(_HTML_COMMENT.finditer(text[start:end]))


def _code_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Code spans in a block's source, as CommonMark pairs them: a run of backticks not escaped
    opens one, and the next run of the same length closes it; a run left unmatched is text."""
    spans: list[tuple[int, int]] = []
    block = text[start:end]
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", block)]
    by_length: dict[int, list[int]] = {}
    for index, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(index)
    index = 0
    while index < len(runs):
        a, b = runs[index]
        if _escaped(block, a):
            a += 1  # `\`` is a literal backtick; the rest of the run may still open a span
            if a == b:
                index += 1
                continue
        same = by_length.get(b - a, [])
        after = bisect_right(same, index)
        closing = same[after] if after < len(same) else None
        if closing is None:
            index += 1
            continue
        spans.append((start + a, start + runs[closing][1]))
        index = closing + 1
    return spans


def _escaped(block: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and block[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1
