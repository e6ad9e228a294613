"""The lexical lane's storage: two Whoosh indexes (pages, chunks) under the index folder.

Pages are indexed by key, title, summary, tags and body with a stemming analyzer; frontmatter
values that agents filter on are stored as ID fields. The chunk index holds raw-source chunks
and the passages of page bodies, told apart by their `kind` (source, passage), each indexed by
its text, which is not stored here (the snapshot holds it). Ranking is BM25F computed over these
postings (`bm25f.py`); field weights are applied at query time, so changing them needs no
re-index.

A batch of changes is one Whoosh commit: searchers opened before it see none of it, searchers
opened after see all of it. Only the sidecar's indexer thread writes.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from groundwiki.core.files.forking import can_fork
from whoosh import index
from whoosh.analysis import StemmingAnalyzer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema

from groundwiki_sidecar.base.health import describe, passing_failure
from groundwiki_sidecar.index.bm25f import Bm25f, analyse
from groundwiki_sidecar.index.common_terms import NO_TERMS, too_common
from groundwiki_sidecar.index.documents import ChunkRecord, PageRecord, PassageRecord
from groundwiki_sidecar.index.segment_cache import Population, SegmentCache, segment_readers
from groundwiki_sidecar.index.segment_workers import spawn_count, write_spread
from groundwiki_sidecar.index.stemming import snowball_english
from groundwiki_sidecar.index.terms import analysed
from groundwiki_sidecar.index.whoosh_readers import reopen

log = logging.getLogger("groundwiki_sidecar")
# 3: passages in the chunk index (kind, page); 4: scope; 5: frequencies, not positions (the
# ranking reads weights only, and positions made writing slower); 6: Snowball English stems
# (stemming.py), not Porter's
SCHEMA_VERSION = "6"
# BM25F field weights, applied at query time (changing them needs no re-index). The key and the
# title name a page; its summary and tags describe it; the body is long and says many things.
PAGE_FIELD_WEIGHTS = {"key": 3.0, "title": 3.0, "summary": 2.0, "tags_text": 2.0, "body": 1.0}
CHUNK_FIELD_WEIGHTS = {"text": 1.0}
PARALLEL_FROM = 500  # documents in one batch
# An edit's batch writes a small segment and, by Whoosh's default, merges the small segments
# there are into it on every commit: at 10,000 pages a fifth of an edit's batch. Small batches
# leave the segments as they are until there are this many, then merge as Whoosh would.
SMALL_BATCH = 64  # documents written or deleted
MERGE_FROM_SEGMENTS = 12
WRITER_TIMEOUT_S = 30.0


def _text(stored: bool = False) -> TEXT:
    """A searched text field: stemmed (Snowball English), and holding term frequencies only
    (no positions: BM25F reads weights, never phrases)."""
    return TEXT(analyzer=StemmingAnalyzer(stemfn=snowball_english), phrase=False, stored=stored)


# The text fields of each index, analysed before they reach Whoosh (terms.py).
PAGE_TEXT_FIELDS = ("key", "title", "summary", "tags_text", "body")
CHUNK_TEXT_FIELDS = ("text",)


def page_schema() -> Schema:
    return Schema(
        id=ID(stored=True, unique=True),
        key=_text(),  # `wing-flutter` is findable as "wing flutter"
        title=_text(stored=True),
        summary=_text(),
        tags=KEYWORD(lowercase=True, commas=True, scorable=True, stored=True),
        tags_text=_text(),
        body=_text(),
        kind=ID(stored=True),
        usage_mode=ID(stored=True),
        stale=ID(stored=True),
        archived=ID(stored=True),
        scope=ID(),  # global or user:<id>: a query keeps to its viewer's scopes
    )


def chunk_schema() -> Schema:
    return Schema(
        id=ID(stored=True, unique=True),
        kind=ID(stored=True),  # source (a raw-source chunk) or passage (of a page's body)
        source=ID(stored=True),
        page=ID(stored=True),  # a passage's page uid
        scope=ID(),  # a passage's page's scope; global for raw-source chunks
        start_line=STORED(),  # shown, never searched: not worth indexing
        end_line=STORED(),
        text=_text(),
    )


def page_fields(record: PageRecord) -> dict[str, Any]:
    return {
        "id": record.uid,
        "key": record.key.replace("-", " ").replace("_", " "),
        "title": record.title,
        "_stored_title": record.title,  # the title as written; `title` becomes its terms
        "summary": record.summary,
        "tags": ",".join(record.tags),
        "tags_text": " ".join(record.tags),
        "body": record.body,
        "kind": record.kind,
        "usage_mode": record.usage_mode,
        "stale": "yes" if record.stale_since else "no",
        "archived": "yes" if record.archived_since else "no",
        "scope": record.scope,
    }


def chunk_fields(record: ChunkRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": "source",
        "scope": "global",
        "source": record.source,
        "start_line": record.start_line,
        "end_line": record.end_line,
        "text": record.text,
    }


def passage_fields(record: PassageRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": "passage",
        "page": record.page,
        "scope": record.scope,
        "start_line": record.start_line,
        "end_line": record.end_line,
        "text": record.text,
    }


def _writer_options(count: int) -> dict[str, Any]:
    """Whoosh's Python indexing is the cold start's largest cost. A large batch in a
    single-threaded process is split across forked workers, one segment each (1.6x to 1.7x the
    documents per second on two cores, measured); otherwise one process with a larger buffer."""
    options: dict[str, Any] = {"limitmb": 256 if count > 1000 else 64}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if count >= PARALLEL_FROM and cores > 1 and can_fork():
        options.update(procs=min(cores, 4), multisegment=True, limitmb=128)
    return options


class LexicalIndex:
    def __init__(self, folder: Path, on_commit: Callable[[], None] | None = None) -> None:
        """`on_commit` is called once the index files are written: opened (perhaps made anew)
        and after each batch's commits (the sidecar seals them then, `seal.py`)."""
        self.folder = folder
        self.pages = self._open(folder / "pages", page_schema())
        self.chunks = self._open(folder / "chunks", chunk_schema())
        self._on_commit = on_commit or (lambda: None)
        self._on_commit()
        # Whoosh's `Index.schema` reads the table of contents from disk on every access.
        self.schemas = {"page": self.pages.schema, "chunk": self.chunks.schema}
        # Queries read the published version; a commit becomes visible to them only when the
        # sync publishes it together with its snapshot, so a query never ranks IDs from one
        # batch against the records of another (a chunk whose ID changed would vanish).
        self.version = 0
        self._committed = 0
        # Set once documents were added: `empty()` is then false without opening the segments
        # (which it did on every batch). Deleting everything later only costs `apply` its
        # shortcut for an empty index, never a duplicate.
        self._filled = False
        self._local = threading.local()
        self.segments = {"page": SegmentCache(), "chunk": SegmentCache()}

    def ranker(self, kind: str) -> Bm25f:
        return Bm25f(PAGE_FIELD_WEIGHTS if kind == "page" else CHUNK_FIELD_WEIGHTS)

    def rank(
        self,
        kind: str,
        text: str,
        depth: int,
        require: Sequence[tuple[str, str]] = (),
        exclude: Sequence[tuple[str, str]] = (),
        ranker: Bm25f | None = None,
        report: Callable[[str], None] | None = None,
        scopes: Sequence[str] = (),
        hidden: Sequence[tuple[str, str]] = (),
        weight: Callable[[float, int], None] | None = None,
        skipped: Callable[[str], None] | None = None,
        stopword_idf: float = 0.0,
    ) -> list[tuple[str, float]]:
        """The best `depth` IDs for a query with their BM25F scores; `require`/`exclude` are
        (field, value) filters on the ID fields (a tag, `usage_mode`, `kind`). `scopes` and
        `hidden` say whose view the query is of: the scopes a document may be of (a viewer's;
        empty: every scope) and (field, value) pairs of documents outside the view all the same
        (the shared pages a viewer's own shadow). Scores, and which terms of a long query are
        scored, come from that view's documents alone (`segment_cache.Population`). A long query is
        scored on its `MAX_QUERY_TERMS` distinct terms that weigh most (`bound_terms`);
        `report` is told what was left out, if anything was. `weight` is told what the query
        can score at most (`Bm25f.rank`'s ceiling over its scored terms) and how many terms
        its text analyses into (repeats, and terms no document holds, counted): what the
        fusion reads a hit's share of the query from (`lanes.adaptive`). `skipped`, when given,
        is told why the query is not ranked at all (nothing is returned): it has no terms, or
        its known terms' mean idf is under `stopword_idf` (`common_terms`)."""
        schema = self.schemas[kind]
        terms = analyse(schema, "body" if kind == "page" else "text", text)
        if skipped is not None and not terms:
            skipped(NO_TERMS)
            return []
        model = ranker or self.ranker(kind)
        searcher = self.searcher(kind)
        population = Population.of(
            (schema["scope"].to_bytes(v) for v in scopes),
            ((f, schema[f].to_bytes(v)) for f, v in hidden),
        )
        bounded = model.bound(searcher, self.segments[kind], terms, population)
        if report is not None and bounded.left_out:
            report(bounded.report())
        if skipped is not None and stopword_idf > 0:
            idfs = model.idfs(searcher, self.segments[kind], bounded.terms, population)
            reason = too_common(idfs, stopword_idf)
            if reason:
                skipped(reason)
                return []
        reachable: list[float] = []
        ranked = model.rank(
            searcher,
            self.segments[kind],
            bounded.terms,
            depth,
            [(f, schema[f].to_bytes(v)) for f, v in require],
            [(f, schema[f].to_bytes(v)) for f, v in exclude],
            population,
            ceiling=reachable.append,
        )
        if weight is not None:
            weight(reachable[0] if reachable else 0.0, len(terms))
        return ranked

    def warm(self) -> None:
        """Read the committed segments' lengths now, in the caller's thread (the sync's), not
        in the next query."""
        for kind, fields in (("page", PAGE_FIELD_WEIGHTS), ("chunk", CHUNK_FIELD_WEIGHTS)):
            for reader, _ in segment_readers(self.searcher(kind, self._committed)):
                self.segments[kind].leaf(reader, fields)

    def publish(self) -> None:
        """Let queries see the last commit: called when its snapshot is swapped in."""
        self.version = self._committed

    def searcher(self, kind: str, version: int | None = None) -> Any:
        """A searcher of the page or chunk index for this thread, kept between queries (opening
        one reads every segment's files) and reopened once a newer commit is published."""
        cache = self._local.__dict__.setdefault("searchers", {})
        # Read before the reader is opened: a commit landing in between is then picked up by
        # this thread's next query instead of hiding behind an up-to-date version number.
        if version is None:
            version = self.version
        held = cache.get(kind)
        if held is not None and held[0] == version:
            return held[1]
        # Not Whoosh's refresh(): it keeps the deletions a reused segment had (`readers.py`).
        ix = self.pages if kind == "page" else self.chunks
        fresh = reopen(ix, self.schemas[kind], held[1] if held is not None else None)
        if held is not None:
            self.segments[kind].keep_only(r for r, _ in segment_readers(fresh))
        cache[kind] = (version, fresh)
        return fresh

    @staticmethod
    def _open(folder: Path, schema: Schema) -> index.Index:
        """The index in `folder`; one of an older layout, or damaged (a segment file deleted or
        cut short), is made anew: the indexer then writes every page and chunk into it again
        (the manifest's counts no longer match), since the files are the source of truth."""
        marker = folder / "SCHEMA"
        if folder.exists() and (not marker.exists() or marker.read_text() != SCHEMA_VERSION):
            shutil.rmtree(folder)  # an index of an older layout: rebuilt from the files
        if index.exists_in(str(folder)):
            try:
                opened = index.open_dir(str(folder))
                with opened.reader() as reader:  # opens every segment's files
                    reader.doc_count()
                return opened
            except Exception as exc:  # Whoosh raises OSError, EOFError, struct.error, ...
                if passing_failure(exc):
                    raise  # e.g. out of descriptors: the index is not damaged; keep it
                log.warning(
                    "the lexical index in %s is damaged (%s): rebuilding it from the files",
                    folder,
                    describe(exc),
                )
                shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        created = index.create_in(str(folder), schema)
        marker.write_text(SCHEMA_VERSION)
        return created

    def apply(
        self,
        pages: Iterable[PageRecord],
        page_deletes: Sequence[str],
        chunks: Iterable[ChunkRecord],
        chunk_deletes: Sequence[str],
        fresh: bool = False,
        passages: Iterable[PassageRecord] = (),
        passage_deletes: Sequence[str] = (),
    ) -> None:
        """One commit per index (passages go with the chunks). `fresh`: the index is empty, so
        adding needs no delete."""
        page_docs = [page_fields(p) for p in pages]
        self._write(self.pages, page_docs, page_deletes, fresh, PAGE_TEXT_FIELDS)
        docs = [chunk_fields(c) for c in chunks] + [passage_fields(p) for p in passages]
        self._write(self.chunks, docs, [*chunk_deletes, *passage_deletes], fresh, CHUNK_TEXT_FIELDS)
        self._filled = self._filled or bool(page_docs or docs)
        self._committed += 1
        self._on_commit()

    @staticmethod
    def _write(
        ix: index.Index,
        docs: list[dict[str, Any]],
        deletes: Sequence[str],
        fresh: bool,
        text_fields: tuple[str, ...],
    ) -> None:
        """`docs` (their text fields not yet analysed) added or updated, `deletes` deleted, in
        one commit."""
        if not docs and not deletes:
            return
        spawned = spawn_count(len(docs)) if fresh and not deletes and not can_fork() else 0
        if spawned:
            writer = ix.writer(timeout=WRITER_TIMEOUT_S, limitmb=128)
            try:
                with_workers = write_spread(writer, docs, text_fields, spawned)
            except BaseException:
                writer.cancel()
                raise
            try:
                writer.commit(mergetype=with_workers)
            except BaseException:
                _abandon(writer)
                raise
            return
        analysed(ix.schema, docs, text_fields)
        writer = ix.writer(timeout=WRITER_TIMEOUT_S, **_writer_options(len(docs)))
        try:
            for doc_id in deletes:
                writer.delete_by_term("id", doc_id)
            for doc in docs:
                if fresh:
                    writer.add_document(**doc)
                else:
                    writer.update_document(**doc)
        except BaseException:
            writer.cancel()
            raise
        small = len(docs) + len(deletes) <= SMALL_BATCH
        try:
            writer.commit(merge=not small or len(writer.segments) >= MERGE_FROM_SEGMENTS)
        except BaseException:
            _abandon(writer)
            raise

    def empty(self) -> bool:
        """No document in either index (cheaper than `doc_counts`, which every batch asked)."""
        if self._filled:
            return False
        empty = self.pages.doc_count() == 0 and self.chunks.doc_count() == 0
        self._filled = not empty
        return empty

    def doc_counts(self) -> dict[str, int]:
        """Live documents: pages, raw-source chunks and passages (the last two share an index)."""
        passages = _live_count(self.chunks, "kind", "passage")
        total = self.chunks.doc_count()
        return {"pages": self.pages.doc_count(), "chunks": total - passages, "passages": passages}

    def ids(self) -> tuple[set[str], set[str]]:
        """Every page key and raw-source chunk ID indexed: how the startup check finds an
        interrupted batch."""
        pages, by_kind = self._ids()
        return pages, by_kind.get("source", set())

    def passage_ids(self) -> set[str]:
        return self._ids()[1].get("passage", set())

    def _ids(self) -> tuple[set[str], dict[str, set[str]]]:
        with self.pages.searcher() as searcher:
            pages = {fields["id"] for fields in searcher.all_stored_fields()}
        by_kind: dict[str, set[str]] = {}
        with self.chunks.searcher() as searcher:
            for fields in searcher.all_stored_fields():
                by_kind.setdefault(fields.get("kind", "source"), set()).add(fields["id"])
        return pages, by_kind


def _abandon(writer: Any) -> None:
    """A writer whose commit failed (a full disk): its lock released, or no later batch could
    write again. Whoosh's commit keeps the lock when it fails; the table of contents was not
    written, so the index is as the last commit left it."""
    try:
        writer.cancel()
    except Exception:  # the writer is half closed: release its lock alone
        lock = getattr(writer, "writelock", None)
        if lock is not None:
            try:
                lock.release()
            except Exception as exc:  # nothing more can be done here; the caller's error stands
                log.debug("could not release the lexical index's lock: %s", exc)


def _live_count(ix: index.Index, field: str, value: str) -> int:
    """Live documents holding a term: the term's document count, less deleted documents in the
    segments that have some (Whoosh counts them until a merge drops them)."""
    term = value.encode("utf-8")
    count = 0
    with ix.reader() as reader:
        for leaf, _ in reader.leaf_readers():
            if (field, term) not in leaf:
                continue
            if not leaf.has_deletions():
                count += leaf.doc_frequency(field, term)
            else:
                ids = leaf.postings(field, term).all_ids()
                count += sum(1 for docnum in ids if not leaf.is_deleted(docnum))
    return count
