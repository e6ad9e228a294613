"""What the sidecar indexes, taken from the compiled wiki: one record per page, per passage of a
page's body and per raw-source chunk.

Each record carries two hashes: `content_hash` over everything the lexical index stores for it,
and `embed_hash` over the text its vector is made from. A page's vector is made from its title,
summary and tags (the page contract's promise: a precise summary makes a page findable) and by
default the body's lead, not from its frontmatter or the rest of the body; that rest is found
through the page's passages, each embedded with the page title and the headings it sits under.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from groundwiki.core.model.records import Chunk, Page, Passage
from groundwiki.core.model.scopes import scoped_name
from groundwiki.core.read.lead import page_lead
from groundwiki.core.wiki.compiled import Wiki

from groundwiki_sidecar.index.state_store import KINDS  # also the order a first sync adds them


def _hash(value: Any) -> str:
    data = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _fields_of(record: Any) -> dict[str, Any]:
    """A flat record's fields, as `asdict` gives them, without its deep copy of each value (a
    second of the vault's first sync; the fields are strings, numbers and tuples of strings,
    which JSON writes alike either way)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class PageRecord:
    key: str
    title: str
    summary: str
    tags: tuple[str, ...]
    body: str
    kind: str
    usage_mode: str
    stale_since: str | None
    archived_since: str | None
    path: str
    lead: str = ""  # the body's opening, embedded too when `page_vector: lead`
    scope: str = "global"  # or `user:<id>` (core/scopes.py)

    @property
    def uid(self) -> str:
        """Its ID in the indexes: the key, under the scope for a user's page (`Page.uid`)."""
        return scoped_name(self.scope, self.key)

    @property
    def embed_text(self) -> str:
        parts = [self.title, self.summary]
        if self.tags:
            parts.append("Tags: " + ", ".join(self.tags))
        parts.append(self.lead)
        return "\n".join(p for p in parts if p)

    @cached_property
    def content_hash(self) -> str:
        return _hash(_fields_of(self))

    @cached_property
    def embed_hash(self) -> str:
        return _hash(["page", self.embed_text])

    @property
    def metadata(self) -> dict[str, str | bool]:
        """Filterable fields for Chroma: scalars only, one boolean key per tag."""
        data: dict[str, str | bool] = {
            "key": self.key,
            "kind": self.kind,
            "usage_mode": self.usage_mode,
            "stale": self.stale_since is not None,
            "archived": self.archived_since is not None,
        }
        for tag in self.tags:
            data[f"tag:{tag}"] = True
        return data


@dataclass(frozen=True)
class ChunkRecord:
    id: str
    source: str
    start_line: int
    end_line: int
    text: str
    chunk_hash: str  # the core's hash of the chunk text (what the lock records)

    @property
    def embed_text(self) -> str:
        return self.text

    @cached_property
    def content_hash(self) -> str:
        return _hash(_fields_of(self))

    @cached_property
    def embed_hash(self) -> str:
        return _hash(["chunk", self.text])

    @property
    def metadata(self) -> dict[str, str | int]:
        return {"source": self.source, "start_line": self.start_line, "end_line": self.end_line}


@dataclass(frozen=True)
class PassageRecord:
    id: str
    page: str  # the page's uid: its key, under the scope for a user's page
    path: str  # the page file, relative to the wiki root
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    text: str
    passage_hash: str  # the core's hash of the passage text
    embed: str  # what its vector is made from (see `passage_record`)
    scope: str = "global"  # its page's

    @property
    def embed_text(self) -> str:
        return self.embed

    @cached_property
    def content_hash(self) -> str:
        # The embedded text too: a sync notices a changed record by this hash alone.
        return _hash(_fields_of(self))

    @cached_property
    def embed_hash(self) -> str:
        # The same tag as a page's: a passage made of the page's own vector text shares the
        # page's hash, so the vector cache embeds that text once.
        return _hash(["page", self.embed])

    @property
    def metadata(self) -> dict[str, str | int]:
        return {"page": self.page, "start_line": self.start_line, "end_line": self.end_line}


LEAD_WORDS = 200  # about what MiniLM reads (256 word pieces) after a title and summary


def page_record(page: Page, lead: bool = False) -> PageRecord:
    return PageRecord(
        key=page.key,
        title=page.title,
        summary=page.summary or "",
        tags=tuple(page.tags),
        body=page.body,
        kind=page.kind,
        usage_mode=page.usage_mode,
        stale_since=page.stale_since,
        archived_since=page.archived_since,
        path=page.rel_path,
        lead=page_lead(page, LEAD_WORDS) if lead else "",
        scope=page.scope,
    )


