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
from bisect import bisect_right

from .markdown import block_tokens

MARK = "%%"
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def blank_comments(body: str) -> str:
    """The body with every `%% ... %%` outside code replaced by spaces (newlines kept)."""
    if MARK not in body:
        return body
    text = body
    cursor = 0
    protected = _Protected(text)
    while True:
        opened = protected.next_mark(cursor)
        if opened is None:
            return text
        closing = text.find(MARK, opened + len(MARK))
        end = len(text) if closing < 0 else closing + len(MARK)
        comment = text[opened:end]
        text = text[:opened] + _blank(comment) + text[end:]
        cursor = end
        if _changes_code(comment):
            protected = _Protected(text)  # what is code after it may have changed


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

    def __init__(self, text: str) -> None:
        self.text = text
        line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

        def offset(line: int) -> int:
            return line_starts[line] if line < len(line_starts) else len(text)

        ranges: list[tuple[int, int]] = []
        seen: set[tuple[int, int]] = set()
        for token in block_tokens(text):
            if not token.map:
                continue
            start, end = offset(token.map[0]), offset(token.map[1])
            if token.type == "fence":
                # Only fences: indented text may be an admonition's or a tab's content to the
                # site, so its `%%` are comments (blanking real indented code costs less than
                # publishing a comment).
                ranges.append((start, end))
            elif token.type == "html_block":
                ranges.extend(
                    (start + m.start(), start + m.end()) for m in _comments(text, start, end)
                )
            elif token.type == "inline" and (start, end) not in seen:
                seen.add((start, end))  # a table's cells share their row's lines
                ranges.extend(_code_spans(text, start, end))
                ranges.extend(
                    (start + m.start(), start + m.end()) for m in _comments(text, start, end)
                )
        ranges.sort()
        self.starts = [s for s, _ in ranges]
        self.ranges = ranges

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
        position = cursor
        while True:
            found = self.text.find(MARK, position)
            if found < 0:
                return None
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
