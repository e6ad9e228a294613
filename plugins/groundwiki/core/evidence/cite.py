"""Where a quoted text stands in a raw source, as the line range a provenance comment cites.

A writer copies a sentence from the evidence; the lines to cite are where it stands in the text
the core extracts (for HTML and PDF that text, not the file's bytes, is what citations number).
The quote matches whatever the line breaks and runs of spaces between its words (a sentence
wrapped over two lines, or copied from a rendered page, is still found), and nothing else:
case and punctuation count. When it does not stand verbatim, the closest passages are offered
instead, so a writer sees what the source says rather than a bare "not found".

The comment then goes where the claim it supports stands in the page (`cite_in_page`): after the
sentence that shares the most of the quote's words (common short words aside; ties to the
first), when it shares at least half of them; else at the end of the page. Only
sentences of paragraphs count (not the frontmatter, code, headings, tables or HTML blocks), and
the comment must read as a citation where it lands, or it is not put there.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise

from groundwiki.core.model.records import Source
from groundwiki.core.read.comments import blank_comments
from groundwiki.core.read.frontmatter import split_page
from groundwiki.core.read.markdown import block_tokens, parse_body

CANDIDATES = 3
# Windows compared closely (difflib) after a cheap filter by shared words.
SHORTLIST = 30


@dataclass(frozen=True)
class Place:
    """Lines `start`-`end` (1-based, inclusive) of a source; `score` 1.0 for the quote itself,
    else how close the lines' text is to it (difflib's ratio, 0 to 1)."""

    start: int
    end: int
    score: float

    def spec(self, source: str) -> str:
        """The citation as a provenance comment spells it: `raw-sources/a.md#L3-L5`, `#L3`."""
        lines = f"L{self.start}" if self.start == self.end else f"L{self.start}-L{self.end}"
        return f"{source}#{lines}"


def comment(spec: str) -> str:
    """The provenance comment for a citation spec."""
    return f"<!-- from: {spec} -->"


@dataclass(frozen=True)
class Located:
    found: Place | None  # the first place the quote stands verbatim
    occurrences: int  # how many places it stands (a quote found twice may need more words)
    candidates: tuple[Place, ...]  # the closest places, best first, when it stands nowhere


def locate(source: Source, quote: str, candidates: int = CANDIDATES) -> Located:
    """Where `quote` stands in the source's extracted text. Raises ValueError for an empty
    quote or a source without text (say why: `source.problem`)."""
    wanted = " ".join(quote.split())
    if not wanted:
        raise ValueError("the quote is empty: give the text to cite")
    if source.text is None:
        raise ValueError(f"{source.path} has no text to cite: {source.problem or 'unreadable'}")
    flat, starts, owners = _flatten(source.lines)
    at = flat.find(wanted)
    if at >= 0:
        occurrences = 0
        position = at
        while position >= 0:
            occurrences += 1
            position = flat.find(wanted, position + 1)
        first = owners[bisect_right(starts, at) - 1]
        last = owners[bisect_right(starts, at + len(wanted) - 1) - 1]
        return Located(Place(first, last, 1.0), occurrences, ())
    return Located(None, 0, _closest(source.lines, wanted, candidates))


def _flatten(lines: list[str]) -> tuple[str, list[int], list[int]]:
    """The source's words joined by single spaces, where each non-blank line starts in that
    text, and which line (1-based) each of those starts is."""
    parts: list[str] = []
    starts: list[int] = []
    owners: list[int] = []
    offset = 0
    for number, line in enumerate(lines, start=1):
        words = " ".join(line.split())
        if not words:
            continue
        starts.append(offset)
        owners.append(number)
        parts.append(words)
        offset += len(words) + 1
    return " ".join(parts), starts, owners


def _closest(lines: list[str], wanted: str, count: int) -> tuple[Place, ...]:
    """The `count` windows of consecutive lines most like the quote, about as many words long,
    best first (equal scores: the earlier lines first), none sharing a word with it left out."""
    target = len(wanted.split())
    quote_words = set(wanted.casefold().split())
    windows: list[tuple[int, int, str]] = []
    for start in range(1, len(lines) + 1):
        if not lines[start - 1].strip():
            continue
        words: list[str] = []
        end = start
        while end <= len(lines):
            words += lines[end - 1].split()
            if len(words) >= target:
                break
            end += 1
        windows.append((start, min(end, len(lines)), " ".join(words)))
    shared = [
        (len(quote_words & set(text.casefold().split())), start, end, text)
        for start, end, text in windows
    ]
    shortlist = sorted((item for item in shared if item[0]), key=lambda item: (-item[0], item[1]))[
        :SHORTLIST
    ]
    scored = [
        Place(start, end, round(SequenceMatcher(None, wanted, text, autojunk=False).ratio(), 3))
        for _, start, end, text in shortlist
    ]
    scored.sort(key=lambda place: (-place.score, place.start))
    chosen: list[Place] = []
    for place in scored:  # overlapping windows say the same thing: keep the best of them
        if all(place.end < other.start or place.start > other.end for other in chosen):
            chosen.append(place)
        if len(chosen) == count:
            break
    return tuple(chosen)


# Words too common to say which sentence a quote supports.
_COMMON = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been but by for from had has have in into is it its of on or so "
        "than that the their then there these this those to was were which with",
    )
)
_WORD = re.compile(r"\w+")
# A sentence ends at `.`, `!` or `?` (closing quotes, brackets or emphasis after it) followed
# by a space and no lowercase letter ("e.g. this" goes on), or at the end of its paragraph.
_END = re.compile(r"[.!?]+[\"'\u2019\u201d)\]*_]*")
_SPACE = re.compile(r"\s+")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TRAILING_COMMENTS = re.compile(r"(?:[ \t]*<!--[^\n]*?-->)*")


@dataclass(frozen=True)
class Spot:
    """Where a comment went in a page file: on `line` (1-based) at `column` (0-based), after
    `sentence`, which shares `shared` of the quote's `wanted` words (both 0 when the writer
    named the line)."""

    line: int
    column: int
    sentence: str
    shared: int = 0
    wanted: int = 0


def cite_in_page(
    page_text: str, cited: str, rel_path: str, quote: str, after: int | None = None
) -> tuple[str, Spot | None]:
    """The page with the comment `cited` added, and where: at the end of file line `after`
    when given, else after the first sentence `ranked` gives where it reads as a citation,
    else (the spot None) on a line of its    own at the end of the page. Raises ValueError when the comment cannot go there (a line
    that is not text; a page that ends in code or in frontmatter never closed)."""
    _text_lines(page_text, rel_path)
    before = _cites(page_text, cited, rel_path)
    if after is not None:
        spot = spot_after(page_text, after, rel_path)
        changed = _inserted(page_text, spot, cited, rel_path, before)
        if changed is None:
            raise ValueError(f"a comment at the end of line {after} of {rel_path} would be code")
        return changed, spot
    for spot in ranked(page_text, quote, rel_path):
        changed = _inserted(page_text, spot, cited, rel_path, before)
        if changed is not None:
            return changed, spot
    ending = "\r\n" if page_text.endswith("\r\n") else "\n"
    separator = "" if page_text.endswith("\n") or not page_text else ending
    changed = page_text + separator + cited + ending
    if len(_cites(changed, cited, rel_path)) == len(before):
        raise ValueError(f"{rel_path} ends inside code (a fence never closed?): give --after LINE")
    return changed, None


def ranked(page_text: str, quote: str, rel_path: str) -> list[Spot]:
    """The ends of the page's sentences that share at least half of the quote's words (the
    common short ones aside), most shared first, ties in the page's order."""
    wanted = words_of(quote)
    spots = []
    for line, column, text in _sentences(page_text, rel_path):
        shared = len(wanted & words_of(text))
        if shared and 2 * shared >= len(wanted):
            spots.append(Spot(line, column, text, shared, len(wanted)))
    return sorted(spots, key=lambda spot: -spot.shared)  # stable: ties keep the page's order


