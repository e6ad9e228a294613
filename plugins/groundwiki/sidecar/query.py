"""Hybrid search over the sidecar's indexes: three lanes ranked apart, fused by weighted RRF.

- lexical: BM25F over the Whoosh index's key, title, summary, tags and body fields (chunk text
  for chunks), with query-time field weights (`bm25f.py`);
- semantic: cosine over the page vectors (title, summary, tags and, by default, the body's
  lead) or the chunk vectors in Chroma;
- token: overlap of the query's terms with each page's key, title, summary and tags, computed
  from the snapshot in memory: always available, so short or odd queries still find pages. By
  default (`token_lane: fallback`) it is fused only when the lexical lane finds nothing.

Each lane returns candidates in rank order. Fusion gives each candidate the sum over lanes of
weight / (k + rank); a lane that fails, times out or is still warming is dropped (not counted
as zero) and the answer says which lanes took part. Ties are broken by the number of lanes that
found the candidate, then by its ID, so the same query on the same index always gives the same
order.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Container, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .health import describe
from .sync import Indexer, Snapshot

log = logging.getLogger("groundwiki.sidecar")

LANES = ("lexical", "semantic", "token")
TOKEN_FIELD_WEIGHTS = {"key": 1.0, "title": 1.0, "summary": 0.5, "tags": 0.75}
LANE_TIMEOUT_S = 2.0
MAX_QUERY_CHARS = 1000
MAX_LIMIT = 100
_TERM = re.compile(r"[^\W_]+", re.UNICODE)


def normalise(text: str) -> tuple[str, ...]:
    """Lower-case word terms in first-seen order, each once."""
    seen: dict[str, None] = {}
    for term in _TERM.findall(text.casefold()):
        seen.setdefault(term, None)
    return tuple(seen)


@dataclass(frozen=True)
class Filters:
    tags: tuple[str, ...] = ()  # every tag must be present
    kind: str | None = None

    def page_ok(self, tags: Sequence[str], kind: str) -> bool:
        return all(t in tags for t in self.tags) and (self.kind is None or kind == self.kind)


@dataclass(frozen=True)
class LaneRun:
    name: str
    state: str  # ok | standby | unavailable | warming | failed | timeout
    ranked: tuple[str, ...] = ()
    reason: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    contributions: dict[str, tuple[int, float]] = field(
        default_factory=dict
    )  # lane -> (rank, part)


def fuse(runs: Sequence[LaneRun], weights: Mapping[str, float], k: int) -> list[Fused]:
    scores: dict[str, float] = {}
    parts: dict[str, dict[str, tuple[int, float]]] = {}
    for run in runs:
        if run.state != "ok":
            continue
        weight = weights.get(run.name, 0.0)
        for rank, item in enumerate(run.ranked, start=1):
            part = weight / (k + rank)
            scores[item] = scores.get(item, 0.0) + part
            parts.setdefault(item, {})[run.name] = (rank, part)
    fused = [Fused(item, scores[item], parts[item]) for item in scores]
    fused.sort(key=lambda f: (-round(f.score, 12), -len(f.contributions), f.id))
    return fused


@dataclass(frozen=True)
class Ranking:
    fused: list[Fused]
    runs: list[LaneRun]
    generation: int
    snapshot: Snapshot


class QueryEngine:
    def __init__(
        self,
        indexer: Indexer,
        weights: Mapping[str, float],
        k: int,
        token_lane: str = "fallback",
    ) -> None:
        self.indexer = indexer
        self.weights = dict(weights)
        self.k = k
        self.token_lane = token_lane
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="groundwiki-lane")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # --- pages -----------------------------------------------------------------------------------

    def search_pages(
        self, text: str, limit: int, filters: Filters = Filters(), lanes: Sequence[str] = LANES
    ) -> Ranking:
        snapshot = self._snapshot()
        terms = normalise(text)
        depth = max(limit * 3, 50)
        allowed = _allowed_pages(snapshot, filters)
        jobs: dict[str, Callable[[], tuple[str, ...]]] = {
            "lexical": lambda: self._lexical_pages(text, depth, filters, allowed),
            "semantic": lambda: self._semantic(
                text, "page", depth, filters, allowed, len(snapshot.pages) - len(allowed)
            ),
            "token": lambda: _token_pages(snapshot, terms, depth, allowed),
        }
        runs = self._standby_token(self._run_lanes({name: jobs[name] for name in lanes}, "page"))
        return Ranking(
            fuse(runs, self.weights, self.k)[:limit], runs, snapshot.generation, snapshot
        )

    def _standby_token(self, runs: list[LaneRun]) -> list[LaneRun]:
        """With `token_lane: fallback`, the token lane's ranking is fused only when the lexical
        lane found nothing (an identifier, a misspelling, stop words only)."""
        lexical = next((r for r in runs if r.name == "lexical"), None)
        if self.token_lane != "fallback" or lexical is None or not lexical.ranked:
            return runs
        reason = "the lexical lane found pages; the token lane fills in only when it finds none"
        return [
            replace(r, state="standby", reason=reason)
            if r.name == "token" and r.state == "ok"
            else r
            for r in runs
        ]

    def _lexical_pages(
        self, text: str, depth: int, filters: Filters, allowed: frozenset[str]
    ) -> tuple[str, ...]:
        require = [("tags", t) for t in filters.tags]
        if filters.kind:
            require.append(("kind", filters.kind))
        ranked = self.indexer.lexical.rank(
            "page", text, depth, require=require, exclude=[("usage_mode", "never")]
        )
        return tuple(key for key, _ in ranked if key in allowed)

    # --- chunks ----------------------------------------------------------------------------------

    def search_chunks(
        self, text: str, limit: int, lanes: Sequence[str] = ("lexical", "semantic")
    ) -> Ranking:
        snapshot = self._snapshot()
        depth = max(limit * 3, 50)
        # The indexes can hold a chunk the snapshot does not (a thread's first searcher opened
        # between a commit and its publication; a vector written for a chunk deleted since):
        # what a query answers comes from the snapshot, so only its chunks are ranked.
        known = snapshot.wiki.chunks
        jobs: dict[str, Callable[[], tuple[str, ...]]] = {
            "lexical": lambda: self._lexical_chunks(text, depth, known),
            "semantic": lambda: self._semantic(text, "chunk", depth, Filters(), known),
        }
        runs = self._run_lanes({name: jobs[name] for name in lanes if name in jobs}, "chunk")
        return Ranking(
            fuse(runs, self.weights, self.k)[:limit], runs, snapshot.generation, snapshot
        )

    def _lexical_chunks(self, text: str, depth: int, known: Container[str]) -> tuple[str, ...]:
        ranked = self.indexer.lexical.rank("chunk", text, depth)
        return tuple(chunk_id for chunk_id, _ in ranked if chunk_id in known)

    # --- shared ----------------------------------------------------------------------------------

    def _semantic(
        self,
        text: str,
        kind: str,
        depth: int,
        filters: Filters,
        allowed: Container[str],
        hidden: int = 0,
    ) -> tuple[str, ...]:
        """`allowed`: the items of the snapshot a query may return; `hidden`: how many pages
        it leaves out."""
        vectors, embedder = self.indexer.vectors, self.indexer.embedder
        if vectors is None or embedder is None or not text.strip():
            return ()
        query = embedder.embed_query(text)
        where: dict[str, Any] | None = None
        fetch = depth
        if kind == "page":
            if filters.tags or filters.kind or hidden > depth:
                # Chroma's metadata filter first reads every matching ID from SQLite, which
                # costs more than the vector search itself when most pages match; so it is
                # used for real filters only, and otherwise the few hidden pages are fetched
                # as extra neighbours and dropped here.
                clauses: list[dict[str, Any]] = [{"usage_mode": {"$ne": "never"}}]
                clauses += [{f"tag:{t}": True} for t in filters.tags]
                if filters.kind:
                    clauses.append({"kind": filters.kind})
                where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
            else:
                fetch = depth + hidden
        found = vectors.query(kind, query, fetch, where)
        found.sort(key=lambda pair: (round(pair[1], 9), pair[0]))
        return tuple(i for i, _ in found if i in allowed)[:depth]

    def _run_lanes(
        self, jobs: Mapping[str, Callable[[], tuple[str, ...]]], kind: str
    ) -> list[LaneRun]:
        states = self.lane_states(kind)
        futures = {}
        runs: dict[str, LaneRun] = {}
        for name, job in jobs.items():
            state, reason = states[name]
            if state != "ok":
                runs[name] = LaneRun(name, state, reason=reason)
                continue
            futures[name] = (self._pool.submit(_timed, job), time.perf_counter())
        for name, (future, started) in futures.items():
            remaining = LANE_TIMEOUT_S - (time.perf_counter() - started)
            try:
                ranked, seconds = future.result(timeout=max(remaining, 0.01))
                runs[name] = LaneRun(name, "ok", ranked, seconds=seconds)
            except FutureTimeout:
                runs[name] = LaneRun(name, "timeout", reason=f"no answer in {LANE_TIMEOUT_S} s")
                log.warning("the %s lane gave no answer in %s s", name, LANE_TIMEOUT_S)
            except Exception as exc:  # a lane's failure drops the lane, never the query
                runs[name] = LaneRun(name, "failed", reason=describe(exc))
                # The answer says the lane failed; the log keeps the traceback to act on.
                log.warning("the %s lane failed on a query", name, exc_info=exc)
        return [runs[name] for name in jobs]

    def lane_states(self, kind: str) -> dict[str, tuple[str, str]]:
        indexer = self.indexer
        states = {name: ("ok", "") for name in LANES}
        if indexer.vectors is None or indexer.embedder is None:
            states["semantic"] = ("unavailable", indexer.semantic_problem or "no vector store")
        elif kind == "chunk" and not indexer.sidecar.settings.embed_chunks:
            states["semantic"] = ("unavailable", "chunk vectors are off (sidecar.embed_chunks)")
        else:
            pending = indexer.store.pending_count_of(kind)
            if pending:
                states["semantic"] = ("warming", f"{pending} {kind} vectors to compute")
        if kind == "chunk":
            states["token"] = ("unavailable", "the token lane ranks pages only")
        return states

    def _snapshot(self) -> Snapshot:
        self.indexer.yield_to_sync()
        snapshot = self.indexer.snapshot
        if snapshot is None:
            raise NotReady("the sidecar is still building its first index")
        return snapshot


class NotReady(RuntimeError):
    """No index yet: the first sync has not finished."""


def _timed(job: Callable[[], tuple[str, ...]]) -> tuple[tuple[str, ...], float]:
    started = time.perf_counter()
    return job(), time.perf_counter() - started


@lru_cache(maxsize=16)
def _allowed_pages(snapshot: Snapshot, filters: Filters) -> frozenset[str]:
    """Pages a query may return: once per snapshot and filters, not per query."""
    return frozenset(
        key
        for key, page in snapshot.pages.items()
        if page.usage_mode != "never" and filters.page_ok(page.tags, page.kind)
    )


@dataclass(frozen=True)
class _TokenIndex:
    fields: dict[str, dict[str, frozenset[str]]]  # page key -> field -> its terms
    postings: dict[str, frozenset[str]]  # term -> page keys having it in any field


@lru_cache(maxsize=4)
def _token_index(snapshot: Snapshot) -> _TokenIndex:
    """The token lane's terms per page and an inverted index over them, once per snapshot."""
    fields: dict[str, dict[str, frozenset[str]]] = {}
    postings: dict[str, set[str]] = {}
    for key, page in snapshot.pages.items():
        per_field = {
            "key": frozenset(normalise(page.key)),
            "title": frozenset(normalise(page.title)),
            "summary": frozenset(normalise(page.summary)),
            "tags": frozenset(t for tag in page.tags for t in normalise(tag)),
        }
        fields[key] = per_field
        for terms in per_field.values():
            for term in terms:
                postings.setdefault(term, set()).add(key)
    return _TokenIndex(fields, {term: frozenset(keys) for term, keys in postings.items()})


def _token_pages(
    snapshot: Snapshot, terms: tuple[str, ...], depth: int, allowed: frozenset[str]
) -> tuple[str, ...]:
    """Pages ranked by how many query terms they contain (then by field weight, shorter
    title, key): only pages holding at least one term are looked at."""
    if not terms:
        return ()
    index = _token_index(snapshot)
    wanted = set(terms)
    candidates: set[str] = set()
    for term in wanted:
        candidates |= index.postings.get(term, frozenset())
    scored: list[tuple[float, int, str]] = []
    for key in candidates & allowed:
        fields = index.fields[key]
        matched = set().union(*(wanted & terms_ for terms_ in fields.values()))
        weight = sum(
            TOKEN_FIELD_WEIGHTS[name] * len(wanted & terms_) for name, terms_ in fields.items()
        )
        scored.append((-len(matched) - weight / 100, len(fields["title"]), key))
    scored.sort()
    return tuple(key for _, _, key in scored[:depth])
