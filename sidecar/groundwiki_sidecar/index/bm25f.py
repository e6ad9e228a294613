"""BM25F ranking computed with numpy over the postings a Whoosh index stores.

Whoosh keeps the lexical index: analysis, segments, postings, field lengths, deletions. Its own
query path is not used for ranking, for two measured reasons:

- its `BM25F` weighting scores each field as a separate BM25 and adds them up, which is not
  BM25F: a term repeated across title, summary and body is saturated once per field, and the
  IDF is per field;
- its matcher tree walks postings one document at a time in Python, about 9 µs per posting. At
  10,000 pages a four-word query touches some 40,000 postings (65-90 ms).

Here each query term's postings are read block by block into arrays, and scored with the BM25F
of Robertson and Zaragoza:

    tf'(t, d) = Σ_f w_f · tf_f(t, d) / ((1 - b) + b · len_f(d) / avglen_f)
    score(d)  = Σ_t qtf(t) · idf(t) · tf'(t, d) / (k1 + tf'(t, d))
    idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))      (df over any field)

qtf(t) is how many times the term occurs in the analysed query: a term the question repeats
weighs that many times, as in bm25s and Lucene (a repeated clause is summed); it is Robertson's
(k3 + 1) · qtf / (k3 + qtf) with k3 -> ∞. On paragraph-long questions this matters: LISA's
nDCG@10 as plain BM25 is 0.373 with each term counted once and 0.471 with repeats (bm25s: 0.471).

With one field of weight 1 this is Lucene's BM25, which is what outside baselines compute.
Ties are broken by the stored ID, so a ranking never depends on how the segments fell.

N, df(t) and avglen_f are the statistics of one `Population`: the documents a viewer may be
answered with (in a scoped wiki, the shared ones and their own, less the shared pages theirs
shadow). Another user's documents share the index but not the statistics: were they counted,
a score, an explain figure or which terms a long query keeps would move with words only they
hold, and a viewer could test words against their private pages (issue 27).
"""

from __future__ import annotations

import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
from whoosh.util.numeric import byte_to_length

K1 = 1.2
B = 0.75
ROUND = 9  # scores equal to this many decimals are ties, ordered by ID
# The most distinct terms of one query that are scored; past it the terms that weigh least
# (occurrences in the query × idf) are left out (`bound_terms`). Each term costs a postings read
# per field and a pass over every document's score. Measured on LISA (5,999 pages, CPU time,
# postings cached): an 8,000-character question has some 480 distinct terms and ranks in 91 ms
# whole, 23 ms bounded to 64 (2,000 characters: 27 ms and 13 ms); LISA's requests have at most
# 47, so the bound leaves its scores as they were (32 would cut some).
MAX_QUERY_TERMS = 64
# Summing a term's postings per document: by sorting them when they are fewer than one in
# DENSE_SHARE of the index's documents, else in an array as long as the index.
DENSE_SHARE = 16
DENSE_MAX = 2**21  # slots (16 MB of sums) at most
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
        key = (tuple(_leaf_key(reader) for reader, _, _ in leaves), fields, b, population)
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
        key = (tuple(_leaf_key(reader) for reader, _, _ in leaves), population)
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
        key = (*_leaf_key(reader), frozenset(names))
        found = self._leaves.get(key)
        if found is None:
            found = _read_leaf(reader, names)
            with self._lock:
                self._leaves[key] = found
        return found

    def keep_only(self, readers: Iterable[Any]) -> None:
        """Forget segments that a merge or a refresh left behind."""
        wanted = {_leaf_key(r) for r in readers}
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


def _leaf_key(reader: Any) -> tuple[str, frozenset[int]]:
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