def words_of(text: str) -> set[str]:
    """The words of a text as placing compares them: casefolded, the common ones left out
    (unless it has no other)."""
    found = set(_WORD.findall(text.casefold()))
    return found - _COMMON or found


def spot_after(page_text: str, line: int, rel_path: str) -> Spot:
    """The end of file line `line` (1-based), which must be a line of a paragraph. Raises
    ValueError saying why another line cannot take a comment."""
    lines, body, body_line = _text_lines(page_text, rel_path)
    if not 1 <= line <= len(lines):
        raise ValueError(f"{rel_path} has no line {line}: it has {len(lines)}")
    if line < body_line:
        raise ValueError(f"line {line} of {rel_path} is in the frontmatter")
    for first, columns in _paragraphs(lines, body, body_line):
        if first <= line < first + len(columns):
            start, end = columns[line - first]
            return Spot(line, end, " ".join(_no_comments(lines[line - 1][start:end]).split()))
    for token in block_tokens(body):
        span = token.map if token.type in ("fence", "code_block") else None
        if span and span[0] <= line - body_line < span[1]:
            raise ValueError(f"line {line} of {rel_path} is code")
    raise ValueError(
        f"line {line} of {rel_path} is not a line of text (it is blank, a heading, a table "
        "or HTML): give a line of the paragraph the citation supports"
    )


