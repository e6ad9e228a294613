"""Hybrid search over the sidecar's indexes: the registry's lanes ranked apart, then fused.

The lanes themselves live in `lanes/` (what each ranks, how, and when it can); this module runs
them. Each lane returns scored candidates in rank order, in parallel, within `LANE_TIMEOUT_S`.
Fusion (`lanes.Fusion`, the `fusion` setting) gives each candidate the sum over lanes of
weight / (k + rank), or of weight × its normalised score; a lane that fails, times out or is
still warming is dropped (not counted as zero) and the answer says which lanes took part. A
lane that only fills in for another (the token lane, with `token_lane: fallback`) is put on
standby when that lane found something. A lane that declines a query (`skipped`: the lexical
lane, for a query without terms or with terms too common to rank by) is dropped the same way.
A chunk search's fused list is then spread over its documents (`spread.py`) as it is cut to the
limit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Container, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from functools import lru_cache

from groundwiki.core.config.errors import GroundwikiError

from groundwiki_sidecar import lanes as registry
from groundwiki_sidecar.base.health import describe, shown_error
from groundwiki_sidecar.index.documents import PageRecord
from groundwiki_sidecar.index.indexer import Indexer
from groundwiki_sidecar.index.views import Generations, Snapshot, View
from groundwiki_sidecar.lanes import Filters, Fused, Fusion, LaneQuery, LaneRun, Scored, fuse
from groundwiki_sidecar.lanes.base import NORM_WINDOW, Best
from groundwiki_sidecar.lanes.lexical_lane import LEXICAL
from groundwiki_sidecar.search.spread import Origin, Spread, SpreadReport

__all__ = [
    "LANE_TIMEOUT_S",
    "Filters",
    "Fused",
    "LaneRun",
    "NotReady",
    "QueryEngine",
    "Ranking",
    "fuse",
]

log = logging.getLogger("groundwiki_sidecar")

LANE_TIMEOUT_S = 2.0
NO_FILTERS = Filters()


@dataclass(frozen=True)
class Ranking:
    fused: list[Fused]
    runs: list[LaneRun]
    generation: int
    view: View  # the snapshot as the viewer sees it: what the hits are shown from
    # lane -> page uid -> its best passage in that lane (page searches): the hits' snippets.
    passages: Mapping[str, Mapping[str, Best]] = field(default_factory=dict)
    # lane -> the weight it was fused with for this query (`Fusion.weights_for`)
    weights: Mapping[str, float] = field(default_factory=dict)
    # A chunk search's: what the per-source cap and the duplicate cut removed (None: pages).
    spread: SpreadReport | None = None

    @property
    def snapshot(self) -> Snapshot:
        return self.view.snapshot

    @property
    def bounded(self) -> dict[str, str]:
        """Lane -> what it left out of a long query, for the lanes that ranked on part of it."""
        return {run.name: run.bounded for run in self.runs if run.state == "ok" and run.bounded}


class QueryEngine:
    """Runs the registry's lanes for a query and fuses their rankings. `token_lane`: the
    setting of that name; `fallback` puts a lane that fills in for another (`Lane.fills_in_for`)
    on standby while that lane finds something, `fused` always fuses it. `spread` and
    `stopword_idf`: None for the wiki's settings (`chunks_per_source`, `cut_duplicate_chunks`,
    `stopword_idf`)."""

    def __init__(
        self,
        indexer: Indexer,
        weights: Mapping[str, float],
        k: int,
        token_lane: str = "fallback",
        fusion: Fusion | None = None,
        timeout_s: float = LANE_TIMEOUT_S,
        rank_standby: bool = False,
        spread: Spread | None = None,
        stopword_idf: float | None = None,
    ) -> None:
        self.indexer = indexer
        self.timeout_s = timeout_s
        self.token_lane = token_lane
        # A lane on standby is not run (it would take CPU and the GIL from the lanes that
        # answer) unless the evaluation asks for its ranking, to fuse it another way later.
        self.rank_standby = rank_standby
        # None: the method the wiki's settings choose (`fusion`), with these weights and k.
        self.fusion = fusion or replace(
            indexer.sidecar.settings.fusion_rule(), weights=dict(weights), k=k
        )
        settings = indexer.sidecar.settings
        # None: the wiki's `chunks_per_source` and `cut_duplicate_chunks` settings.
        self.spread = spread or Spread(settings.chunks_per_source, settings.cut_duplicate_chunks)
        self.stopword_idf = settings.stopword_idf if stopword_idf is None else stopword_idf
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="groundwiki-lane")
        # The generation each viewer's answers show: that of the last change to their view.
        self.generations = Generations()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # --- searches --------------------------------------------------------------------------------

    def search_pages(
        self,
        text: str,
        limit: int,
        filters: Filters = NO_FILTERS,
        lanes: Sequence[str] | None = None,
        user: str | None = None,
    ) -> Ranking:
        """`lanes`: only these (to compare them); default every lane that ranks pages. `user`:
        whose view (None: the shared scope); only pages of that view are ranked."""
        view = self._snapshot().view(user)
        snapshot = view.snapshot
        allowed = _allowed_pages(view, filters)
        hidden = len(snapshot.pages) - len(allowed)
        query = LaneQuery(
            text,
            "page",
            _depth(limit),
            filters,
            allowed,
            hidden,
            snapshot,
            self.indexer,
            view.scopes,
            view.shadowed,
            len(snapshot.passages) - len(view.passages),
            view=view,
            stopword_idf=self.stopword_idf,
        )
        return self._search(query, limit, lanes, view)

    def search_chunks(
        self,
        text: str,
        limit: int,
        lanes: Sequence[str] | None = None,
        user: str | None = None,
    ) -> Ranking:
        view = self._snapshot().view(user)
        snapshot = view.snapshot
        # The indexes can hold a chunk the snapshot does not (a thread's first searcher opened
        # between a commit and its publication; a vector written for a chunk deleted since):
        # what a query answers comes from the snapshot, so only its chunks and the passages of
        # the viewer's pages are ranked.
        known = _Either(snapshot.wiki.chunks, view.passages)
        hidden = len(snapshot.passages) - len(view.passages)
        query = LaneQuery(
            text,
            "chunk",
            _depth(limit),
            NO_FILTERS,
            known,
            hidden,
            snapshot,
            self.indexer,
            view.scopes,
            view.shadowed,
            hidden,
            view=view,
            stopword_idf=self.stopword_idf,
        )
        return self._search(query, limit, lanes, view)

    def _search(
        self, query: LaneQuery, limit: int, lanes: Sequence[str] | None, view: View
    ) -> Ranking:
        # A lane asked for by name that does not rank this kind takes no part; one asked for
        # twice runs once.
        wanted = registry.names(query.kind) if lanes is None else dict.fromkeys(lanes)
        chosen = [lane for lane in map(registry.get, wanted) if query.kind in lane.kinds]
        query = _gate_beside_others(chosen, query, self.indexer)
        runs = self._run_lanes(chosen, query)
        weights = self.fusion.weights_for(runs)
        fused = self.fusion.fuse(runs, weights)
        spread = None
        if query.kind == "chunk":
            fused, spread = self.spread.apply(fused, limit, _origins(view))
        else:
            fused = fused[:limit]
        ran = {run.name for run in runs if run.state == "ok"}
        passages = {lane: best for lane, best in query.passages.items() if lane in ran}
        generation = self.generations.of(view).generation
        return Ranking(fused, runs, generation, view, passages, weights, spread)

    def _run_lanes(self, chosen: Sequence[registry.Lane], query: LaneQuery) -> list[LaneRun]:
        """The chosen lanes' runs, in their order. With `token_lane: fallback`, a lane that
        fills in for another runs after it, and only when that lane found nothing; otherwise
        it is on standby, not run (unless `rank_standby`: then ranked, and still on standby)."""
        names = {lane.name for lane in chosen}
        fallback = self.token_lane == "fallback"
        deferred = [lane for lane in chosen if fallback and lane.fills_in_for in names]
        runs: dict[str, LaneRun] = {}
        self._run_now([lane for lane in chosen if lane not in deferred], query, runs)
        for lane in deferred:
            leader = runs[lane.fills_in_for or ""]
            found = leader.state == "ok" and bool(leader.ranked)
            if found and not self.rank_standby:
                runs[lane.name] = LaneRun(
                    lane.name, "standby", reason=_standby(leader, lane, query)
                )
                continue
            self._run_now([lane], query, runs)
            if found and runs[lane.name].state == "ok":
                reason = _standby(leader, lane, query)
                runs[lane.name] = replace(runs[lane.name], state="standby", reason=reason)
        return [runs[lane.name] for lane in chosen]

    def _run_now(
        self, lanes: Sequence[registry.Lane], query: LaneQuery, runs: dict[str, LaneRun]
    ) -> None:
        futures = {}
        for lane in lanes:
            state = lane.state(self.indexer, query.kind, query.view)
            if state.state != "ok":
                runs[lane.name] = LaneRun(lane.name, state.state, reason=state.reason)
                continue
            futures[lane.name] = (self._pool.submit(_timed, lane.rank, query), time.perf_counter())
        for name, (future, started) in futures.items():
            remaining = self.timeout_s - (time.perf_counter() - started)
            try:
                scored, seconds = future.result(timeout=max(remaining, 0.01))
                if name in query.skipped:
                    reason = query.skipped[name]
                    runs[name] = LaneRun(name, "skipped", reason=reason, seconds=seconds)
                    continue
                runs[name] = LaneRun.answered(
                    name, scored, seconds, query.bounds.get(name, ""), query.signals.get(name)
                )
            except FutureTimeout:
                runs[name] = LaneRun(name, "timeout", reason=f"no answer in {self.timeout_s} s")
                log.warning("the %s lane gave no answer in %s s", name, self.timeout_s)
            except Exception as exc:  # a lane's failure drops the lane, never the query
                reason = describe(exc)
                if query.view is not None:  # an exception's text may name another user's file
                    reason = shown_error(reason, query.view.others())
                runs[name] = LaneRun(name, "failed", reason=reason)
                # The answer says the lane failed; the log keeps the traceback to act on.
                log.warning("the %s lane failed on a query", name, exc_info=exc)

    def _snapshot(self) -> Snapshot:
        self.indexer.yield_to_sync()
        snapshot = self.indexer.snapshot
        if snapshot is None:
            raise NotReady("the sidecar is still building its first index")
        return snapshot


@dataclass(frozen=True)
class _Either:
    """IDs in one container or the other (raw-source chunks, page passages), without copying."""

    first: Container[str]
    second: Container[str]

    def __contains__(self, item: object) -> bool:
        return item in self.first or item in self.second


class NotReady(GroundwikiError):
    """No index yet: the first sync has not finished."""


def _standby(leader: LaneRun, lane: registry.Lane, query: LaneQuery) -> str:
    return (
        f"the {leader.name} lane found {query.kind}s; the {lane.name} lane fills in only when "
        "it finds none"
    )


def _gate_beside_others(
    chosen: Sequence[registry.Lane], query: LaneQuery, indexer: Indexer
) -> LaneQuery:
    """The query with the stop-word gate on only when a lane besides the lexical one can rank
    it now: a weak ranking by common words beats an empty answer, so a search the lexical lane
    alone can answer (chunks without chunk vectors, a search narrowed to that lane, vectors
    still computed) is ranked however common its words. A query without terms is skipped all
    the same: there is nothing to rank it by."""
    if query.stopword_idf <= 0:
        return query
    for lane in chosen:
        if lane.name != LEXICAL.name and lane.state(indexer, query.kind, query.view).state == "ok":
            return query
    return replace(query, stopword_idf=0.0)


def _origins(view: View) -> Callable[[str], Origin]:
    """A chunk search's candidate -> its document and text: a raw-source chunk's source, a
    passage's page (the engine ranks only the snapshot's chunks and the view's passages)."""
    chunks = view.snapshot.wiki.chunks

    def origin(item: str) -> Origin:
        chunk = chunks.get(item)
        if chunk is not None:
            return Origin(f"source:{chunk.source}", chunk.text)
        passage = view.passages[item]
        return Origin(f"page:{passage.page}", passage.text)

    return origin


