"""How a chunk search's answer is spread over its documents: a per-document cap and a cut of
repeated text, applied to the fused ranking before it is cut to the limit.

One dense raw source can hold the best-scoring chunks for a query, and a source copied into the
wiki twice (or a boilerplate paragraph every file repeats) can fill the answer with one text. An
agent reading the answer then sees one document where it asked for evidence. So the fused list
is walked best first: a chunk whose text was already answered is cut (`cut_duplicate_chunks`),
and a chunk whose document already has `chunks_per_source` chunks in the answer is passed over;
the walk goes on into the deeper candidates until the answer is full. Each lane returns at least
`NORM_WINDOW` (100) candidates, three times the limit past that, so there are deeper ones to
fill from.

A document is a raw source for its chunks and a page for its passages: a long page crowds out
other evidence as a long source does, and the cap is about the answer holding several documents,
whichever kind they are. The two kinds never share a key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groundwiki_sidecar.lanes import Fused

# Texts equal over this many characters, whitespace runs made one space, are one text.
SAME_TEXT_CHARS = 200


@dataclass(frozen=True)
class Origin:
    """What the spread reads of a candidate: the document it comes from and its text."""

    document: str  # "source:<path>" or "page:<uid>"
    text: str


@dataclass(frozen=True)
class SpreadReport:
    """What the spread removed from the answer's places (only those the walk passed over)."""

    per_source: int  # the cap in force (0: none)
    capped: int  # chunks passed over because their document had its share
    duplicates: int  # chunks cut because their text was already in the answer

    @property
    def removed(self) -> bool:
        return bool(self.capped or self.duplicates)

    def to_json(self) -> dict[str, int]:
        return {"per_source": self.per_source, "capped": self.capped, "duplicates": self.duplicates}


@dataclass(frozen=True)
class Spread:
    """The `chunks_per_source` and `cut_duplicate_chunks` settings."""

    per_source: int = 2  # 0: no cap
    cut_duplicates: bool = True

    def apply(
        self, fused: Sequence[Fused], limit: int, origin: Callable[[str], Origin]
    ) -> tuple[list[Fused], SpreadReport]:
        """At most `limit` of `fused`, in its order, with the cap and the cut applied."""
        kept: list[Fused] = []
        per_document: dict[str, int] = {}
        texts: set[str] = set()
        capped = duplicates = 0
        for hit in fused:
            if len(kept) >= limit:
                break
            if not self.per_source and not self.cut_duplicates:
                kept.append(hit)
                continue
            found = origin(hit.id)
            text = same_text_key(found.text) if self.cut_duplicates else ""
            if self.cut_duplicates and text in texts:
                duplicates += 1
                continue
            if self.per_source and per_document.get(found.document, 0) >= self.per_source:
                capped += 1
                continue
            kept.append(hit)
            per_document[found.document] = per_document.get(found.document, 0) + 1
            if self.cut_duplicates:
                texts.add(text)
        return kept, SpreadReport(self.per_source, capped, duplicates)


def same_text_key(text: str) -> str:
    """What two chunks must share to be one text: their first `SAME_TEXT_CHARS` characters once
    every run of whitespace is one space (a re-wrapped copy is the same text)."""
    return " ".join(text.split())[:SAME_TEXT_CHARS]