def _inserted(
    page_text: str, spot: Spot, cited: str, rel_path: str, before: list[int]
) -> str | None:
    """The page with ` cited` at the spot (line endings and BOM kept), or None when it would
    not read as a citation there (inside a code span); `before`: the lines where the page
    cites it already."""
    lines = page_text.split("\n")
    index = spot.line - 1
    column = spot.column + (len(page_text) - len(page_text.lstrip("\ufeff")) if index == 0 else 0)
    line = lines[index]
    lines[index] = f"{line[:column]} {cited}{line[column:]}"
    changed = "\n".join(lines)
    now = _cites(changed, cited, rel_path).count(spot.line)
    return changed if now > before.count(spot.line) else None


def _cites(page_text: str, cited: str, rel_path: str) -> list[int]:
    """The lines where the comment `cited` stands and reads as a citation, as a page is read
    (pages.py): not in the frontmatter, code or a `%%` comment."""
    split = split_page(page_text, rel_path)
    body = parse_body(blank_comments(split.body), rel_path, split.body_line)
    return [found.line for found in body.comments if found.raw == cited]


def _text_lines(page_text: str, rel_path: str) -> tuple[list[str], str, int]:
    """The page's lines as it is read (CRLF as LF, no BOM, `%%` comments blanked), its body and
    the body's first line. Raises ValueError when the frontmatter is never closed."""
    split = split_page(page_text, rel_path)
    if any(problem.detail == "unclosed" for problem in split.problems):
        raise ValueError(f"the frontmatter of {rel_path} is never closed")
    body = blank_comments(split.body)
    text = page_text.replace("\r\n", "\n").lstrip("\ufeff")
    lines = text.split("\n")[: split.body_line - 1] + body.split("\n")
    return (lines[:-1] if len(lines) > 1 and not lines[-1] else lines), body, split.body_line


def _paragraphs(
    lines: list[str], body: str, body_line: int
) -> list[tuple[int, list[tuple[int, int]]]]:
    """Each paragraph's first file line, and where its text stands on each of its lines (start
    and end column: container markers before it and spaces after it left out). Code, headings,
    tables and HTML blocks are no paragraphs, and neither is a paragraph whose text cannot be
    found on its lines."""
    found: list[tuple[int, list[tuple[int, int]]]] = []
    tokens = block_tokens(body)
    for opening, inline in pairwise(tokens):
        if opening.type != "paragraph_open" or not opening.map or inline.type != "inline":
            continue
        first = body_line + opening.map[0]
        contents = inline.content.split("\n")
        if len(contents) != opening.map[1] - opening.map[0]:
            continue
        columns: list[tuple[int, int]] = []
        for offset, content in enumerate(contents):
            text = lines[first - 1 + offset].rstrip()
            if not content.strip() or not text.endswith(content.strip()):
                break
            columns.append((len(text) - len(content.strip()), len(text)))
        else:
            found.append((first, columns))
    return found


def _sentences(page_text: str, rel_path: str) -> list[tuple[int, int, str]]:
    """The sentences of the page's paragraphs: the line and column right after each (after the
    comments that already follow it on its line), and its words without HTML comments."""
    lines, body, body_line = _text_lines(page_text, rel_path)
    sentences: list[tuple[int, int, str]] = []
    for first, columns in _paragraphs(lines, body, body_line):
        # The paragraph's text as one string, and where each of its characters stands.
        text = "\n".join(lines[first - 1 + i][a:b] for i, (a, b) in enumerate(columns))
        where = [
            (first + i, column) for i, (a, b) in enumerate(columns) for column in range(a, b + 1)
        ]
        plain = _no_comments(text)
        end_of_text = len(plain.rstrip())
        ends = [m.end() for m in _END.finditer(plain) if _ends_sentence(plain, m.end())]
        start = 0
        for end in [*(e for e in ends if e < end_of_text), end_of_text]:
            words = " ".join(plain[start:end].split())
            if words:
                after = _TRAILING_COMMENTS.match(text, end)
                line, column = where[after.end() if after else end]
                sentences.append((line, column, words))
            start = end
    return sentences


def _no_comments(text: str) -> str:
    """The text with each HTML comment blanked (newlines kept), so positions stay."""
    return _HTML_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _ends_sentence(text: str, end: int) -> bool:
    space = _SPACE.match(text, end)  # none: `example.com`, `0.8`
    return space is not None and not text[space.end() : space.end() + 1].islower()
