"""Correcting citations whose text moved: `groundwiki lock --fix-moved`.

Lint's `moved-source` finds cited text, unchanged, at other lines of the same source (lines were
inserted above it). The fix is mechanical: the citation's line range becomes where the text now
stands, written where the writer wrote it (the provenance comment, or the `sources` entry in the
frontmatter), and the lock records the citation at its new range with the hash it was locked
with. Text that changed is never "fixed" this way: whether the page still says what the source
says is the writer's call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groundwiki.core.edit.edits import Edits
from groundwiki.core.evidence.drift import CitationState
from groundwiki.core.model.records import Citation
from groundwiki.core.wiki.compiled import Wiki


@dataclass(frozen=True)
class MovedFix:
    state: CitationState
    citation: Citation  # at its new range
    old: str  # the citation as written before (`raw-sources/a.md#L3-L5`)
    new: str  # as written now


def fix_moved(wiki: Wiki, edits: Edits) -> list[MovedFix]:
    """Plan the page edits that move every moved citation to its new range, in page order."""
    fixes: list[MovedFix] = []
    by_page: dict[str, list[CitationState]] = {}
    for state in wiki.all_citation_states:
        if state.status == "moved" and state.moved_to is not None:
            by_page.setdefault(state.page.uid, []).append(state)
    for states in by_page.values():
        path = states[0].page.path
        text = edits.read(path)
        starts = _line_starts(text)
        changes: list[tuple[int, str, str]] = []
        for state in states:
            citation = state.citation
            start, end = state.moved_to  # type: ignore[misc]
            written = citation.raw.strip()
            path_part, _, _ = written.partition("#")
            lines = f"L{start}" if start == end else f"L{start}-L{end}"
            new = f"{path_part}#{lines}"
            at = starts[min(citation.at.line, len(starts)) - 1]
            if citation.origin == "inline":
                at += citation.at.column - 1
            found = text.find(written, at)
            if found < 0:
                continue  # not where the page says it is: a file edited since it was read
            changes.append((found, written, new))
            fixes.append(MovedFix(state, replace(citation, start=start, end=end), written, new))
        for offset, written, new in sorted(changes, reverse=True):
            text = text[:offset] + new + text[offset + len(written) :]
        edits.write(path, text)
    return fixes


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for number, char in enumerate(text):
        if char == "\n":
            starts.append(number + 1)
    return starts
