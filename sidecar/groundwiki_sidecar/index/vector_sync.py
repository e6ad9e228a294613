"""The vector index kept in step with the manifest (`VectorSync`): what the manifest lists as
pending is embedded, pages before passages before chunks, from a cache keyed by model and text
hash, and written to Chroma; a reader replica adopts the vectors the writer stored instead; and
Chroma and the manifest are reconciled after an unclean stop. `open_vectors` opens the index.

Vectors are cached before Chroma is written and marked in the manifest after, under one lock,
once the item is checked to be still current: a sync deletes gone items' vectors under the same
lock, after its manifest commit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from groundwiki_sidecar.base.embed_rate import RateMeter
from groundwiki_sidecar.base.settings import SidecarSettings
from groundwiki_sidecar.embedding.embedders import Embedder
from groundwiki_sidecar.index.chroma_index import (
    VectorIndex,
    VectorRow,
    VectorStoreUnavailable,
    vector_id,
)
from groundwiki_sidecar.index.documents import ChunkRecord, PageRecord, PassageRecord
from groundwiki_sidecar.index.state_store import KINDS, Store
from groundwiki_sidecar.index.views import Snapshot

log = logging.getLogger("groundwiki_sidecar")
Progress = Callable[[str, int, int], None]
Work = tuple[str, str, str, str, dict]  # item ID, kind, embed hash, text, metadata
# Pending items read and sorted by length together, and vectors written to Chroma together: a
# Chroma write of 128 vectors costs about what one of 8 does. An edit still waits for one model
# batch at most, since the window is cut short between batches when a sync is waiting.
EMBED_WINDOW = 1024
EMBED_FLUSH = 128
EMBED_SLICE = 64  # texts tokenized at a time: what an edit may wait for before the embedder yields
ADOPT_BATCH = 500  # vector IDs asked of Chroma at once by a reader replica


def open_vectors(
    folder: Path, embedder: Embedder | None, settings: SidecarSettings, store: Store
) -> tuple[VectorIndex | None, str]:
    """The vector index in the index folder, or None and why the semantic lane is off. A
    rebuilt index, or another model's, has the manifest forget every vector, so that they are
    all written again (from the embedding cache when the model is the same)."""
    if embedder is None:
        return None, "no embedding model loaded"
    if not settings.vector_writer and not settings.chroma_url:
        problem = (
            "vector_writer: false reads the vectors another sidecar writes to a shared "
            "Chroma server: set chroma_url too"
        )
        log.error("semantic lane unavailable: %s", problem)
        return None, problem
    try:
        vectors = VectorIndex(
            folder / "chroma",
            embedder.identity,
            settings.chroma_url,
            settings.vector_writer,
        )
    except VectorStoreUnavailable as exc:
        log.error("semantic lane unavailable: %s", exc)
        return None, str(exc)
    if vectors.rebuilt:
        store.forget_vectors()  # written again from the embedding cache
    if store.get_meta("model") != embedder.identity or vectors.model_changed:
        if store.get_meta("model") is not None:
            log.warning(
                "embedding model changed to %s: every page and chunk is embedded again",
                embedder.identity,
            )
        store.forget_vectors()
        with store.transaction() as db:
            Store.set_meta(db, "model", embedder.identity)
    return vectors, ""


class VectorSync:
    """The vectors of the items the manifest (`store`) lists, written to `vectors` with
    `embedder`; `current` gives the snapshot whose records are embedded (the newest)."""

    def __init__(
        self,
        store: Store,
        vectors: VectorIndex,
        embedder: Embedder,
        settings: SidecarSettings,
        meter: RateMeter,
        current: Callable[[], Snapshot | None],
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.settings = settings
        self.meter = meter
        self.current = current
        self.lock = threading.Lock()
        self._unchecked = False  # the store was empty at start: reconcile after the first sync

    def delete(self, gone: list[str]) -> None:
        """Delete the vectors of items gone from the manifest (item IDs), after its commit: a
        vector being computed for one is then either refused by `_write_vectors`' check or
        written before this and deleted here. A reader replica deletes none: the writer does."""
        if not self.settings.vector_writer:
            return
        with self.lock:
            for kind in KINDS:
                ids = [i.split(":", 1)[1] for i in gone if i.startswith(kind + ":")]
                if ids:
                    self.vectors.delete_items(kind, ids)

    def check(self) -> int:
        """Make Chroma and the manifest agree after an unclean stop or a lost store; returns the
        fixes made. A vector whose Chroma ID matches its item's current text is kept (adopted if
        the manifest lost it), one the manifest marks but Chroma lacks is queued again, and the
        rest are deleted. With an empty manifest (a lost or new store) nothing can be matched
        yet, so this waits for the first sync instead of deleting every vector and adding them
        all back."""
        states = self.store.vector_states()
        if not states:
            self._unchecked = True
            return 0
        self._unchecked = False
        fixes = 0
        with self.lock:
            for kind in KINDS:
                in_chroma = self.vectors.vector_ids(kind)
                expected: dict[str, tuple[str, str, str | None]] = {}
                for item_id, (embed_hash, vector_hash) in states.items():
                    if item_id.startswith(kind + ":"):
                        name = item_id.split(":", 1)[1]
                        expected[vector_id(name, embed_hash)] = (item_id, embed_hash, vector_hash)
                # A reader shares the store with a writer whose files may be ahead of its own:
                # what it does not know is not its to delete.
                writer = self.settings.vector_writer
                extra = sorted(in_chroma - expected.keys()) if writer else []
                if extra:
                    self.vectors.delete(kind, extra)
                adopted = [
                    (item_id, embed_hash)
                    for vector, (item_id, embed_hash, vector_hash) in expected.items()
                    if vector in in_chroma and vector_hash != embed_hash
                ]
                if adopted:
                    self.store.mark_embedded(adopted)
                lost = [
                    item_id
                    for vector, (item_id, _, vector_hash) in expected.items()
                    if vector not in in_chroma and vector_hash is not None
                ]
                if lost:
                    self.store.forget_vectors(lost)
                fixes += len(extra) + len(adopted) + len(lost)
        if fixes:
            log.warning("vector store reconciled: %d vectors deleted, kept or queued again", fixes)
        return fixes

    def embed_pending(
        self,
        limit: int | None = None,
        progress: Progress | None = None,
        interrupt: Callable[[], bool] | None = None,
    ) -> int:
        """Embed what the manifest lists as missing; returns the number embedded. `interrupt`
        is asked between model calls: when it says so, what is computed is written and the
        call returns (a sync is waiting for the CPU)."""
        if self._unchecked:
            self.check()  # the first sync has rebuilt the manifest
        if not self.settings.vector_writer:
            return self.adopt_pending()
        done = 0
        # Counted for the progress alone: counting scans what is pending, and an edit's vector
        # waits for each call to begin.
        total = self.store.pending_count() if progress else 0
        window = max(EMBED_WINDOW, self.settings.embed_batch)
        while limit is None or done < limit:
            size = window if limit is None else min(window, limit - done)
            pending = one_kind(self.store.pending(size))
            if not pending:
                break
            written, stopped = self._embed_window(pending, interrupt)
            done += written
            if progress:
                progress("embed", min(done, total), max(total, done))
            if stopped or not written:
                # Not written: the window changed while it was read (a sync is being applied);
                # the sync wakes the embedder again when it is done.
                break
        return done

    def adopt_pending(self) -> int:
        """A reader replica's embedding: mark embedded every pending item whose vector (the
        same item, the same text) the writer has stored. Returns the number adopted."""
        adopted = 0
        for kind in KINDS:
            pending = [p for p in self.store.pending(10**9) if p[1] == kind]
            for start in range(0, len(pending), ADOPT_BATCH):
                part = pending[start : start + ADOPT_BATCH]
                wanted = {vector_id(i.split(":", 1)[1], h): (i, h) for i, _, h in part}
                found = self.vectors.collection(kind).get(ids=list(wanted), include=[])["ids"]
                if found:
                    with self.lock:
                        current = self.store.embed_states([wanted[v][0] for v in found])
                        marks = [
                            wanted[v] for v in found if current.get(wanted[v][0]) == wanted[v][1]
                        ]
                        self.store.mark_embedded(marks)
                    adopted += len(marks)
        return adopted

    def _embed_window(
        self, pending: list[tuple[str, str, str]], interrupt: Callable[[], bool] | None
    ) -> tuple[int, bool]:
        """One window of pending items of one kind: the model runs over all of it in batches
        sorted by length (the wider the window, the less padding), and what is computed is
        written every EMBED_FLUSH vectors (a Chroma write costs about as much for 8 vectors as
        for 128). Returns the items written and whether `interrupt` cut the window short."""
        snapshot = self.current()
        assert snapshot is not None
        work: list[Work] = []
        for item_id, kind, embed_hash in pending:
            name = item_id.split(":", 1)[1]
            found: dict[str, Any] = (
                snapshot.pages
                if kind == "page"
                else snapshot.passages
                if kind == "passage"
                else snapshot.chunks
            )
            record: PageRecord | PassageRecord | ChunkRecord | None = found.get(name)
            if record is None or record.embed_hash != embed_hash:
                # The manifest is ahead of the snapshot while a sync is applied; never mark it
                # embedded without a vector: it stays pending for the next window.
                continue
            work.append((item_id, kind, embed_hash, record.embed_text, record.metadata))
        if not work:
            return 0, False
        model = self.embedder.identity
        cached = self.store.cached_vectors(model, [w[2] for w in work])
        by_hash: dict[str, list[Work]] = {}
        for item in work:
            by_hash.setdefault(item[2], []).append(item)
        # Items whose text was embedded before (another item, an earlier run) go first.
        written = self._write_vectors([w for w in work if w[2] in cached], cached)
        missing = [h for h in by_hash if h not in cached]
        if not missing:
            return written, False
        passages = work[0][1] != "page"  # a window holds one kind
        texts = [by_hash[h][0][3] for h in missing]
        # Similar lengths together across the window (the model's batches pad to their longest),
        # handed to the model a slice at a time: tokenizing a whole window of 1,024 passages
        # took over a second that nothing could cut short, beside an edit's batch.
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        fresh: dict[str, np.ndarray] = {}
        computed = 0
        for start in range(0, len(order), EMBED_SLICE):
            part = order[start : start + EMBED_SLICE]
            if start and interrupt is not None and interrupt():
                # Into the cache alone: the next window takes them from there, and the
                # edit waiting for the CPU does not wait for a Chroma write as well.
                self.store.cache_vectors(model, fresh)
                return written, True
            batches = self.embedder.embed_iter([texts[i] for i in part], passages)
            try:
                for indices, vectors in batches:
                    fresh.update((missing[part[i]], vectors[row]) for row, i in enumerate(indices))
                    computed += len(indices)
                    self.meter.add(len(indices))
                    if interrupt is not None and interrupt() and computed < len(missing):
                        self.store.cache_vectors(model, fresh)
                        return written, True
                    if len(fresh) >= EMBED_FLUSH:
                        written += self._flush(model, fresh, by_hash)
                        fresh = {}
            finally:
                if hasattr(batches, "close"):
                    batches.close()
        written += self._flush(model, fresh, by_hash)
        return written, False

    def _flush(
        self, model: str, fresh: dict[str, np.ndarray], by_hash: dict[str, list[Work]]
    ) -> int:
        if not fresh:
            return 0
        self.store.cache_vectors(model, fresh)
        return self._write_vectors([w for h in fresh for w in by_hash[h]], fresh)

    def _write_vectors(self, work: list[Work], vectors: dict[str, np.ndarray]) -> int:
        if not work:
            return 0
        with self.lock:
            # Computing took time: what was deleted or changed meanwhile is not written (a sync
            # deletes vectors of gone items under this lock, after its manifest commit).
            current = self.store.embed_states([w[0] for w in work])
            work = [w for w in work if current.get(w[0]) == w[2]]
            for kind in KINDS:
                rows = [
                    VectorRow(w[0].split(":", 1)[1], w[2], vectors[w[2]], w[4])
                    for w in work
                    if w[1] == kind
                ]
                self.vectors.write(kind, rows)
            self.store.mark_embedded([(w[0], w[2]) for w in work])
        return len(work)


def one_kind(pending: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The first kind's items of a pending list (pages come first): an edited page's vector is
    written after its own batch, not after its passages' (long texts, each costing more than
    the page's) are embedded with it."""
    return [item for item in pending if item[1] == pending[0][1]] if pending else []
