"""Keep the indexes equal to the files: compile, compare hashes with the manifest, apply.

One `sync` is one batch. It recompiles the wiki (a `CompileCache` re-reads only changed files),
turns it into page, passage and chunk records (an unchanged page's passages are not cut
again), and compares their hashes with the manifest in the store: new and changed records go
to Whoosh, gone ones are deleted, and the manifest and the index generation are committed
together. Vectors follow in the background (`embed_pending`, vector_sync.py), pages before
passages before chunks, from a cache keyed by model and text hash.

Crash safety comes from the order of writes. Whoosh commits before the manifest, so after a
kill the manifest is never ahead of Whoosh, and the next sync re-applies whatever it does not
record (updates are by unique ID, so re-applying adds nothing twice). Vectors are cached before
Chroma is written and marked in the manifest after (under one lock, once the item is checked
to be still current), and `check_vectors` at start-up deletes vectors the manifest does not
know, keeps the ones still matching their text, and re-queues the ones Chroma lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from groundwiki import __version__
from groundwiki.core.config.wiki_config import ConfigError
from groundwiki.core.files.file_cache import stamp
from groundwiki.core.files.known_changes import below
from groundwiki.core.wiki.cache_codec import (
    SCHEMA,
    CacheUnreadable,
    compile_cache_document,
    compile_cache_of,
    read_document,
    remove_old,
    write_document,
)
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki, discover_pages

from groundwiki_sidecar import lanes
from groundwiki_sidecar.base.claim import IndexClaim
from groundwiki_sidecar.base.embed_rate import RateMeter
from groundwiki_sidecar.base.health import Health
from groundwiki_sidecar.base.seal import IndexSeal, seal_key
from groundwiki_sidecar.base.settings import Sidecar, SidecarSettings
from groundwiki_sidecar.embedding.embedders import Embedder, EmbedderUnavailable
from groundwiki_sidecar.index.chroma_index import VectorIndex
from groundwiki_sidecar.index.documents import (
    ChunkRecord,
    Delta,
    PageRecord,
    PassageRecord,
    Progress,
    RecordCache,
)
from groundwiki_sidecar.index.state_store import KINDS, Item, Store, StoredChunk
from groundwiki_sidecar.index.vector_sync import VectorSync, open_vectors
from groundwiki_sidecar.index.views import Snapshot
from groundwiki_sidecar.index.whoosh_index import LexicalIndex

log = logging.getLogger("groundwiki_sidecar")
# What the compile cache file holds depends on the code that wrote it: the header names both.
CACHE_FORMAT = f"groundwiki-compile-cache-5 {__version__} {SCHEMA}"
CACHE_FILE = "compile-cache.json"
OLD_CACHE_FILE = "compile-cache.pickle"  # groundwiki's earlier format: deleted, never read
Record = PageRecord | PassageRecord | ChunkRecord
SYNC_PRIORITY_S = 0.1  # the longest a query waits for a batch being applied
# A changed page file larger than this is indexed after the other changes, in a batch of its
# own: indexing costs ~10 us a byte (mostly Whoosh's analysis of the body and its passages), and
# an edit in one batch with a 5 MB page became searchable 47 s later. The largest notes of a
# real vault (obsidian-hub, 6,572 pages) are ~300 KB: a few seconds each, on their own.
LARGE_PAGE_BYTES = 100_000
_PLURALS = {"page": "pages", "passage": "passages", "chunk": "raw-source chunks"}


@dataclass(frozen=True)
class SyncResult:
    generation: int
    added: int
    updated: int
    deleted: int
    seconds: float
    reason: str
    passages: int = 0  # passages written or deleted: part of their pages, not counted above

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.deleted + self.passages


@dataclass(frozen=True)
class Running:
    """A sync under way: since when (epoch seconds), the changed page files it found, and the
    large ones still to be indexed after the rest."""

    since: float
    pages: int
    following: int


def merged_results(first: SyncResult, then: SyncResult) -> SyncResult:
    """Two batches of one sync, reported as one."""
    return SyncResult(
        then.generation,
        first.added + then.added,
        first.updated + then.updated,
        first.deleted + then.deleted,
        first.seconds + then.seconds,
        then.reason,
        first.passages + then.passages,
    )


@dataclass
class Indexer:
    sidecar: Sidecar
    embedder: Embedder | None
    store: Store = field(init=False)
    lexical: LexicalIndex = field(init=False)
    vectors: VectorIndex | None = field(init=False, default=None)
    semantic_problem: str = field(init=False, default="")
    snapshot: Snapshot | None = field(init=False, default=None)
    cache: CompileCache = field(init=False)
    large_page_bytes: int = field(init=False, default=LARGE_PAGE_BYTES)
    running: Running | None = field(init=False, default=None)  # the sync under way
    # The kinds of records the published snapshot holds: all of them once the first sync is
    # done; before, what it has indexed so far (`_first_sync`).
    ready_kinds: frozenset[str] = field(init=False, default=frozenset())
    on_publish: Callable[[], None] | None = field(init=False, default=None)
    # Asked by the first sync before it indexes each kind after the pages: why that kind waits
    # ("" when it does not); the batch ends there, and a later batch goes on. The service holds
    # the passages while the page vectors are computed, the order agents need them in.
    hold_kind: Callable[[str], str] | None = field(init=False, default=None)
    _held: str = field(init=False, default="")  # the hold last logged
    # Whether the manifest holds the records the record cache gave last, so that the next
    # batch may compare only what differs from those (`RecordCache.delta`).
    _in_step: bool = field(init=False, default=False)
    # Whether a batch has compared every file since the start or a failed batch: until one
    # has, a batch is not handed only the changed paths (the indexes of the last run, served
    # at once, were never checked against the files).
    _compared_all: bool = field(init=False, default=False)

    # The index folder's claim (base/claim.py), when the caller took it already: `serve`
    # takes it before its port opens, and builds the indexer after.
    claimed: IndexClaim | None = None

    def __post_init__(self) -> None:
        # Failures of the background work, kept for /status and every answer's freshness.
        self.sync_health = Health()
        self.embed_health = Health()
        self.meter = RateMeter()
        folder = self.sidecar.index_dir
        folder.mkdir(parents=True, exist_ok=True)
        self._claim = self.claimed or IndexClaim.take(folder)
        settings = self.sidecar.settings
        kinds = (
            ("page",) + ("passage",) * settings.embed_passages + ("chunk",) * settings.embed_chunks
        )
        self.store = Store(folder / "store.sqlite", kinds, repair=True)
        # Before Whoosh reads a file: one this user's sidecar did not write may run code.
        self.seal = IndexSeal(folder, seal_key())
        self.lexical_rebuilt = self.seal.admit("whoosh", "the lexical index")
        self.lexical = LexicalIndex(folder / "whoosh", on_commit=self.seal.record)
        self._sync_lock = threading.Lock()
        self._idle = threading.Event()  # clear while a batch is being applied
        self._idle.set()
        self.cache_file = folder / CACHE_FILE
        self.cache = self._load_cache()
        self._records = RecordCache(lead=self.sidecar.settings.page_vector == "lead")
        self._known: dict[str, Item] | None = None  # the manifest, read once, then kept current
        self._check_lexical()
        self.vectors, self.semantic_problem = open_vectors(
            folder, self.embedder, settings, self.store
        )
        self.vector_sync: VectorSync | None = None
        if self.vectors is not None and self.embedder is not None:
            self.vector_sync = VectorSync(
                self.store, self.vectors, self.embedder, settings, self.meter, self._newest
            )

    @property
    def warming(self) -> bool:
        """The first sync has not indexed every kind of record yet (`_first_sync`)."""
        return self.ready_kinds != frozenset(KINDS)

    def _newest(self) -> Snapshot | None:
        """The snapshot queries read now: the one whose records are embedded."""
        return self.snapshot

    def _check_lexical(self) -> None:
        """A Whoosh index rebuilt for a new layout, or deleted by hand, holds less than the
        manifest says: then everything is written to it again on the next sync."""
        counts = self.store.counts()
        docs = self.lexical.doc_counts()
        indexed = (docs["pages"], docs["passages"], docs["chunks"])
        self.lexical_matches = indexed == (counts["page"], counts["passage"], counts["chunk"])
        if not self.lexical_matches:
            # An index deleted for its seal was already reported, with the reason.
            if any(counts[k] for k in ("page", "passage", "chunk")) and not self.lexical_rebuilt:
                log.warning("the lexical index does not match the manifest: rebuilding it")
            self.store.forget_lexical()

    def close(self) -> None:
        self.seal.record()  # cheap: files sealed after their commit are not hashed again
        self.store.close()
        self._claim.release()

    # --- the compile cache, kept across restarts ----------------------------------------------

    @property
    def _cache_format(self) -> str:
        """The cache file's header: pages parsed under other reading options (`title_from`,
        `missing_summary`) are another configuration's, read again."""
        return f"{CACHE_FORMAT} {self.sidecar.config.reading}"

    def _load_cache(self) -> CompileCache:
        """The parsed pages, sources and chunks of the last run; every entry is checked against
        its file's stamp before use, so a stale or foreign file only costs a re-read. The file
        is JSON read into the model's types, never unpickled: the index folder may come from a
        less trusted place than the wiki (a restored CI cache, a shared runner)."""
        try:
            return read_document(self.cache_file, self._cache_format, compile_cache_of)
        except FileNotFoundError:
            return CompileCache()
        except CacheUnreadable as exc:
            log.info(
                "the compile cache %s is unreadable or another version's or configuration's "
                "(%s): ignored, every file is read and it is written again",
                self.cache_file,
                str(exc)[:200],
            )
            return CompileCache()

    def save_cache(self) -> None:
        """Written after the first sync and on stop; replaced atomically. It only saves time
        at the next start, so a failure to write it (a full disk) is logged, not raised."""
        with self._sync_lock:
            try:
                document = compile_cache_document(self.cache)
                write_document(self.cache_file, self._cache_format, document)
            except OSError as exc:
                log.warning(
                    "cannot save the compile cache (the next start reads every file): %s", exc
                )
                return
        remove_old(self.cache_file.with_name(OLD_CACHE_FILE))

    def serve_persisted(self) -> bool:
        """Answer from what an earlier run indexed, before the files are checked: the pages
        and sources as its compile cache has them (no file is read or stated), over the
        Whoosh index and vectors it left. The first sync then reconciles the files as any
        later sync does, and answers move to it when it is published. Whether it could: not
        after a first run, nor when the lexical index does not hold what the manifest says
        (a kill mid-batch, a rebuilt index), nor after a manifest of another layout."""
        if self.snapshot is not None or not self.cache.pages.entries or not self.lexical_matches:
            return False
        if not self.store.counts()["page"]:
            return False
        started = time.perf_counter()
        # Every page file held: those the cache has are taken as they were, new ones left out.
        held = frozenset(self.cache.pages.entries) | frozenset(discover_pages(self.sidecar.config))
        with self._sync_lock:
            wiki = compile_wiki(self.sidecar.config, files=self.cache, held=held)
            records = self._records.all(wiki)
            self.snapshot = Snapshot(
                self.store.generation,
                wiki,
                records.pages,
                records.chunks,
                time.time(),
                records.passages,
                records.by_page,
            )
            self.ready_kinds = frozenset(KINDS)
        log.info(
            "answering from the indexes of the last run (%d pages) after %.1f s; checking "
            "the files for changes made since",
            len(records.pages),
            time.perf_counter() - started,
        )
        return True

    # --- one batch -------------------------------------------------------------------------------

    def sync(
        self,
        reason: str = "sync",
        progress: Progress | None = None,
        changes: frozenset[Path] | None = None,
    ) -> SyncResult:
        """One batch. A failure (the docs folder gone, a full disk) keeps the last snapshot
        serving and is recorded in `sync_health` until a batch succeeds. `changes`: the paths a
        file watcher saw change since the last batch, the only files looked at; None compares
        every file with what the last batch read."""
        with self._sync_lock:
            self._idle.clear()
            if not self._compared_all:
                changes = None  # the paths are changes since a batch that saw every file
            try:
                result = self._sync_in_turn(reason, progress, changes)
            except Exception as exc:
                self._compared_all = False
                self.sync_health.failed(exc)
                raise
            finally:
                self.running = None
                self._idle.set()
            self._compared_all = True
            self.sync_health.succeeded()
            return result

    def sync_progress(self) -> dict[str, Any]:
        """For /status: whether a sync is running, since when, on how many changed page files,
        and how many large ones are still to be indexed after the rest."""
        running = self.running
        if running is None:
            return {"running": False, "running_since": None, "pages": 0, "following": 0}
        return {
            "running": True,
            "running_since": running.since,
            "pages": running.pages,
            "following": running.following,
        }

    def _sync_in_turn(
        self, reason: str, progress: Progress | None, changes: frozenset[Path] | None
    ) -> SyncResult:
        """The changes as batches, large pages last: first every change but the large pages
        (each keeps its last indexed version, a new one waits), then each large page in a batch
        of its own, smallest first. An edit made while one was indexed gets its own batch before
        the next, so a page that takes long delays the others by its own batch at most."""
        started = time.time()
        changed = self._changed_pages(changes)
        large = [path for size, path in changed if size > self.large_page_bytes]
        total = len(changed)
        self.running = Running(started, total, len(large))
        result = self._sync(reason, progress, held=large, changes=changes)
        for _ in range(len(large)):  # bounded: a page rewritten meanwhile waits for a next sync
            changed = self._changed_pages(changes)
            large = [path for size, path in changed if size > self.large_page_bytes]
            if not large:
                break
            if len(changed) > len(large):  # edits made while the last large page was indexed
                self.running = Running(started, total, len(large))
                result = merged_results(result, self._sync(reason, progress, large, changes))
            self.running = Running(started, total, len(large) - 1)
            result = merged_results(result, self._sync(reason, progress, large[1:], changes))
        return result

    def _changed_pages(self, changes: frozenset[Path] | None) -> list[tuple[int, Path]]:
        """The page files the next compile reads again (new, or changed since the compile cache
        read them), with their size in bytes, smallest first: one stat each, as the compile's;
        only the changed paths' when a watcher named them."""
        cached = self.cache.pages.entries
        found: list[tuple[int, Path]] = []
        docs = self.sidecar.config.docs_dir
        if changes is None:
            paths = discover_pages(self.sidecar.config)
        else:
            left_out = self.sidecar.config.left_out
            paths = [
                p
                for p in changes
                if p.suffix == ".md"
                and (relative := below(p, docs)) is not None
                and not left_out(relative)
            ]
        for path in paths:
            now = stamp(path)
            entry = cached.get(path)
            if now is not None and (entry is None or entry[0] != now):
                found.append((now[1], path))
        return sorted(found)

    def yield_to_sync(self) -> None:
        """Called before each query: while a batch is applied, wait for it (at most
        SYNC_PRIORITY_S). Queries saturate the cores under load, and a batch that gets only its
        share of them took 1-17 s instead of 0.1 s (bench/soak.py, 8 clients, 300 pages):
        answers stayed stale that long. The bound keeps a long batch (a checkout of thousands
        of files) from holding queries up."""
        self._idle.wait(SYNC_PRIORITY_S)

    def _sync(
        self,
        reason: str,
        progress: Progress | None,
        held: Collection[Path] = (),
        changes: frozenset[Path] | None = None,
    ) -> SyncResult:
        """One batch: compile (reading the changed files but `held`), apply, publish."""
        started = time.perf_counter()
        docs = self.sidecar.config.docs_dir
        if self.snapshot is not None and not docs.is_dir():
            # Mid-swap (`rm -rf wiki && mv wiki.new wiki`) or mid-checkout, a missing folder
            # compiles to an empty wiki, which would delete every page from the indexes: keep
            # serving the last batch, say the sync is failing, and sync again when it is back.
            raise ConfigError(
                f"the wiki folder {docs} is missing; answers come from the last batch"
            )
        try:
            wiki = compile_wiki(
                self.sidecar.config,
                files=self.cache,
                progress=progress,
                held=frozenset(held),
                changed=changes,
            )
        except ConfigError as exc:  # e.g. docs_dir removed: keep serving the last state
            log.error("cannot compile the wiki: %s", exc)
            raise
        if self.warming:
            result = self._first_sync(wiki, reason, progress)
        else:
            records = self._records.all(wiki)
            pages, passages, chunks = records.pages, records.passages, records.chunks
            delta = self._records.delta if self._in_step else None
            self._in_step = False
            result = self._apply(pages, passages, chunks, reason, progress, delta=delta)
            self._in_step = True
            self.snapshot = Snapshot(
                result.generation, wiki, pages, chunks, time.time(), passages, records.by_page
            )
        self.lexical.publish()
        # After publishing: answers read these, and the next batch's compile takes them over.
        wiki.settle()
        if self.snapshot is not None:
            lanes.prepare(self.snapshot)
        elapsed = time.perf_counter() - started
        result = replace(result, seconds=elapsed, reason=reason)
        if result.changed:
            log.info(
                "generation %d (%s): %d added, %d updated, %d deleted (%d passages) in %.2f s",
                result.generation,
                reason,
                result.added,
                result.updated,
                result.deleted,
                result.passages,
                elapsed,
            )
        return result

    def _first_sync(self, wiki: Wiki, reason: str, progress: Progress | None) -> SyncResult:
        """The first batch, in the order that serves agents first: the page records and the
        lexical page index, published at once (page searches answer, and page vectors start),
        then the passages, then the raw-source chunks, each published as it is in. A kind not
        in yet is `warming` in every lane (lanes/base.py), not an empty answer. A kind that
        `hold_kind` holds ends the batch; the batches after it (an edit's, or the start's once
        the hold is lifted) index the kinds in so far again, by difference, and go on."""
        result: SyncResult | None = None
        done: list[str] = []
        self._in_step = False
        for kind in KINDS:
            held = "" if self.hold_kind is None or kind == KINDS[0] else self.hold_kind(kind)
            if held and kind not in self.ready_kinds:
                if held != self._held:
                    log.info("%s wait: %s", _PLURALS[kind], held)
                    self._held = held
                break
            done.append(kind)
            records = self._records.all(wiki, done, progress)
            pages, passages, chunks = records.pages, records.passages, records.chunks
            applied = self._apply(pages, passages, chunks, reason, progress, kinds=(kind,))
            result = applied if result is None else merged_results(result, applied)
            self.snapshot = Snapshot(
                applied.generation, wiki, pages, chunks, time.time(), passages, records.by_page
            )
            self.ready_kinds = frozenset(done)
            if kind != KINDS[-1]:
                self.lexical.publish()
                log.info("%s indexed (generation %d)", _PLURALS[kind], applied.generation)
            if self.on_publish is not None:
                self.on_publish()
        assert result is not None
        self._in_step = True
        return result

    def _apply(
        self,
        pages: dict[str, PageRecord],
        passages: dict[str, PassageRecord],
        chunks: dict[str, ChunkRecord],
        reason: str,
        progress: Progress | None,
        kinds: Collection[str] = KINDS,
        delta: Delta | None = None,
    ) -> SyncResult:
        """Write what differs from the manifest among the records of `kinds` (the records of
        other kinds are not looked at, nor deleted). `delta`: how these records differ from
        the ones the manifest was last brought to, when it was: then those alone are compared
        (an edit's batch at 10,000 pages compared ~90,000 records for a handful)."""
        if self._known is None:
            self._known = self.store.items()
        known = self._known
        # Only what differs from the manifest becomes an Item: an edit touches a handful of the
        # tens of thousands of records, and this runs on every batch.
        changed: list[tuple[Item, Record]] = []
        wanted: set[str] = set()
        found_kinds: tuple[tuple[str, dict[str, Any]], ...] = (
            ("page", pages),
            ("passage", passages),
            ("chunk", chunks),
        )
        gone: list[str] = []
        for kind, found in found_kinds:
            if kind not in kinds:
                continue
            prefix = kind + ":"
            looked_at = found if delta is None else delta.changed[kind]
            for name, record in looked_at.items():
                item_id = prefix + name
                wanted.add(item_id)
                before = known.get(item_id)
                if before is None or before.content_hash != record.content_hash:
                    item = Item(item_id, kind, record.content_hash, record.embed_hash)
                    changed.append((item, record))
            if delta is not None:
                gone += (prefix + n for n in delta.gone[kind] if n not in found)
        if delta is None:
            gone = [i for i in known.keys() - wanted if i.partition(":")[0] in kinds]
        gone = sorted(i for i in gone if i in known)
        generation = self.store.generation
        if not changed and not gone and self.snapshot is not None:
            return SyncResult(generation, 0, 0, 0, 0.0, reason)
        fresh = self.lexical.empty()
        page_updates = [r for _, r in changed if isinstance(r, PageRecord)]
        chunk_updates = [r for _, r in changed if isinstance(r, ChunkRecord)]
        passage_updates = [r for _, r in changed if isinstance(r, PassageRecord)]
        if progress:
            progress("index", 0, len(changed))
        self.lexical.apply(
            page_updates,
            [i.removeprefix("page:") for i in gone if i.startswith("page:")],
            chunk_updates,
            [i.removeprefix("chunk:") for i in gone if i.startswith("chunk:")],
            fresh=fresh,
            passages=passage_updates,
            passage_deletes=[i.removeprefix("passage:") for i in gone if i.startswith("passage:")],
        )
        self.lexical.warm()
        if progress:
            progress("index", len(changed), len(changed))
        generation += 1 if (changed or gone) else 0
        with self.store.transaction() as db:
            Store.put_items(db, [item for item, _ in changed])
            Store.put_chunks(
                db,
                [
                    StoredChunk(c.id, c.source, c.start_line, c.end_line, c.chunk_hash, c.text)
                    for c in chunk_updates
                ],
            )
            Store.delete_items(db, gone)
            Store.set_meta(db, "generation", str(generation))
            Store.set_meta(db, "synced_at", str(time.time()))
        # Passages are counted apart: an edited page is one update, however it was cut.
        passage_items = sum(1 for item, _ in changed if item.kind == "passage")
        passage_items += sum(1 for item_id in gone if item_id.startswith("passage:"))
        added = sum(1 for item, _ in changed if item.id not in known and item.kind != "passage")
        updated = len(changed) - len(passage_updates) - added
        deleted = sum(1 for item_id in gone if not item_id.startswith("passage:"))
        if not self.warming and self.sidecar.settings.vector_writer:
            # An edit's vectors before a backlog (a first sync's, still being embedded).
            self.store.hurry(item.id for item, _ in changed)
        for item, _ in changed:
            known[item.id] = item
        for item_id in gone:
            known.pop(item_id, None)
        if self.vector_sync is not None and gone:
            self.vector_sync.delete(gone)  # after the manifest commit
        return SyncResult(generation, added, updated, deleted, 0.0, reason, passage_items)

    # --- vectors ---------------------------------------------------------------------------------

    def check_vectors(self) -> int:
        """Make Chroma and the manifest agree after an unclean stop or a lost store
        (`VectorSync.check`); returns the fixes made."""
        return self.vector_sync.check() if self.vector_sync is not None else 0

    def embed_pending(
        self,
        limit: int | None = None,
        progress: Progress | None = None,
        interrupt: Callable[[], bool] | None = None,
    ) -> int:
        """Embed what the manifest lists as missing (`VectorSync.embed_pending`); returns the
        number embedded. `interrupt` is asked between model calls: when it says so, what is
        computed is written and the call returns (a sync is waiting for the CPU)."""
        if self.vector_sync is None or self.snapshot is None:
            return 0
        return self.vector_sync.embed_pending(limit, progress, interrupt)


def load_embedder(settings: SidecarSettings) -> tuple[Embedder | None, str]:
    """The configured embedder, loaded, or None and the reason the semantic lane is off."""
    from groundwiki_sidecar.embedding.choice import make_embedder

    remote = {
        "url": settings.embedding_url,
        "batch": settings.remote_batch,
        "concurrency": settings.remote_concurrency,
        "timeout_s": settings.remote_timeout_s,
        "retries": settings.remote_retries,
    }
    try:
        embedder = make_embedder(
            settings.embedding, settings.embed_batch, settings.passage_tokens, **remote
        )
        embedder.load()
    except EmbedderUnavailable as exc:
        log.error("semantic lane unavailable: %s", exc)
        return None, str(exc)
    return embedder, ""