@dataclass(frozen=True)
class Bm25f:
    """Field weights and parameters. One field of weight 1 is plain BM25."""

    weights: Mapping[str, float]
    k1: float = K1
    b: float = B

    def rank(
        self,
        searcher: Any,
        cache: SegmentCache,
        terms: Iterable[bytes],
        depth: int,
        require: Iterable[tuple[str, bytes]] = (),
        exclude: Iterable[tuple[str, bytes]] = (),
        population: Population = EVERYTHING,
    ) -> list[tuple[str, float]]:
        """The `depth` best documents of the population for the analysed query terms, as (ID,
        score), best first, equal scores by ID, scored with the population's statistics. A
        term repeated in `terms` weighs as often as it occurs (qtf). `require` and `exclude`
        are (field, term) filters: a document must hold every required term and none of the
        excluded ones. Filters narrow the hits, not the statistics (a tag filter does not
        make its pages' words rarer)."""
        counts = Counter(terms)  # in first-seen order: the sums are always made the same way
        if not counts or depth <= 0:
            return []
        stats = self.statistics(searcher, cache, population)
        if stats.total == 0:
            return []
        # Only the documents that hold a query term are touched: a query's cost follows its
        # postings, not the index's size (the chunk index holds every raw-source chunk and page
        # passage, and a page search ranks its passages there). A term's tf' over the
        # population depends only on the segments searched, so it is computed once for them
        # and kept.
        found: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        for term, repeats in counts.items():
            docs, weighted = stats.weighted(term)
            if not len(docs):
                continue
            df = len(docs)
            idf = math.log(1.0 + (stats.total - df + 0.5) / (df + 0.5))
            found.append(docs)
            parts.append(repeats * idf * weighted / (self.k1 + weighted))
        if not found:
            return []
        leaves, size = stats.leaves, stats.size
        docs, scores = _summed(found, parts, size, ordered=len(found) == 1)
        for field, term in require:
            keep = _holding(cache, leaves, field, term)[docs]
            docs, scores = docs[keep], scores[keep]
        for field, term in exclude:
            keep = ~_holding(cache, leaves, field, term)[docs]
            docs, scores = docs[keep], scores[keep]
        return _top(docs, scores, leaves, depth)

    def statistics(
        self, searcher: Any, cache: SegmentCache, population: Population = EVERYTHING
    ) -> Statistics:
        """What scoring reads for the population, over the searcher's segments."""
        fields = tuple(self.weights)
        leaves = [(r, base, cache.leaf(r, fields)) for r, base in segment_readers(searcher)]
        visible = cache.visible(leaves, population)
        total = sum(leaf.alive for _, _, leaf in leaves) if visible is None else int(visible.sum())
        size = sum(len(leaf.live) for _, _, leaf in leaves)
        state = (tuple(_leaf_key(reader) for reader, _, _ in leaves), self.signature, population)
        return Statistics(self, cache, leaves, size, total, visible, population, state)

    def bound(
        self,
        searcher: Any,
        cache: SegmentCache,
        terms: Sequence[bytes],
        population: Population = EVERYTHING,
        limit: int = MAX_QUERY_TERMS,
    ) -> Bounded:
        """`bound_terms` over the population. For every document, from the term dictionary
        (no postings read); for part of the index, from the population's own document
        frequencies: the dictionary counts every scope's documents, and which terms a query
        keeps (and the `bounded` it reports) would then tell words of pages the viewer cannot
        see. Those are the postings the ranking reads next, kept in `cache`, so the kept
        terms cost nothing more; a query of many terms reads the postings of all of them."""
        if population.everything:
            return bound_terms(searcher, cache, tuple(self.weights), terms, limit)
        counts = Counter(terms)
        if len(counts) <= limit:
            return Bounded(list(terms), len(counts), 0)
        stats = self.statistics(searcher, cache, population)
        frequencies = {term: len(stats.weighted(term)[0]) for term in counts}
        return _bounded(terms, counts, frequencies, max(stats.total, 1), limit)

    @property
    def signature(self) -> tuple[Any, ...]:
        """What a term's tf' depends on besides the segments (k1 only enters the score)."""
        return (tuple(self.weights.items()), self.b)

    def _weighted(
        self,
        cache: SegmentCache,
        leaves: list[tuple[Any, int, Leaf]],
        size: int,
        term: bytes,
        population: Population = EVERYTHING,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The population's live documents holding `term` in any field (index-wide docnums,
        ascending) and their tf' (the fields' weighted, length-normalised frequencies summed,
        in the fields' order)."""
        norms = cache.norms(leaves, tuple(self.weights), self.b, population)
        visible = cache.visible(leaves, population)
        found: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        for field, weight in self.weights.items():
            if weight <= 0:  # a field that adds nothing to tf' does not make a term's df
                continue
            for reader, base, leaf in leaves:
                docnums, tf = cache.postings(reader, field, term)
                if not len(docnums):
                    continue
                if visible is not None:
                    keep = visible[docnums.astype(np.int64) + base]
                    docnums, tf = docnums[keep], tf[keep]
                    if not len(docnums):  # no holder the population sees in this segment
                        continue
                elif leaf.alive < len(leaf.live):
                    keep = leaf.live[docnums]
                    docnums, tf = docnums[keep], tf[keep]
                    if not len(docnums):  # every holder deleted in this segment
                        continue
                at = docnums.astype(np.int64) + base
                found.append(at)
                parts.append(weight * tf / norms[field][at])
        if not found:
            return _NONE
        return _summed(found, parts, size)


@dataclass(frozen=True)
class Statistics:
    """One population's view of the searched segments: its documents (`total`), which ones
    (`visible`, None for every live document), and each term's tf' over them."""

    ranker: Bm25f
    cache: SegmentCache
    leaves: list[tuple[Any, int, Leaf]]
    size: int  # docnums of the segments searched (live or not)
    total: int  # the population's live documents: BM25's N
    visible: np.ndarray | None
    population: Population
    state: tuple[Any, ...]  # what a term's tf' depends on: the cache's key

    def weighted(self, term: bytes) -> tuple[np.ndarray, np.ndarray]:
        """The population's documents holding `term` (their count is its df) and their tf'."""
        compute = partial(
            self.ranker._weighted, self.cache, self.leaves, self.size, term, self.population
        )
        return self.cache.weighted(self.state, term, compute)


_NONE = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))