def passage_records(page: PageRecord, passages: tuple[Passage, ...]) -> tuple[PassageRecord, ...]:
    """A passage's vector text is its context (page title, then the headings it sits under) and
    its text. A body that is one passage the page's vector already reads whole (its lead was not
    cut) takes the page's vector text instead: the same text, embedded once for both (short
    pages, such as abstracts, are most pages of many wikis)."""
    shared = len(passages) == 1 and page.lead and len(page.lead.split()) < LEAD_WORDS
    records = []
    for passage in passages:
        if shared:
            embed = page.embed_text
        else:
            context = " › ".join((page.title, *passage.heading_path))
            embed = f"{context}\n{passage.text}"
        records.append(
            PassageRecord(
                passage.id,
                page.uid,
                passage.path,
                passage.heading_path,
                passage.start_line,
                passage.end_line,
                passage.text,
                passage.content_hash,
                embed,
                page.scope,
            )
        )
    return tuple(records)


def chunk_record(chunk: Chunk) -> ChunkRecord:
    return ChunkRecord(
        chunk.id, chunk.source, chunk.start_line, chunk.end_line, chunk.text, chunk.content_hash
    )


@dataclass(frozen=True)
class Records:
    pages: dict[str, PageRecord]  # by uid (the key, for every shared page)
    passages: dict[str, PassageRecord]  # by passage ID
    chunks: dict[str, ChunkRecord]  # by chunk ID
    # Each page's passages in file order, by its uid (pages with none left out): what the
    # lanes that rank pages by their passages read.
    by_page: dict[str, tuple[PassageRecord, ...]] = field(default_factory=dict)


Record = PageRecord | PassageRecord | ChunkRecord


@dataclass(frozen=True)
class Delta:
    """How a call's records differ from the last call's: the records made anew, by kind and
    name (an unchanged record is the very same object), and the names gone."""

    changed: dict[str, dict[str, Record]]
    gone: dict[str, list[str]]


Progress = Callable[[str, int, int], None]  # stage, done, total
Seen = tuple[Page, PageRecord, tuple[PassageRecord, ...] | None]


