"""The state of every citation against the lock: locked, unlocked, drifted, moved or unavailable."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from groundwiki.core.evidence.citations import LineIndex, citation_hash, find_moved, first_line_hash
from groundwiki.core.evidence.lock import Lock, LockRecord
from groundwiki.core.model.records import Citation, Page, Source
from groundwiki.core.model.scopes import scoped_name

Status = Literal["locked", "unlocked", "drifted", "moved", "unavailable"]


@dataclass(frozen=True)
class CitationState:
    page: Page
    citation: Citation
    name: str  # the citation as the lock records it: `raw-sources/path#L1-L9`
    status: Status
    current: str | None = None  # sha256 of the cited text now; None when it cannot be read
    first_line: str | None = None  # hash of the first cited line now
    record: LockRecord | None = None  # what the lock holds, found under the key or an alias
    moved_to: tuple[int, int] | None = None  # the new line range of moved text


def locked_record(lock: Lock, page: Page, name: str) -> LockRecord | None:
    """The page's record, or one kept under a former key: aliases hold former keys, so a renamed
    page keeps its drift check instead of falling back to 'unlocked'."""
    names = [name]
    single = re.fullmatch(r"(.*#L)(\d+)", name)
    if single:  # locks written before single lines were spelled `#L7` said `#L7-L7`
        names.append(f"{single.group(1)}{single.group(2)}-L{single.group(2)}")
    for key in (page.uid, *(scoped_name(page.scope, alias.lower()) for alias in page.aliases)):
        for candidate in names:
            record = lock.get(key, candidate)
            if record is not None:
                return record
    return None


def citation_states(
    pages: Iterable[Page], sources: Mapping[str, Source], lock: Lock, raw_prefix: str
) -> tuple[CitationState, ...]:
    states: list[CitationState] = []
    index = LineIndex()
    for page in pages:
        for citation in page.citations:
            name = f"{raw_prefix}/{citation.spec}"
            record = locked_record(lock, page, name)
            source = sources.get(citation.source)
            current = citation_hash(citation, source) if source else None
            first = first_line_hash(citation, source) if source else None
            state = CitationState(page, citation, name, "unlocked", current, first, record)
            if record is None:
                status: Status = "unlocked" if current is not None else "unavailable"
                states.append(replace(state, status=status))
            elif current == record.sha256:
                states.append(replace(state, status="locked"))
            elif source is None or source.text is None:
                states.append(replace(state, status="unavailable"))
            else:
                # The lines changed, or the range now runs past the end: maybe the text moved.
                moved = find_moved(citation, source, record.sha256, record.first_line, index)
                states.append(
                    replace(state, status="moved" if moved else "drifted", moved_to=moved)
                )
    return tuple(states)
