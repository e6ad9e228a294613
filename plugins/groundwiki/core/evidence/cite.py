"""Where a quoted text stands in a raw source, as the line range a provenance comment cites.

A writer copies a sentence from the evidence; the lines to cite are where it stands in the text
the core extracts (for HTML and PDF that text, not the file's bytes, is what citations number).
The quote matches whatever the line breaks and runs of spaces between its words (a sentence
wrapped over two lines, or copied from a rendered page, is still found), and nothing else:
case and punctuation count. When it does not stand verbatim, the closest passages are offered
instead, so a writer sees what the source says rather than a bare "not found".
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from difflib import SequenceMatcher

from groundwiki.core.model.records import Source

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
