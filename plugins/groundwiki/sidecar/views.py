"""One snapshot as one viewer sees it: what every answer is made from.

The indexes hold every scope's pages once, each under its uid (documents.indexed_pages). A view
says which of them a viewer may be answered with (their own pages and the shared pages they do
not shadow), and shows each under the key the viewer knows it by. Another user's pages are not
in it at all: not returned, not counted, not offered as the closest match to a mistyped key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from ..core.graph import build_graph
from ..core.model import Page
from ..core.scopes import GLOBAL, user_scope
from ..core.wiki import Wiki
from .documents import PageRecord, PassageRecord

if TYPE_CHECKING:
    from .sync import Snapshot


@dataclass(frozen=True, eq=False)
class View:
    snapshot: Snapshot
    user: str | None  # None: the shared scope
    wiki: Wiki = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "wiki", self.snapshot.wiki.view(self.user))

    @property
    def generation(self) -> int:
        return self.snapshot.generation

    @property
    def synced_at(self) -> float:
        return self.snapshot.synced_at

    @cached_property
    def by_uid(self) -> dict[str, Page]:
        """The pages this viewer sees, by their index ID (their key, without scopes)."""
        if not self.wiki.scoped:
            return self.wiki.pages
        return {page.uid: page for page in self.wiki.pages.values()}

    @cached_property
    def pages(self) -> dict[str, PageRecord]:
        """The indexed records of the pages this viewer sees, by uid."""
        if not self.wiki.scoped:
            return self.snapshot.pages
        records = self.snapshot.pages
        return {uid: records[uid] for uid in self.by_uid if uid in records}

    @cached_property
    def passages(self) -> dict[str, PassageRecord]:
        """The indexed passages of the pages this viewer sees, by ID."""
        if not self.wiki.scoped:
            return self.snapshot.passages
        seen = self.by_uid
        return {pid: p for pid, p in self.snapshot.passages.items() if p.page in seen}

    @cached_property
    def scopes(self) -> tuple[str, ...]:
        """The scopes this viewer's hits may be of; empty in a wiki without scopes."""
        if not self.wiki.scoped:
            return ()
        return (GLOBAL,) if self.user is None else (GLOBAL, user_scope(self.user))

    @cached_property
    def shadowed(self) -> frozenset[str]:
        """The uids of the shared pages this viewer's own pages shadow."""
        shared = self.snapshot.wiki.pages
        return frozenset(
            page.key
            for page in self.wiki.pages.values()
            if page.scope != GLOBAL and page.key in shared
        )

    @cached_property
    def locked_chunks(self) -> frozenset[str]:
        """Chunk IDs the lock records for the pages this viewer sees."""
        lock = self.wiki.lock
        if not self.wiki.scoped:
            return lock.chunk_ids()
        return frozenset().union(*(lock.chunk_ids(page.uid) for page in self.wiki.pages.values()))

    @cached_property
    def backlinks(self) -> dict[str, tuple[str, ...]]:
        """Each page's backlinks as this viewer sees them, by key (made on first use)."""
        return build_graph(self.wiki).backlinks()

    def page(self, uid: str) -> Page:
        return self.by_uid[uid]

    def passages_of(self, uid: str) -> tuple[PassageRecord, ...]:
        return self.snapshot.passages_of(uid) if uid in self.by_uid else ()
