"""BM25F ranking computed with numpy over the postings a Whoosh index stores.

Whoosh keeps the lexical index: analysis, segments, postings, field lengths, deletions. Its own
query path is not used for ranking, for two measured reasons:

- its `BM25F` weighting scores each field as a separate BM25 and adds them up, which is not
  BM25F: a term repeated across title, summary and body is saturated once per field, and the
  IDF is per field;
- its matcher tree walks postings one document at a time in Python, about 9 µs per posting. At
  10,000 pages a four-word query touches some 40,000 postings (65-90 ms).

Here each query term's postings are read block by block into arrays (segment_cache.py, which
keeps them across queries), and scored with the BM25F of Robertson and Zaragoza:

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
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np

from groundwiki_sidecar.index.segment_cache import (
    EVERYTHING,
    Leaf,
    Population,
    SegmentCache,
    index_holding,
    leaf_key,
    segment_readers,
)

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
        ceiling: Callable[[float], None] | None = None,
    ) -> list[tuple[str, float]]:
        """The `depth` best documents of the population for the analysed query terms, as (ID,
        score), best first, equal scores by ID, scored with the population's statistics. A
        term repeated in `terms` weighs as often as it occurs (qtf). `require` and `exclude`
        are (field, term) filters: a document must hold every required term and none of the
        excluded ones. Filters narrow the hits, not the statistics (a tag filter does not
        make its pages' words rarer). `ceiling` is told the score no document can reach,
        Σ qtf(t) · idf(t) over the terms some document holds (each term's tf'/(k1 + tf') is
        below 1): a hit's score over it is how much of the query's weight the hit matches."""
        counts = Counter(terms)  # in first-seen order: the sums are always made the same way
        if not counts or depth <= 0:
            return []
        stats = self.statistics(searcher, cache, population)
        if stats.total == 0:
            return []
        reachable = 0.0
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
            reachable += repeats * idf
            found.append(docs)
            parts.append(repeats * idf * weighted / (self.k1 + weighted))
        if ceiling is not None:
            ceiling(reachable)
        if not found:
            return []
        leaves, size = stats.leaves, stats.size
        docs, scores = _summed(found, parts, size, ordered=len(found) == 1)
        for field, term in require:
            keep = index_holding(cache, leaves, field, term)[docs]
            docs, scores = docs[keep], scores[keep]
        for field, term in exclude:
            keep = ~index_holding(cache, leaves, field, term)[docs]
            docs, scores = docs[keep], scores[keep]
        return _top(docs, scores, leaves, depth)

    def idfs(
        self,
        searcher: Any,
        cache: SegmentCache,
        terms: Iterable[bytes],
        population: Population = EVERYTHING,
    ) -> list[float]:
        """The idf of each distinct term some document of the population holds, in first-seen
        order, as `rank` weighs them (the postings read are kept in `cache` for `rank`)."""
        stats = self.statistics(searcher, cache, population)
        found = []
        for term in dict.fromkeys(terms):
            df = len(stats.weighted(term)[0])
            if df:
                found.append(math.log(1.0 + (stats.total - df + 0.5) / (df + 0.5)))
        return found

    def statistics(
        self, searcher: Any, cache: SegmentCache, population: Population = EVERYTHING
    ) -> Statistics:
        """What scoring reads for the population, over the searcher's segments."""
        fields = tuple(self.weights)
        leaves = [(r, base, cache.leaf(r, fields)) for r, base in segment_readers(searcher)]
        visible = cache.visible(leaves, population)
        total = sum(leaf.alive for _, _, leaf in leaves) if visible is None else int(visible.sum())
        size = sum(len(leaf.live) for _, _, leaf in leaves)
        state = (tuple(leaf_key(reader) for reader, _, _ in leaves), self.signature, population)
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
