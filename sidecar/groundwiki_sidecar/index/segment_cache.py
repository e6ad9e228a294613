"""What BM25F ranking reads from Whoosh's segments, as numpy arrays: each segment's postings,
field lengths and deletions (`Leaf`), read block by block, and the `SegmentCache` that keeps
them across queries; and the `Population` of documents a ranking counts (a viewer's, in a
scoped wiki). bm25f.py scores with them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
from whoosh.util.numeric import byte_to_length

MASKS_KEPT = 512  # filter masks kept (`SegmentCache.holding`)
# Length normalisations and populations' masks kept, each per set of segments: per ranker's
# fields and population, per population. A few viewers query at once; one more costs a pass
# over the index's lengths (some 2 ms at 10,000 pages), not a postings read.
NORMS_KEPT = 32
VIEWS_KEPT = 32


@dataclass(frozen=True)
class Population:
    """The documents a ranking may return and takes its statistics from (N, df, avglen): those
    of one of `scopes` (the `scope` field's terms; empty: every document), less those holding
    any `hidden` (field, term) (the shared pages a viewer's own pages shadow). Canonical:
    built with `of`, so that equal populations share cached statistics."""

    scopes: tuple[bytes, ...] = ()
    hidden: tuple[tuple[str, bytes], ...] = ()

    @classmethod
    def of(
        cls, scopes: Iterable[bytes] = (), hidden: Iterable[tuple[str, bytes]] = ()
    ) -> Population:
        return cls(tuple(sorted(set(scopes))), tuple(sorted(set(hidden))))

    @property
    def everything(self) -> bool:
        return not self.scopes and not self.hidden


EVERYTHING = Population()


@dataclass(frozen=True)
class Leaf:
    """What ranking needs from one segment, kept while the segment and its deletions last."""

    ids: np.ndarray  # docnum -> stored ID, read once it first ranks high enough (object array)
    live: np.ndarray  # docnum -> not deleted
    lengths: dict[str, np.ndarray]  # field -> docnum -> length in terms (Whoosh's stored byte)
    totals: dict[str, float]  # field -> summed length of the live documents
    alive: int  # live documents

    def ids_of(self, reader: Any, docnums: np.ndarray) -> np.ndarray:
        """The stored IDs of these documents (an object array), each read from the segment's
        stored fields the first time it is asked for."""
        found = self.ids[docnums]
        for at in np.flatnonzero(found == None).tolist():  # noqa: E711 (elementwise)
            docnum = int(docnums[at])
            found[at] = self.ids[docnum] = str(reader.stored_fields(docnum)["id"])
        return found


class SegmentCache:
    """What was read from segments, shared by every query thread. A segment's files never
    change, but its deletions do (an update deletes the old version where it lies): leaves, which
    hold the deletion mask, are keyed by the segment ID, the reader's deleted documents and the
    fields whose lengths they hold (rankers of other fields read the same segment), and decoded
    postings, which hold deleted documents too (masked at query time), by (segment ID,
    field, term), so neither goes stale. Postings are most of the cost of a query (Whoosh
    unpickles each block of 128), so they are kept, least recently used first out, up to
    `postings_bytes`. Document frequencies, which bound a long query's terms, are kept the same
    way, up to `df_entries` (a term dictionary lookup costs some 75 µs in Python). A term's tf'
    over the whole index, which is what a query reads, is kept per state of the segments (their
    IDs and deletions) up to `weighted_bytes`: a warm query then reads one array per term
    instead of one per term, field and segment."""

    def __init__(
        self,
        postings_bytes: int = 256 * 2**20,
        df_entries: int = 200_000,
        weighted_bytes: int = 128 * 2**20,
    ) -> None:
        self._leaves: dict[tuple[str, frozenset[int], frozenset[str]], Leaf] = {}
        self._postings: OrderedDict[tuple[str, str, bytes], tuple[np.ndarray, np.ndarray]] = (
            OrderedDict()
        )
        self._held = 0
        self.limit = postings_bytes
        self._df: OrderedDict[tuple[str, tuple[str, ...], bytes], int] = OrderedDict()
        # (segment ID, field, term) -> docnum mask of a filter term (kind, tags, usage mode):
        # a few per segment, a byte per document each.
        self._masks: dict[tuple[str, str, bytes], np.ndarray] = {}
        self._norms: dict[Any, dict[str, np.ndarray]] = {}
        # (segments' state, population) -> index-wide docnum -> the population's live documents
        self._views: dict[Any, np.ndarray] = {}
        # (segments' state, term) -> (docnums, tf'): what a query reads, once per term.
        self._weighted: OrderedDict[Any, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._weighted_held = 0
        self.weighted_limit = weighted_bytes
        self.df_limit = df_entries
        self._lock = threading.Lock()

    def doc_frequency(self, segment: str, reader: Any, fields: tuple[str, ...], term: bytes) -> int:
        """How many of the segment's documents hold the term, in the field where most do
        (deleted ones included), from the term dictionary. `segment`: the reader's segment ID."""
        key = (segment, fields, term)
        with self._lock:
            found = self._df.get(key)
            if found is not None:
                self._df.move_to_end(key)
                return found
        found = max(reader.doc_frequency(f, term) if (f, term) in reader else 0 for f in fields)
        with self._lock:
            self._df[key] = found
            if len(self._df) > self.df_limit:
                self._df.popitem(last=False)
        return found

    def postings(self, reader: Any, field: str, term: bytes) -> tuple[np.ndarray, np.ndarray]:
        key = (reader.segment().segment_id(), field, term)
        with self._lock:
            found = self._postings.get(key)
            if found is not None:
                self._postings.move_to_end(key)
                return found
        found = postings(reader, field, term)
        size = found[0].nbytes + found[1].nbytes
        with self._lock:
            if key not in self._postings:
                self._postings[key] = found
                self._held += size
            while self._held > self.limit and self._postings:
                _, (ids, tf) = self._postings.popitem(last=False)
                self._held -= ids.nbytes + tf.nbytes
        return found

    def norms(
        self,
        leaves: list[tuple[Any, int, Leaf]],
        fields: tuple[str, ...],
        b: float,
        population: Population = EVERYTHING,
    ) -> dict[str, np.ndarray]:
        """Field -> index-wide docnum -> BM25's length normalisation, (1 - b) + b · len / avg,
        the average over the population's live documents, kept while the same segments and
        deletions are searched."""
        key = (tuple(leaf_key(reader) for reader, _, _ in leaves), fields, b, population)
        found = self._norms.get(key)
        if found is None:
            visible = self.visible(leaves, population)
            found = {}
            for f in fields:
                lengths = np.concatenate([leaf.lengths[f] for _, _, leaf in leaves])
                if visible is None:
                    alive = sum(leaf.alive for _, _, leaf in leaves)
                    summed = sum(leaf.totals[f] for _, _, leaf in leaves)
                else:  # lengths are whole numbers: the sum is exact in any order
                    alive, summed = int(visible.sum()), float(lengths[visible].sum())
                average = max(summed / max(alive, 1), 1e-9)
                found[f] = (1.0 - b) + b * lengths / average
            with self._lock:
                self._norms[key] = found
                while len(self._norms) > NORMS_KEPT:  # older segment sets first
                    del self._norms[next(iter(self._norms))]
        return found

    def visible(
        self, leaves: list[tuple[Any, int, Leaf]], population: Population
    ) -> np.ndarray | None:
        """Index-wide docnum -> live and in the population (None for every document: then the
        leaves' own live masks and totals serve), kept per segments and population."""
        if population.everything:
            return None
        key = (tuple(leaf_key(reader) for reader, _, _ in leaves), population)
        found = self._views.get(key)
        if found is None:
            found = np.concatenate([leaf.live for _, _, leaf in leaves])
            if population.scopes:
                found &= _any_holding(self, leaves, [("scope", s) for s in population.scopes])
            if population.hidden:
                found &= ~_any_holding(self, leaves, population.hidden)
            found.flags.writeable = False  # shared by every query thread from now on
            with self._lock:
                self._views[key] = found
                while len(self._views) > VIEWS_KEPT:  # older segment sets first
                    del self._views[next(iter(self._views))]
        return found

    def weighted(
        self,
        state: tuple[Any, ...],
        term: bytes,
        compute: Callable[[], tuple[np.ndarray, np.ndarray]],
    ) -> tuple[np.ndarray, np.ndarray]:
        """A term's documents and tf' for one state of the segments (`state`: the segments,
        their deletions and the ranker's fields), computed on first use and kept, least
        recently used first out, up to `weighted_bytes`."""
        key = (state, term)
        with self._lock:
            found = self._weighted.get(key)
            if found is not None:
                self._weighted.move_to_end(key)
                return found
        found = compute()
        for array in found:  # shared by every query thread from now on
            array.flags.writeable = False
        with self._lock:
            if key not in self._weighted:
                self._weighted[key] = found
                self._weighted_held += found[0].nbytes + found[1].nbytes
            while self._weighted_held > self.weighted_limit and self._weighted:
                _, (docs, values) = self._weighted.popitem(last=False)
                self._weighted_held -= docs.nbytes + values.nbytes
        return found

    def holding(self, reader: Any, field: str, term: bytes) -> np.ndarray:
        """The segment's docnum -> holds the term (deleted documents included), for filters:
        kept beside the postings they come from, as long as the segment is."""
        key = (reader.segment().segment_id(), field, term)
        found = self._masks.get(key)
        if found is None:
            docnums, _ = self.postings(reader, field, term)
            found = np.zeros(reader.doc_count_all(), dtype=bool)
            found[docnums] = True
            with self._lock:
                self._masks[key] = found
                if len(self._masks) > MASKS_KEPT:  # the oldest first (a tag filter used once)
                    del self._masks[next(iter(self._masks))]
        return found

    def leaf(self, reader: Any, fields: Iterable[str]) -> Leaf:
        names = tuple(fields)
        key = (*leaf_key(reader), frozenset(names))
        found = self._leaves.get(key)
        if found is None:
            found = _read_leaf(reader, names)
            with self._lock:
                self._leaves[key] = found
        return found

    def keep_only(self, readers: Iterable[Any]) -> None:
        """Forget segments that a merge or a refresh left behind."""
        wanted = {leaf_key(r) for r in readers}
        segments = {key[0] for key in wanted}
        with self._lock:
            for key in [k for k in self._leaves if k[:2] not in wanted]:
                del self._leaves[key]
            for gone in [k for k in self._postings if k[0] not in segments]:
                ids, tf = self._postings.pop(gone)
                self._held -= ids.nbytes + tf.nbytes
            for old in [k for k in self._df if k[0] not in segments]:
                del self._df[old]
            for stale in [k for k in self._masks if k[0] not in segments]:
                del self._masks[stale]
            for stale_norms in [k for k in self._norms if not set(k[0]) <= wanted]:
                del self._norms[stale_norms]
            for stale_view in [k for k in self._views if not set(k[0]) <= wanted]:
                del self._views[stale_view]
            for old_state in [k for k in self._weighted if not set(k[0][0]) <= wanted]:
                docs, values = self._weighted.pop(old_state)
                self._weighted_held -= docs.nbytes + values.nbytes


def leaf_key(reader: Any) -> tuple[str, frozenset[int]]:
    """The segment and the exact set of its deleted documents this reader sees: the set itself,
    not its size and hash, which two different sets can share. (frozenset() of a frozenset is
    the same object, and a frozenset keeps its hash, so this costs nothing per query.)"""
    return (reader.segment().segment_id(), frozenset(reader.deleted_docs_set))


# Whoosh keeps a field's length per document as one byte; this table turns the byte back into
# the length its own scoring uses.
_BYTE_LENGTHS = np.array([byte_to_length(i) for i in range(256)], dtype=np.float64)


def _read_leaf(reader: Any, fields: tuple[str, ...]) -> Leaf:
    count = reader.doc_count_all()
    live = np.ones(count, dtype=bool)
    if reader.has_deletions():
        live[np.fromiter(reader.deleted_docs_set, dtype=np.int64)] = False
    lengths: dict[str, np.ndarray] = {}
    totals: dict[str, float] = {}
    for name in fields:
        values = _field_lengths(reader, name, count)
        lengths[name] = values
        totals[name] = float(values[live].sum())
    return Leaf(np.full(count, None, dtype=object), live, lengths, totals, int(live.sum()))


def _field_lengths(reader: Any, field: str, count: int) -> np.ndarray:
    cached_reader = getattr(getattr(reader, "_perdoc", None), "_cached_reader", None)
    column = cached_reader(_lenfield(field), LENGTHS_COLUMN) if cached_reader else None
    if column is None:  # not a Whoosh 2.7 segment: the public way, one call per document
        return np.fromiter(
            (reader.doc_field_length(d, field, 0) or 0 for d in range(count)), np.float64, count
        )
    return _BYTE_LENGTHS[np.fromiter(column, dtype=np.uint8, count=count)]


def postings(reader: Any, field: str, term: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Document numbers and term frequencies of one term in one segment (deletions included:
    the caller masks them)."""
    if (field, term) not in reader:
        return _EMPTY
    matcher = reader.postings(field, term)
    matcher = getattr(matcher, "child", matcher)  # the deletion filter: masked by the caller
    ids, weights = _block_arrays(matcher)
    if ids is None:
        ids, weights = _walk(matcher)
    return ids, weights


_EMPTY = (np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32))


def _block_arrays(matcher: Any) -> tuple[Any, Any]:
    """Whole blocks at once from Whoosh 2.7's on-disk and inlined matchers; (None, None) for
    any other matcher, which is then walked posting by posting."""
    kind = type(matcher).__name__
    if kind == "ListMatcher":
        ids = np.asarray(matcher._ids, dtype=np.int32)
        raw = matcher._weights
        weights = np.ones(len(ids), np.float32) if raw is None else np.asarray(raw, np.float32)
        return ids, weights
    if kind != "W3LeafMatcher":
        return None, None
    id_blocks: list[Any] = []
    weight_blocks: list[Any] = []
    while True:
        matcher._read_ids()
        matcher._read_weights()
        id_blocks.append(matcher._ids)
        weight_blocks.append(matcher._weights)
        if matcher._lastblock:
            break
        matcher._goto(matcher._nextoffset)
    ids = np.fromiter((i for block in id_blocks for i in block), dtype=np.int32)
    weights = np.fromiter((w for block in weight_blocks for w in block), dtype=np.float32)
    return ids, weights


def _walk(matcher: Any) -> tuple[np.ndarray, np.ndarray]:
    ids: list[int] = []
    weights: list[float] = []
    while matcher.is_active():
        ids.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    return np.asarray(ids, dtype=np.int32), np.asarray(weights, dtype=np.float32)


def segment_readers(searcher: Any) -> list[tuple[Any, int]]:
    """(segment reader, first docnum) pairs; an empty index's reader has no segment."""
    return [(r, base) for r, base in searcher.reader().leaf_readers() if r.doc_count_all()]


def index_holding(
    cache: SegmentCache, leaves: list[tuple[Any, int, Leaf]], field: str, term: bytes
) -> np.ndarray:
    """Index-wide docnum -> the document holds the term (a filter's field value)."""
    return np.concatenate([cache.holding(reader, field, term) for reader, _, _ in leaves])


def _any_holding(
    cache: SegmentCache, leaves: list[tuple[Any, int, Leaf]], pairs: Iterable[tuple[str, bytes]]
) -> np.ndarray:
    """Index-wide docnum -> the document holds at least one of the (field, term) pairs."""
    found = np.zeros(sum(len(leaf.live) for _, _, leaf in leaves), dtype=bool)
    for field, term in pairs:
        found |= index_holding(cache, leaves, field, term)
    return found