class RecordCache:
    """Records of the pages and chunks the last compile shared with this one (a compile cache
    hands back the very same objects for unchanged files), so their hashes are computed once,
    and an unchanged page's passages are neither cut nor hashed again.

    After a first call, a call for the same kinds works by difference: only the pages whose
    object changed are looked at, the last call's dicts are copied (in C, ~1 ms for 10,000) and
    patched, and `delta` says what differs, so the indexer compares those alone with its
    manifest. The dicts keep the order a call from scratch gives (pages by uid, each page's
    passages in its order, chunks by ID): answers must not depend on the history of edits."""

    def __init__(self, lead: bool = False) -> None:
        self.lead = lead
        # A page's passages are None until a call asks for them (a first sync indexes pages
        # before it cuts any passage).
        self._pages: dict[int, Seen] = {}
        self._chunks: dict[int, tuple[Chunk, ChunkRecord]] = {}
        self._last: Records | None = None
        self._last_kinds: frozenset[str] = frozenset()
        self._cut_from: tuple[object, object] | None = None  # (sources, policy) of _last.chunks
        self.delta: Delta | None = None  # None after a call that did not work by difference

    def all(
        self, wiki: Wiki, kinds: Collection[str] = KINDS, progress: Progress | None = None
    ) -> Records:
        """The records of `kinds` (the others come back empty): pages always, passages and
        chunks when asked for."""
        if self._last is not None and frozenset(kinds) == self._last_kinds:
            records = self._by_difference(wiki, self._last)
        else:
            records = self._from_scratch(wiki, kinds, progress)
            self.delta = None
        self._last, self._last_kinds = records, frozenset(kinds)
        if "passage" in kinds:
            wiki.prune_passages()
        return records

    def _from_scratch(
        self, wiki: Wiki, kinds: Collection[str], progress: Progress | None
    ) -> Records:
        cut_passages = "passage" in kinds
        pages_seen: dict[int, Seen] = {}
        pages: dict[str, PageRecord] = {}
        passages: dict[str, PassageRecord] = {}
        by_page: dict[str, tuple[PassageRecord, ...]] = {}
        indexed = sorted(((page.uid, page) for page in indexed_pages(wiki)), key=_first)
        cuts = 0
        for done, (key, page) in enumerate(indexed):
            known = self._pages.get(id(page))
            if known and known[0] is page:
                record, cut = known[1], known[2]
            else:
                record, cut = page_record(page, self.lead), None
            if cut is None and cut_passages:
                cut = self._passages(wiki, page, record)
                cuts += 1
                if progress and cuts % 200 == 1:
                    progress("passages", done, len(indexed))
            pages_seen[id(page)] = (page, record, cut)
            pages[key] = record
            if cut:
                passages.update((p.id, p) for p in cut)
                by_page[key] = in_file_order(cut)
        if progress and cuts:
            progress("passages", len(indexed), len(indexed))
        chunks: dict[str, ChunkRecord] = {}
        if "chunk" in kinds:
            chunks = self._chunk_records(wiki, progress)
        self._pages = pages_seen
        return Records(pages, passages, chunks if "chunk" in kinds else {}, by_page)

    def _chunk_records(self, wiki: Wiki, progress: Progress | None) -> dict[str, ChunkRecord]:
        chunks_seen: dict[int, tuple[Chunk, ChunkRecord]] = {}
        chunks: dict[str, ChunkRecord] = {}
        for chunk_id, chunk in sorted(self._cut_chunks(wiki, progress).items(), key=_first):
            known_chunk = self._chunks.get(id(chunk))
            if known_chunk and known_chunk[0] is chunk:
                chunk_rec = known_chunk[1]
            else:
                chunk_rec = chunk_record(chunk)
            chunks_seen[id(chunk)] = (chunk, chunk_rec)
            chunks[chunk_id] = chunk_rec
        self._chunks = chunks_seen
        self._cut_from = (wiki.sources, wiki.policy)
        return chunks

    def _by_difference(self, wiki: Wiki, last: Records) -> Records:
        cut_passages = "passage" in self._last_kinds
        before = self._pages
        seen: dict[int, Seen] = {}
        made: list[tuple[str, Seen]] = []  # pages whose object is new: (uid, seen)
        for page in indexed_pages(wiki):
            known = before.get(id(page))
            if known is None or known[0] is not page:
                record = page_record(page, self.lead)
                cut = self._passages(wiki, page, record) if cut_passages else None
                known = (page, record, cut)
                made.append((page.uid, known))
            seen[id(page)] = known
        dropped = [old for ref, old in before.items() if ref not in seen]
        self._pages = seen
        changed: dict[str, dict[str, Record]] = {kind: {} for kind in KINDS}
        gone: dict[str, list[str]] = {kind: [] for kind in KINDS}
        pages, passages, by_page = last.pages, last.passages, last.by_page
        if made or dropped:
            pages = dict(last.pages)
            by_page = dict(last.by_page)
            now = {uid for uid, _ in made}
            old_passages: set[str] = set()
            for _, record, cut in dropped:
                old_passages.update(p.id for p in cut or ())
                if record.uid not in now:
                    del pages[record.uid]
                    by_page.pop(record.uid, None)
                    gone["page"].append(record.uid)
            listed = len(pages)
            added = False  # a page with passages that had none listed: the order is redone
            for uid, (_, record, cut) in made:
                pages[uid] = record
                changed["page"][uid] = record
                if cut:
                    added |= uid not in by_page
                    by_page[uid] = in_file_order(cut)
                else:
                    by_page.pop(uid, None)
            if len(pages) != listed or any(uid not in last.pages for uid in now):
                pages = dict(sorted(pages.items(), key=_first))
            new_passages = {p.id: p for _, (_, _, cut) in made for p in cut or ()}
            changed["passage"] = dict(new_passages)
            gone["passage"] = sorted(old_passages - new_passages.keys())
            if added:
                by_page = {uid: by_page[uid] for uid in pages if uid in by_page}  # in uid order
            if new_passages.keys() == old_passages:
                passages = dict(last.passages)  # the same IDs: the order stands
                passages.update(new_passages)
            else:
                cut_of = {record.uid: cut for _, record, cut in seen.values()}
                passages = {p.id: p for uid in pages for p in cut_of.get(uid) or ()}
        chunks = last.chunks
        cut_from = self._cut_from
        # By identity: a compile that read no raw source hands over the last one's dict.
        same = cut_from is not None and cut_from[0] is wiki.sources and cut_from[1] == wiki.policy
        if "chunk" in self._last_kinds and not same:
            chunks = self._chunk_records(wiki, None)
            changed["chunk"] = {
                i: record for i, record in chunks.items() if last.chunks.get(i) is not record
            }
            gone["chunk"] = sorted(last.chunks.keys() - chunks.keys())

        self.delta = Delta(changed, gone)
        return Records(pages, passages, chunks, by_page)

    @staticmethod
    def _cut_chunks(wiki: Wiki, progress: Progress | None) -> dict[str, Chunk]:
        """Every chunk of every source that is not junk (`wiki.indexed_chunks`), saying how
        far the cutting is."""
        sources = list(wiki.sources.values())
        if progress:
            for done, source in enumerate(sources):
                if done % 20 == 0:
                    progress("chunks", done, len(sources))
                wiki.chunks_of(source)
            progress("chunks", len(sources), len(sources))
        return wiki.indexed_chunks

    def _passages(self, wiki: Wiki, page: Page, record: PageRecord) -> tuple[PassageRecord, ...]:
        # A `usage_mode: never` page is indexed for its key only; no search returns it, so
        # its passages would be indexed and embedded for nothing.
        if page.usage_mode == "never":
            return ()
        return passage_records(record, wiki.passages_of(page))


def in_file_order(cut: tuple[PassageRecord, ...]) -> tuple[PassageRecord, ...]:
    return tuple(sorted(cut, key=lambda p: (p.start_line, p.end_line, p.id)))


def _first(item: tuple[str, Any]) -> str:
    return item[0]


def indexed_pages(wiki: Wiki) -> list[Page]:
    """The pages the indexes hold: each scope's own (a user's key shadowing a shared page's is
    a page of its own), every one found by its uid; which of them a query may return is the
    viewer's business (`views.View`)."""
    return [page for _, page in wiki.scopes.owned]


def records(wiki: Wiki) -> Records:
    """Every canonical page (by key), its passages and every chunk of every readable source."""
    return RecordCache().all(wiki)
