"""The state of every citation against the lock: locked, unlocked, drifted or moved."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .citations import citation_hash, find_moved
from .lock import Lock
from .model import Citation, Page, Source

Status = Literal["locked", "unlocked", "drifted", "moved"]


@dataclass(frozen=True)
class CitationState:
    page: Page
    citation: Citation
    name: str  # the citation as the lock records it: `raw-sources/path#L1-L9`
    status: Status
    moved_to: tuple[int, int] | None = None  # the new line range of moved text


def citation_states(
    pages: Iterable[Page], sources: Mapping[str, Source], lock: Lock, raw_prefix: str
) -> tuple[CitationState, ...]:
    """Citations whose source is readable and whose lines exist; the others are lint's to report."""
    states: list[CitationState] = []
    for page in pages:
        for citation in page.citations:
            source = sources.get(citation.source)
            current = citation_hash(citation, source) if source else None
            if source is None or current is None:
                continue
            name = f"{raw_prefix}/{citation.spec}"
            locked = lock.get(page.key, name)
            if locked is None:
                states.append(CitationState(page, citation, name, "unlocked"))
            elif locked == current:
                states.append(CitationState(page, citation, name, "locked"))
            else:
                moved = find_moved(citation, source, locked)
                status: Status = "moved" if moved else "drifted"
                states.append(CitationState(page, citation, name, status, moved))
    return tuple(states)