def _summed(
    found: list[np.ndarray], parts: list[np.ndarray], size: int, ordered: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Per number (ascending), the sum of its values across the parts, added in the parts'
    order so that a sum never depends on anything but the query and the index. `size`: the
    numbers are below it. `ordered`: each part ascending and without repeats (postings)."""
    if ordered and all(a[-1] < b[0] for a, b in pairwise(found)):
        # One field's postings in successive segments: already ascending and apart.
        return np.concatenate(found), np.concatenate(parts).astype(np.float64)
    numbers, values = np.concatenate(found), np.concatenate(parts)
    if len(numbers) * DENSE_SHARE < size or size > DENSE_MAX:  # few, or too many slots: sort
        unique, at = np.unique(numbers, return_inverse=True)
        return unique, np.bincount(at, weights=values, minlength=len(unique))
    # Many: one slot per number is cheaper than sorting them. Values are positive, so the
    # numbers are where a sum is.
    summed = np.bincount(numbers, weights=values, minlength=size)
    unique = np.flatnonzero(summed)
    return unique, summed[unique]


@dataclass(frozen=True)
class Bounded:
    """The terms of a query that will be scored, and how many indexed ones were left out."""

    terms: list[bytes]
    distinct: int  # distinct terms some document holds
    left_out: int  # of those, how many are not scored

    def report(self) -> str:
        """What was left out, for the answer ("" when nothing was)."""
        if not self.left_out:
            return ""
        kept = self.distinct - self.left_out
        return (
            f"{self.left_out} of the query's {self.distinct} distinct terms: scored the {kept} "
            "weighing most (occurrences in the query × idf)"
        )


def bound_terms(
    searcher: Any,
    cache: SegmentCache,
    fields: Sequence[str],
    terms: Sequence[bytes],
    limit: int = MAX_QUERY_TERMS,
) -> Bounded:
    """At most `limit` distinct terms of an analysed query, the rest left out, deterministically:
    those weighing most, occurrences in the query × idf, equal weights by first position. The
    idf comes from the term dictionary's document frequencies (per segment, the field where
    most documents hold the term, deleted ones counted): no postings are read, and what was
    looked up is kept in `cache`. Terms no document holds score nothing
    and are dropped first, without counting as left out. Repeats of a kept term are kept.
    Over every document of the index: for one viewer's part of it, `Bm25f.bound`."""
    counts = Counter(terms)
    if len(counts) <= limit:
        return Bounded(list(terms), len(counts), 0)
    readers = [(r.segment().segment_id(), r) for r, _ in segment_readers(searcher)]
    total = max(sum(reader.doc_count_all() for _, reader in readers), 1)
    names = tuple(fields)
    frequencies = {
        term: sum(cache.doc_frequency(segment, r, names, term) for segment, r in readers)
        for term in counts
    }
    return _bounded(terms, counts, frequencies, total, limit)


def _bounded(
    terms: Sequence[bytes],
    counts: Counter[bytes],
    frequencies: Mapping[bytes, int],
    total: int,
    limit: int,
) -> Bounded:
    """The `limit` terms weighing most, occurrences in the query × idf (from `frequencies`
    among `total` documents), equal weights by first position; terms of frequency 0 dropped."""
    weights: dict[bytes, float] = {}
    for term, repeats in counts.items():
        df = frequencies[term]
        if df:
            weights[term] = repeats * math.log(1.0 + (total - df + 0.5) / (df + 0.5))
    position = {term: n for n, term in enumerate(counts)}
    kept = set(sorted(weights, key=lambda t: (-weights[t], position[t]))[:limit])
    return Bounded([t for t in terms if t in kept], len(weights), max(len(weights) - limit, 0))


def segment_readers(searcher: Any) -> list[tuple[Any, int]]:
    """(segment reader, first docnum) pairs; an empty index's reader has no segment."""
    return [(r, base) for r, base in searcher.reader().leaf_readers() if r.doc_count_all()]


def _holding(
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
        found |= _holding(cache, leaves, field, term)
    return found


def _top(
    docs: np.ndarray, scores: np.ndarray, leaves: list[tuple[Any, int, Leaf]], depth: int
) -> list[tuple[str, float]]:
    positive = scores > 0
    found, rounded = docs[positive], np.round(scores[positive], ROUND)
    if not len(found):
        return []
    if len(found) > depth:
        # Everything scoring at least the depth-th best score, so that ties at the cut are
        # settled by ID below rather than by how documents fell into segments.
        threshold = np.partition(rounded, len(rounded) - depth)[len(rounded) - depth]
        keep = rounded >= threshold
        found, rounded = found[keep], rounded[keep]
    ids = np.empty(len(found), dtype=object)
    for reader, base, leaf in leaves:
        mine = (found >= base) & (found < base + len(leaf.ids))
        if mine.any():
            ids[mine] = leaf.ids_of(reader, found[mine] - base)
    ranked = sorted(zip(ids.tolist(), rounded.tolist(), strict=True), key=_best_first)
    return ranked[:depth]


def _best_first(pair: tuple[str, float]) -> tuple[float, str]:
    return -pair[1], pair[0]


def analyse(schema: Any, field: str, text: str) -> list[bytes]:
    """The query's terms as the field's analyzer indexes them (stemmed, stop words out)."""
    field_type = schema[field]
    return [field_type.to_bytes(t) for t in field_type.process_text(text, mode="query")]