def _depth(limit: int) -> int:
    """Candidates each lane returns: enough for fusion to lift one a lane ranks low and for a
    chunk search's spread to fill the places it passes over, and at least the window convex
    fusion normalises a lane's scores over."""
    return max(limit * 3, NORM_WINDOW)


def _timed(rank: Callable[[LaneQuery], Scored], query: LaneQuery) -> tuple[Scored, float]:
    started = time.perf_counter()
    return rank(query), time.perf_counter() - started


# The last answer of `_allowed_pages` per viewer and filters, for the next snapshot's.
_ALLOWED_BEFORE: dict[tuple[str | None, Filters], tuple[dict[str, PageRecord], frozenset[str]]] = {}


@lru_cache(maxsize=16)
def _allowed_pages(view: View, filters: Filters) -> frozenset[str]:
    """Pages a query may return: once per snapshot, viewer and filters, not per query; from
    the last snapshot's answer for every page whose record is the same object (a batch makes
    new records for the pages it changed only), so the first query after an edit does not
    test every page of the wiki again."""
    key = (view.user, filters)
    records, allowed = _ALLOWED_BEFORE.get(key, ({}, frozenset()))
    found = frozenset(
        uid
        for uid, page in view.pages.items()
        if (
            uid in allowed
            if page is records.get(uid)
            else page.usage_mode != "never" and filters.page_ok(page.tags, page.kind)
        )
    )
    if len(_ALLOWED_BEFORE) >= 64:  # one per viewer and filters in use, never without bound
        _ALLOWED_BEFORE.clear()
    _ALLOWED_BEFORE[key] = (view.pages, found)
    return found
