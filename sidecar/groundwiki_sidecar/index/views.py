"""The snapshot queries read, and one snapshot as one viewer sees it: what every answer is made
from. (One module: a snapshot makes its views, and a view reads its snapshot.)

The indexes hold every scope's pages once, each under its uid (documents.indexed_pages). A view
says which of them a viewer may be answered with (their own pages and the shared pages they do
not shadow), and shows each under the key the viewer knows it by. Another user's pages are not
in it at all: not returned, not counted, not offered as the closest match to a mistyped key.

Nor do they move what a view says of its own state. The indexes' generation counts every
sync, another user's edits included; a viewer is shown `Generations.of` instead: the
generation and time of the last sync that changed what their answers are made from
(`View.fingerprint`). Alice's answers and `/status` then stand still while Bob edits his
private pages (issue 27); the number still only grows, across restarts too, since it is one of
the indexes' generations.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import weakref
from dataclasses import dataclass, field
from functools import cached_property

from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import GLOBAL, USER_DIR, user_scope
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.graph import build_graph

from groundwiki_sidecar.index.documents import ChunkRecord, PageRecord, PassageRecord


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one per batch
class Snapshot:
    """What queries read: one compiled wiki and its records, swapped whole after each batch."""

    generation: int
    wiki: Wiki
    pages: dict[str, PageRecord]
    chunks: dict[str, ChunkRecord]
    synced_at: float
    passages: dict[str, PassageRecord] = field(default_factory=dict)

    def passages_of(self, key: str) -> tuple[PassageRecord, ...]:
        """A page's indexed passages in file order (none for a `usage_mode: never` page), by
        the page's uid."""
        return self._by_page.get(key, ())

    def view(self, user: str | None) -> View:
        """This snapshot as `user` sees it (None: the shared scope); one per user, made once."""
        found = self._views.get(user)
        if found is None:
            found = self._views[user] = View(self, user)
        return found

    @cached_property
    def _views(self) -> dict[str | None, View]:
        return {}

    # Each page's passages in file order by uid, when the records came with them (the
    # indexer's do: made once per changed page, not for all passages on each snapshot).
    passages_by_page: dict[str, tuple[PassageRecord, ...]] | None = None

    @cached_property
    def _by_page(self) -> dict[str, tuple[PassageRecord, ...]]:
        if self.passages_by_page is not None:
            return self.passages_by_page
        found: dict[str, list[PassageRecord]] = {}
        for passage in self.passages.values():
            found.setdefault(passage.page, []).append(passage)
        return {
            key: tuple(sorted(items, key=lambda p: (p.start_line, p.end_line, p.id)))
            for key, items in found.items()
        }


@dataclass(frozen=True, eq=False)
class View:
    snapshot: Snapshot
    user: str | None  # None: the shared scope
    wiki: Wiki = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "wiki", self.snapshot.wiki.scopes.view(self.user))

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

    @cached_property
    def fingerprint(self) -> bytes:
        """A digest of what this viewer's answers are made from: their pages' records (the
        passages are cut from those), the raw-source chunks, and the lock's records of their
        pages (less the line each stands on, which other users' records move)."""
        digest = hashlib.blake2b(_shared_digest(self.snapshot), digest_size=16)
        records = self.pages
        for uid in sorted(records):
            digest.update(f"{uid}\0{records[uid].content_hash}\n".encode())
        seen = self.by_uid
        locked = sorted(
            (page, citation, record.sha256, record.first_line or "")
            for (page, citation), record in self.wiki.lock.records.items()
            if page in seen
        )
        digest.update(repr(locked).encode())
        return digest.digest()

    @cached_property
    def item_ids(self) -> tuple[str, ...]:
        """The store's IDs of this viewer's pages and passages: what their counts and their
        semantic lane's readiness are counted over (`Store.counts_of`, once per write)."""
        return (
            *(f"page:{uid}" for uid in self.pages),
            *(f"passage:{pid}" for pid in self.passages),
        )

    def others(self) -> frozenset[str]:
        """The users whose files and pages this viewer must not be told of, not even by an
        error's text: in a scoped wiki every user with pages in this snapshot or a folder
        under user/ now (a file the sync failed on may be in neither snapshot), but the
        viewer. The shared scope's viewer is told of no user's. Reads the folder: asked only
        when an error is to be shown."""
        if not self.wiki.scoped:
            return frozenset()
        users = set(self.snapshot.wiki.scopes.users)
        folder = self.snapshot.wiki.config.docs_dir / USER_DIR
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            users.update(entry.name for entry in entries if entry.is_dir())
        users.discard(self.user or "")
        return frozenset(users)

    def page(self, uid: str) -> Page:
        return self.by_uid[uid]

    def passages_of(self, uid: str) -> tuple[PassageRecord, ...]:
        return self.snapshot.passages_of(uid) if uid in self.by_uid else ()


# Weakly keyed: a digest lives as long as its snapshot, and keeps no replaced snapshot (a whole
# compiled wiki) in memory.
_SHARED_DIGESTS: weakref.WeakKeyDictionary[Snapshot, bytes] = weakref.WeakKeyDictionary()


def _shared_digest(snapshot: Snapshot) -> bytes:
    """The digest of what every view shares, once per snapshot: the raw-source chunks."""
    found = _SHARED_DIGESTS.get(snapshot)
    if found is None:
        digest = hashlib.blake2b(digest_size=16)
        for chunk_id in sorted(snapshot.chunks):
            digest.update(f"{chunk_id}\0{snapshot.chunks[chunk_id].content_hash}\n".encode())
        found = _SHARED_DIGESTS[snapshot] = digest.digest()
    return found


@dataclass(frozen=True)
class Shown:
    """A viewer's generation and sync time: those of the last sync that changed their view."""

    generation: int
    synced_at: float


class Generations:
    """Per viewer, the generation and sync time shown with their answers and `/status`: those of
    the first snapshot this process served them whose view differs from the one before (the
    newest snapshot's, the first time a viewer is served, and after a restart). One per
    sidecar, shared by every viewer's operations."""

    def __init__(self) -> None:
        self._last: dict[str | None, tuple[bytes, Shown]] = {}
        self._lock = threading.Lock()

    def of(self, view: View) -> Shown:
        snapshot = view.snapshot
        if not view.wiki.scoped:  # every viewer sees every page: the snapshot's own
            return Shown(snapshot.generation, snapshot.synced_at)
        fingerprint = view.fingerprint
        with self._lock:
            held = self._last.get(view.user)
            if held is not None and held[0] == fingerprint:
                return held[1]
            shown = Shown(snapshot.generation, snapshot.synced_at)
            # Not for an older snapshot (a query that began before the swap): the next
            # answer from the newest one must not show its view unchanged.
            if held is None or held[1].generation < shown.generation:
                self._last[view.user] = (fingerprint, shown)
            return shown
