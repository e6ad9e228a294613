"""What a citation covers in its source: the cited text, its hash, and the chunks it points at."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from groundwiki.core.model.records import Chunk, Citation, Pointer, Source
from groundwiki.core.sources.extract import sha256_text


def cited_text(citation: Citation, source: Source) -> str | None:
    """The exact text cited: the lines of a range, or the whole extracted text. None if out of range."""
    if source.text is None:
        return None
    if citation.start is None:
        return source.text
    lines = source.lines
    if citation.end is None or citation.end > len(lines):
        return None
    return "\n".join(lines[citation.start - 1 : citation.end])


def citation_hash(citation: Citation, source: Source) -> str | None:
    text = cited_text(citation, source)
    return sha256_text(text) if text is not None else None


def line_hash(line: str) -> str:
    """The short hash of one line that the lock keeps for the first line of a cited range."""
    return sha256_text(line)[:16]


def first_line_hash(citation: Citation, source: Source) -> str | None:
    text = cited_text(citation, source)
    if citation.start is None or text is None:
        return None
    return line_hash(text.split("\n", 1)[0])


class LineIndex:
    """Where each line of a source stands, by line hash: built once per source and lint run."""

    def __init__(self) -> None:
        self._by_source: dict[str, dict[str, list[int]]] = {}

    def starts(self, source: Source, first_line: str) -> list[int]:
        index = self._by_source.get(source.path)
        if index is None:
            index = defaultdict(list)
            for number, line in enumerate(source.lines, start=1):
                index[line_hash(line)].append(number)
            self._by_source[source.path] = index
        return index.get(first_line, [])


def find_moved(
    citation: Citation, source: Source, locked: str, first_line: str | None, index: LineIndex
) -> tuple[int, int] | None:
    """Where the locked text of a line-range citation now stands in the source, if anywhere.

    Only lines whose hash matches the locked first line are tried, so the search costs one pass
    over the source however many citations drifted.
    """
    if citation.start is None or citation.end is None or source.text is None:
        return None
    width = citation.end - citation.start + 1
    lines = source.lines
    # A record from a lock written before first-line hashes existed: try every start, once.
    starts = index.starts(source, first_line) if first_line else range(1, len(lines) + 1)
    for start in starts:
        if start == citation.start or start + width - 1 > len(lines):
            continue
        if sha256_text("\n".join(lines[start - 1 : start - 1 + width])) == locked:
            return start, start + width - 1
    return None


def pointers_for(
    citations: Iterable[Citation],
    sources: Mapping[str, Source],
    chunks_of: Callable[[Source], Sequence[Chunk]],
    cap: int,
) -> tuple[Pointer, ...]:
    """The chunks a page's citations point at, weighted by how much of each citation they cover."""
    weights: dict[str, float] = defaultdict(float)
    chunks = {}
    for citation in citations:
        source = sources.get(citation.source)
        if source is None or source.text is None:
            continue
        if citation.start is None:
            first, last = 1, source.line_count
        else:
            first, last = citation.start, min(citation.end or citation.start, source.line_count)
            if first > last:
                continue
        span = last - first + 1
        for chunk in chunks_of(source):
            overlap = min(last, chunk.end_line) - max(first, chunk.start_line) + 1
            if overlap > 0:
                weights[chunk.id] += overlap / span
                chunks[chunk.id] = chunk
    ranked = sorted(weights.items(), key=lambda item: (-round(item[1], 6), item[0]))
    return tuple(
        Pointer(
            chunk_id=chunk_id,
            source=chunks[chunk_id].source,
            start_line=chunks[chunk_id].start_line,
            end_line=chunks[chunk_id].end_line,
            weight=round(weight, 4),
            content_hash=chunks[chunk_id].content_hash,
        )
        for chunk_id, weight in ranked[:cap]
    )
