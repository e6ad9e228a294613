"""The running sidecar: the indexer, the file watcher and the background embedder together.

`start()` reconciles the indexes with the files once (the lexical and token lanes are ready when
it returns), then starts the watcher and the embedding thread. Embedding runs in batches,
resumes where it stopped after a restart (the manifest says what is missing), and never holds
up the lexical lane.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from groundwiki.core.sources.hygiene import junk_counts
from groundwiki.core.wiki.collector import Collector

from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.audit import AuditLog
from groundwiki_sidecar.base.claim import IndexClaim
from groundwiki_sidecar.base.settings import Sidecar
from groundwiki_sidecar.base.startup import Startup
from groundwiki_sidecar.embedding.embedders import EmbedderUnavailable
from groundwiki_sidecar.index.indexer import (
    Indexer,
    Progress,
    SyncResult,
    load_embedder,
    merged_results,
)
from groundwiki_sidecar.index.state_store import KINDS as STORED_KINDS
from groundwiki_sidecar.index.watcher import Watcher

if TYPE_CHECKING:
    from groundwiki_sidecar.api.identity import TokenSource

log = logging.getLogger("groundwiki_sidecar")
READER_POLL_S = 5.0
# The first sync's passages and chunks wait for the page vectors this long: a slow embedder (a
# remote one, a very large wiki) must not keep chunk search warming for hours. Past it they wait
# on only while the page vectors are nearly done at the rate measured (their last 2,000 of 10,001
# were cut to half speed by the passages that came in at 600 s), and never past the last bound.
HOLD_AT_MOST_S = 600.0
HOLD_TO_FINISH_S = 300.0
HOLD_NEVER_PAST_S = 1200.0
COLLECT_IDLE_S = 30.0  # no batch for this long: the garbage of frozen batches is collected
COLLECT_EVERY_S = 600.0  # and at least this often while batches keep coming


@dataclass(frozen=True)
class Status:
    generation: int
    pages: int
    chunks: int
    page_vectors: int
    chunk_vectors: int
    passages: int  # page passages indexed (both lanes rank them; vectors with embed_passages)
    passage_vectors: int
    lexical_docs: dict[str, int]
    embedding_pending: int
    texts_embedded: int
    # Over the last minute of model calls; null when nothing is being embedded.
    embedding_texts_per_s: float | None
    embedding_eta_s: float | None  # pending / rate; 0 when nothing is pending
    model: str
    last_sync: float | None
    last_sync_seconds: float | None
    pending_events: int
    watcher: str
    watcher_rearmed: int  # watched folders replaced whole (e.g. rm -rf wiki; mv) and re-watched
    lanes: dict[str, dict[str, Any]]  # state, reason, and both per kind under `kinds`
    # state ok | failing, error, since, last_ok; running, running_since, pages, following
    sync: dict[str, Any]
    embedding: dict[str, Any]  # the same for writing vectors
    # state ok | failing | off, error, records (the last sequence number), lost (since start)
    audit: dict[str, Any]
    tokens: dict[str, Any]  # state ok | failing (a changed file that does not parse) | off, error
    # Raw-source chunks cut but not indexed as junk (skip_junk_chunks): total, sources, and
    # the count of each kind (core/sources/hygiene.py JUNK_KINDS).
    skipped_chunks: dict[str, int] = field(default_factory=dict)
    # True until the first sync has indexed every kind of record; `starting` says how far it is
    # (stage, doing, percent, since, seconds), null once it is done.
    warming: bool = False
    starting: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class StartStopped(Exception):
    """Raised into the first sync when the service stops during it."""


class Closable(Protocol):
    def close(self) -> None: ...


class SidecarService:
    def __init__(
        self, sidecar: Sidecar, embed: bool = True, claim: IndexClaim | None = None
    ) -> None:
        self.sidecar = sidecar
        self.startup: Startup | None = None  # while `start_in_background` runs, and after
        self._closables: weakref.WeakSet[Closable] = weakref.WeakSet()
        settings = sidecar.settings
        embedder, problem = load_embedder(settings) if embed else (None, "embedding disabled")
        self.indexer = Indexer(sidecar, embedder, claimed=claim)
        self._starting: threading.Thread | None = None
        self.audit = (
            AuditLog(
                sidecar.index_dir / "audit",
                int(settings.audit_rotate_mb * 1_000_000),
                settings.audit_keep,
            )
            if settings.audit
            else None
        )
        self.tokens: TokenSource | None = None  # set by the HTTP app, which checks them
        if problem:
            self.indexer.semantic_problem = problem
        config = sidecar.config
        self.watcher = Watcher(
            [config.docs_dir, config.raw_dir],
            config.lock_path,
            sidecar.index_dir,
            self.sync,
            settings.debounce_s,
            on_change=self._changes_coming,
        )
        self.last: SyncResult | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        # Set while file changes wait to be indexed: the embedder yields the CPU to the sync,
        # and then embeds the changed pages first.
        self._sync_pending = threading.Event()
        self._embed_thread = threading.Thread(
            target=self._embed_loop, name="groundwiki-embed", daemon=True
        )
        # Batches freeze what is alive, collected once no batch came for a while (collector.py):
        # a full collection walks the indexes' millions of objects (2 s at 10,000 pages), and
        # one landing inside an edit's batch cost that edit the 2 s.
        self._collector = Collector(idle_s=COLLECT_IDLE_S, every_s=COLLECT_EVERY_S)
        self._held_since: float | None = None  # when the first sync first held a kind back

    def _changes_coming(self) -> None:
        self._sync_pending.set()

    def sync(
        self,
        reason: str,
        progress: Progress | None = None,
        changes: frozenset[Path] | None = None,
    ) -> SyncResult:
        self._collector.build_starts(serving=True)
        try:
            self.last = self.indexer.sync(reason, progress, changes)
        finally:
            self._sync_pending.clear()
            self._collector.build_ends(serving=True)
        if self.indexer.store.pending_count():
            self._wake.set()
        return self.last

    def start(self, progress: Progress | None = None, watch: bool = True) -> SyncResult:
        self.indexer.check_vectors()
        if self.indexer.serve_persisted():
            if self.startup is not None:
                self.startup.running()  # answering; the files are checked behind
            self._wake_embedder()
        if watch:
            # Before the first sync's walk: every change after it is then an event, and each
            # batch can be handed the paths the events named (none has to walk the wiki).
            self._watch()
        result = self.sync("start", progress)
        while self.indexer.warming:  # a kind held back (`_hold`): go on once it is let go
            self._await_hold(progress)
            result = merged_results(result, self.sync("start", progress))
        if result.changed or not self.indexer.cache_file.exists():
            self.indexer.save_cache()  # the next start reads only what changed after this
        self._follow(watch)
        return result

    def _follow(self, watch: bool) -> None:
        """The work after the first sync: the watcher, and the embedder (already running when
        the first sync started it as its pages came in)."""
        if watch:
            self._watch()
        if not self._embed_thread.is_alive():
            self._embed_thread.start()
        self._wake.set()

    def _watch(self) -> None:
        # Once, before the first sync (a failed one follows again, later).
        if self.watcher.state == "starting":
            self.watcher.start(full_sync_follows=True)

    def start_in_background(self, startup: Startup, watch: bool = True) -> None:
        """`start` in a thread of its own, its progress in `startup` (and the log): the
        service answers from the first kind of records indexed on (`Indexer._first_sync`), and
        the vectors of each kind start as soon as it is in. A failure of the first sync is
        kept in /status and retried by the watcher's next sync, like any failed sync."""
        self.startup = startup
        # Vectors start as soon as the pages are in, not after the whole first sync, and the
        # page vectors come before the passages and chunks are cut.
        self.indexer.on_publish = self._wake_embedder
        self.indexer.hold_kind = self._hold

        def run() -> None:
            try:
                self.start(self._progress, watch=watch)
            except StartStopped:
                return
            except Exception:  # in /status as the sync's failure; the watcher retries
                log.exception("the first sync failed; answers wait for the next one")
                if not self._stop.is_set():
                    self._follow(watch)
                startup.running()  # the service runs on, answering what it can
                return
            startup.running()
            log.info(
                "indexes ready in %.1f s (generation %d)",
                time.time() - startup.started,
                self.indexer.store.generation,
            )

        self._starting = threading.Thread(target=run, name="groundwiki-first-sync", daemon=True)
        self._starting.start()

    def _hold(self, kind: str) -> str:
        """Why the first sync's `kind` waits ("" when it does not): the passages and chunks wait
        for the page vectors, which page search needs first, instead of taking the CPU from
        them (cutting 65,000 passages beside the model halved its rate at 10,000 pages). Not
        when nothing computes them here (no vectors, a reader replica, a failing embedder), nor
        after HOLD_AT_MOST_S unless they will be done within HOLD_TO_FINISH_S."""
        indexer = self.indexer
        if indexer.vector_sync is None or not self.sidecar.settings.vector_writer:
            return ""
        if self._stop.is_set() or indexer.embed_health.failing:
            return ""
        pending = indexer.store.pending_count_of("page")
        if pending == 0:
            return ""
        if self._held_since is None:
            self._held_since = time.monotonic()
        held = time.monotonic() - self._held_since
        if held > HOLD_NEVER_PAST_S:
            return ""
        if held > HOLD_AT_MOST_S:
            finish = indexer.vector_sync.meter.eta_s(pending)
            if finish is not None and finish > HOLD_TO_FINISH_S:
                return ""
        return "the page vectors come first"

    def _await_hold(self, progress: Progress | None) -> None:
        """Until the first sync's next kind is let go (or another batch took it on)."""
        while self.indexer.warming:
            if self._stop.is_set():
                raise StartStopped("the sidecar stopped during its first sync")
            following = next(k for k in STORED_KINDS if k not in self.indexer.ready_kinds)
            if not self._hold(following):
                return
            if progress is not None:
                counts = self.indexer.store.counts()
                progress("vectors", counts["page_vectors"], counts["page"])
            self._stop.wait(0.25)

    def _progress(self, stage: str, done: int, total: int) -> None:
        """The first sync's progress callback; where a stop asked for during it ends it."""
        if self._stop.is_set():
            raise StartStopped("the sidecar stopped during its first sync")
        if self.startup is not None:
            self.startup.update(stage, done, total)

    def _wake_embedder(self) -> None:
        if not self._embed_thread.is_alive() and not self._stop.is_set():
            self._embed_thread.start()
        self._wake.set()

    def close_on_stop(self, closable: Closable) -> None:
        """`closable.close()` is called when the service stops, if it is still alive then: the
        query engines' lane threads end with the service, whoever made them (a test's app that
        never ran its lifespan, too), and an engine dropped earlier is not kept alive."""
        self._closables.add(closable)

    def stop(self) -> None:
        self._collector.stop()  # first: a batch ending during the stop starts no timer
        for closable in list(self._closables):
            closable.close()
        self._stop.set()
        self._wake.set()
        if self._starting is not None and self._starting.is_alive():
            # Ends at its next progress report (`_progress`): a stop during a long first sync
            # does not wait for the whole wiki.
            self._starting.join(timeout=60)
        if self.watcher.state in {"watching", "polling"}:
            self.watcher.stop()
        if self._embed_thread.is_alive():
            self._embed_thread.join(timeout=60)
        if self.indexer.snapshot is not None:
            self.indexer.save_cache()
        self.indexer.close()
        if self.audit is not None:
            self.audit.close()

    def _embed_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(timeout=30)
            self._wake.clear()
            while not self._stop.is_set():
                waited = time.monotonic()
                while self._sync_pending.is_set() and time.monotonic() - waited < 10:
                    time.sleep(0.02)  # bounded: a watcher that died must not stop embedding
                try:
                    # Cut short between model batches when files changed: the sync gets the
                    # CPU, then the changed pages are embedded first.
                    done = self.indexer.embed_pending(interrupt=self._yield_embedding)
                except EmbedderUnavailable as exc:  # an embedding server down or refusing
                    self.indexer.embed_health.failed(exc)
                    log.error("embedding failed: %s; retrying in 30 s", exc)
                    break
                except Exception as exc:  # e.g. a full disk under Chroma: shown in /status
                    self.indexer.embed_health.failed(exc)
                    log.exception("embedding failed; retrying in 30 s")
                    break
                self.indexer.embed_health.succeeded()
                if done == 0:
                    if self._sync_pending.is_set() or self.indexer.store.has_urgent():
                        # Cut short for an edit before anything was written: its vectors
                        # next, once its batch is in (the manifest may be a moment ahead).
                        time.sleep(0.02)
                        continue
                    break
            if not self.sidecar.settings.vector_writer and self.indexer.store.pending_count():
                # A reader replica looks again for what the writer has stored meanwhile.
                self._wake.wait(timeout=READER_POLL_S)
                self._wake.set()

    def _yield_embedding(self) -> bool:
        # An edit's vectors waiting too: a window of a thousand backlog texts takes a minute,
        # and the sync that queued them may be done before the window is next asked.
        return self._sync_pending.is_set() or self._stop.is_set() or self.indexer.store.has_urgent()

    def wait_embedded(self, timeout: float) -> bool:
        """For tests and `groundwiki index`: block until no vector is pending."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.indexer.vectors is None or self.indexer.store.pending_count() == 0:
                return True
            self._wake.set()
            time.sleep(0.1)
        return False

    def status(self) -> Status:
        indexer = self.indexer
        counts = indexer.store.counts()
        snapshot = indexer.snapshot
        embedder = indexer.embedder
        # Per kind, as the lanes' states count them: each count is made once per write.
        pending = sum(indexer.store.pending_count_of(kind) for kind in STORED_KINDS)
        rate = indexer.meter.rate()
        eta = indexer.meter.eta_s(pending)
        return Status(
            generation=indexer.store.generation,
            pages=counts["page"],
            chunks=counts["chunk"],
            page_vectors=counts["page_vectors"],
            chunk_vectors=counts["chunk_vectors"],
            passages=counts["passage"],
            passage_vectors=counts["passage_vectors"],
            lexical_docs=indexer.lexical.doc_counts(),
            embedding_pending=pending,
            texts_embedded=embedder.calls if embedder else 0,
            embedding_texts_per_s=None if rate is None else round(rate, 2),
            embedding_eta_s=None if eta is None else round(eta, 1),
            model=embedder.identity if embedder else "",
            last_sync=snapshot.synced_at if snapshot else None,
            last_sync_seconds=self.last.seconds if self.last else None,
            pending_events=self.watcher.pending_events,
            watcher=self.watcher.state,
            watcher_rearmed=self.watcher.rearmed,
            lanes=lanes.status(indexer),
            sync={**indexer.sync_health.to_json(), **indexer.sync_progress()},
            embedding=indexer.embed_health.to_json(),
            audit=self._audit_status(),
            tokens=self.tokens.state() if self.tokens else {"state": "off", "error": ""},
            skipped_chunks=junk_counts(snapshot.wiki.junk_chunks if snapshot else {}),
            warming=indexer.warming,
            starting=self.starting(),
        )

    def starting(self) -> dict[str, Any] | None:
        """How far the start has come while the first sync runs (base/startup.py); None after,
        and for a service started in the foreground (`start`), which nobody asks meanwhile."""
        if self.startup is None or not self.indexer.warming:
            return None
        return self.startup.to_json()

    def _audit_status(self) -> dict[str, Any]:
        if self.audit is None:
            return {"state": "off", "error": "", "records": 0, "lost": 0}
        return self.audit.status()
