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
from groundwiki.core.evidence.lock import CHUNK, LockEntry, render_lock
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
    by_page: dict[str, list[CitationState]] = {}
    for state in wiki.all_citation_states:
        if state.status == "moved" and state.moved_to is not None:
            by_page.setdefault(state.page.uid, []).append(state)
    fixes: list[MovedFix] = []
    for states in by_page.values():
        fixes += fix_page(states, edits)
    return fixes


def fix_page(states: list[CitationState], edits: Edits) -> list[MovedFix]:
    """Plan the edit of one page that moves these of its moved citations to their new ranges
    (also the language server's quick fix, for one citation)."""
    path = states[0].page.path
    text = edits.read(path)
    starts = _line_starts(text)
    changes: list[tuple[int, str, str]] = []
    fixes: list[MovedFix] = []
    for state in states:
        citation = state.citation
        if state.moved_to is None:
            continue
        start, end = state.moved_to
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


def relocked(wiki: Wiki, fixes: list[MovedFix]) -> str:
    """The lock's text once these fixes are made, as `lock --fix-moved` writes it for their
    pages: each corrected citation recorded at its new range with the hash it was locked with,
    the pages' pointers following. Every other record stays as it is, and a citation the lock
    did not record is not locked by a fix."""
    corrected = {(fix.state.page.uid, fix.state.name): fix.citation for fix in fixes}
    pages = {uid for uid, _ in corrected}
    names = {(fix.state.page.uid, f"{wiki.config.raw_prefix}/{fix.citation.spec}") for fix in fixes}
    records = wiki.lock.records
    entries = [
        LockEntry(page, citation, record.sha256, record.first_line)
        for (page, citation), record in records.items()
        if page not in pages
    ]
    entries += [
        entry
        for entry in wiki.lock_entries(accept_drift=False, corrected=corrected)
        if entry.page in pages
        and (
            (entry.page, entry.citation) in records
            or (entry.page, entry.citation) in names
            or entry.citation.startswith(CHUNK)
        )
    ]
    return render_lock(entries)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for number, char in enumerate(text):
        if char == "\n":
            starts.append(number + 1)
    return starts
