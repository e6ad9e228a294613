"""What a search lane is, and what the engine does with the lanes' answers.

A lane ranks candidates for one query on its own; `Fusion` combines the lanes' answers, by
weighted reciprocal rank fusion or by a convex combination of their normalised scores. A lane
states whether it can answer (`state`) with one function that serves both the query engine (per
kind, for this query) and `/status` (the lane as a whole and per kind, with the indexer's sync
and embedding health laid over it), so the two never disagree. Both are asked for one viewer's
view: a lane that is ready for some texts and not others (the semantic lane, while vectors are
computed) says whether it is ready for the texts that viewer can be answered with, so another
user's pages never make it warm up for them.

Nothing here imports an index library: the MkDocs plugin validates the `sidecar:` settings
through the registry, and must not pull in Whoosh or Chroma to do it.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from groundwiki_sidecar.lanes.adaptive import adapted
from groundwiki_sidecar.lanes.reading import LaneIndexer, LaneSnapshot, LaneView

KINDS = ("page", "chunk")  # what a lane may rank; /status reports each lane per kind


@dataclass(frozen=True)
class LaneState:
    state: str  # one of LANE_STATES
    reason: str = ""


# A lane's state in /status: stale is a sync failing behind it.
LANE_STATES = ("ok", "warming", "unavailable", "stale", "failing")


READY = LaneState("ok")


@dataclass(frozen=True)
class Filters:
    tags: tuple[str, ...] = ()  # every tag must be present
    kind: str | None = None

    def page_ok(self, tags: Sequence[str], kind: str) -> bool:
        return all(t in tags for t in self.tags) and (self.kind is None or kind == self.kind)


@dataclass(frozen=True)
class Best:
    """A page's best passage in one lane, and its normalised score there (0 to 1)."""

    passage: str
    score: float


@dataclass(frozen=True)
class LaneQuery:
    """One query as every lane sees it."""

    text: str
    kind: str  # page | chunk
    depth: int  # how many candidates a lane returns at most
    filters: Filters
    allowed: Container[str]  # the snapshot's items the query may return
    hidden: int  # how many of the snapshot's pages the filters leave out
    snapshot: LaneSnapshot
    indexer: LaneIndexer
    # A scoped wiki's viewer: the scopes a hit may be of (empty: every scope, in a wiki
    # without scopes), the shared pages' uids the viewer's own pages shadow, and how many
    # indexed passages are not the viewer's (a lane that cannot filter fetches that many more).
    scopes: tuple[str, ...] = ()
    shadowed: frozenset[str] = frozenset()
    hidden_passages: int = 0
    # The snapshot as the viewer sees it: what the lanes' readiness is asked for.
    view: LaneView | None = None
    # The `stopword_idf` setting: the lexical lane skips a query whose known terms' mean idf is
    # under it (0: never), as too common in this index to rank by (`index.common_terms`).
    stopword_idf: float = 0.0
    # lane -> what it left out of a long query to bound its work, written by the lane's `rank`
    # through `bound` (each lane its own key, from its own thread) and read by the engine into
    # `LaneRun.bounded`. `rank` answers candidates only; this is its one other output.
    bounds: dict[str, str] = field(default_factory=dict, compare=False)
    # lane -> what it measured of the query while ranking (`LaneRun.signals`), written by its
    # `rank` through `measured`: how the fusion may weigh it against the others (`adaptive`).
    signals: dict[str, dict[str, float]] = field(default_factory=dict, compare=False)

    # lane -> page key -> the page's best passage in that lane, written by a page search's
    # `rank` through `found_passages` (each lane its own key) and read for the hits' snippets.
    passages: dict[str, dict[str, Best]] = field(default_factory=dict, compare=False)
    # lane -> why it did not rank this query although it could have run (`LaneRun` state
    # `skipped`), written by its `rank` through `skip`.
    skipped: dict[str, str] = field(default_factory=dict, compare=False)

    def found_passages(self, lane: str, best: dict[str, Best]) -> None:
        """Record each ranked page's best passage in `lane`."""
        self.passages[lane] = best

    def measured(self, lane: str, **signals: float) -> None:
        """Record what `lane` measured of the query (its `LaneRun.signals`)."""
        self.signals.setdefault(lane, {}).update(signals)

    def bound(self, lane: str, left_out: str) -> None:
        """Record that `lane` ranked on part of the query only; `left_out` says what it left."""
        if left_out:
            self.bounds[lane] = left_out

    def skip(self, lane: str, reason: str) -> None:
        """Record that `lane` chose not to rank this query, and why: its run is `skipped`, and
        the fusion drops it as it drops a lane that found nothing."""
        self.skipped[lane] = reason


# How a lane took part in one search: ranked (`ok`), held back by another lane (`standby`), not
# ready or not able to rank this kind, declined the query as one it cannot rank (`skipped`: no
# terms, or only terms too common in the index), or dropped for failing or taking too long.
RUN_STATES = ("ok", "standby", "skipped", "unavailable", "warming", "failed", "timeout")


# A lane's answer: candidates best first, each with the lane's own score (higher is better;
# scores are comparable within one lane's answer to one query, not across lanes).
Scored = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class LaneRun:
    name: str
    state: str  # one of RUN_STATES
    ranked: tuple[str, ...] = ()
    reason: str = ""
    seconds: float = 0.0
    scores: tuple[float, ...] = ()  # the lane's score of each ranked candidate, same order
    bounded: str = ""  # what the lane left out of a long query to bound its work ("" if nothing)
    # What the lane measured of the query, for the fusion (`adaptive.COVERAGE`, `adaptive.TERMS`).
    signals: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def answered(
        cls,
        name: str,
        scored: Scored,
        seconds: float = 0.0,
        bounded: str = "",
        signals: Mapping[str, float] | None = None,
    ) -> LaneRun:
        return cls(
            name,
            "ok",
            tuple(item for item, _ in scored),
            seconds=seconds,
            scores=tuple(score for _, score in scored),
            bounded=bounded,
            signals=dict(signals or {}),
        )


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    # lane -> (rank in that lane, the part of `score` it gave): the parts add up to the score
    contributions: dict[str, tuple[int, float]] = field(default_factory=dict)


FUSION_METHODS = ("rrf", "convex")
NORMALISATIONS = ("minmax", "zscore")
# Scores are normalised over each lane's first NORM_WINDOW candidates, the fewest the engine
# asks a lane for: a page's fused score then does not depend on how many hits were asked for.
# 100 rather than 50: z-scores over 100 held the targets on Cranfield and LISA for semantic
# weights from 0.6 to 0.8 of the lexical lane's, over 50 only at 0.75 to 0.8 (retrieval-quality).
NORM_WINDOW = 100


@dataclass(frozen=True)
class Fusion:
    """How the lanes' answers become one ranking.

    `rrf`: weighted reciprocal rank fusion, weight / (k + rank), from ranks alone. `convex`:
    the weighted sum of each lane's scores made comparable (`normalise`): `minmax` maps the
    lane's window of scores onto [0, 1], `zscore` divides their distance above the window's
    lowest by their standard deviation, so a lane whose best hits stand out from the rest gives
    them more. Either way a lane that did not find a candidate gives it nothing, the parts a
    candidate got add up to its score, and ties go to the candidate more lanes found, then to
    the better sum of ranks, then to the smaller ID, so an answer never shuffles.
    """

    weights: Mapping[str, float]
    method: str = "rrf"
    k: int = 60
    normalise: str = "minmax"
    adaptive: bool = False  # the weights adapt to each query (`adaptive.py`)

    def weights_for(self, runs: Sequence[LaneRun]) -> dict[str, float]:
        """The weights this query's runs are fused with."""
        return adapted(runs, self.weights) if self.adaptive else dict(self.weights)

    def fuse(
        self, runs: Sequence[LaneRun], weights: Mapping[str, float] | None = None
    ) -> list[Fused]:
        """`weights`: this query's, when the caller has them already (`weights_for`)."""
        weights = self.weights_for(runs) if weights is None else weights
        if self.method == "convex":
            return fuse_convex(runs, weights, self.normalise)
        return fuse(runs, weights, self.k)


def fuse(runs: Sequence[LaneRun], weights: Mapping[str, float], k: int) -> list[Fused]:
    """Weighted RRF: each candidate gets the sum over the lanes that ran of weight / (k + rank)."""
    parts = {
        run.name: [
            weights.get(run.name, 0.0) / (k + rank) for rank in range(1, len(run.ranked) + 1)
        ]
        for run in runs
        if run.state == "ok"
    }
    return _combine(runs, parts)


def fuse_convex(
    runs: Sequence[LaneRun], weights: Mapping[str, float], normalise: str = "minmax"
) -> list[Fused]:
    """Each candidate gets the sum over the lanes that ran of weight × its normalised score."""
    parts = {
        run.name: [weights.get(run.name, 0.0) * v for v in normalised(run.scores, normalise)]
        for run in runs
        if run.state == "ok"
    }
    return _combine(runs, parts)


def normalised(scores: Sequence[float], method: str = "minmax") -> list[float]:
    """One lane's scores (best first) on a common scale: 0 at the lowest of the window (and
    below it), so a candidate the lane did not return would rank with its last; 1 for every
    candidate when the window's scores are all equal."""
    window = scores[:NORM_WINDOW]
    if not window:
        return []
    low = min(window)
    if method == "zscore":
        mean = sum(window) / len(window)
        spread = (sum((s - mean) ** 2 for s in window) / len(window)) ** 0.5
    else:
        spread = max(window) - low
    if spread <= 1e-12:
        return [1.0 if s >= low else 0.0 for s in scores]
    return [max(s - low, 0.0) / spread for s in scores]


def _combine(runs: Sequence[LaneRun], parts: Mapping[str, Sequence[float]]) -> list[Fused]:
    scores: dict[str, float] = {}
    found: dict[str, dict[str, tuple[int, float]]] = {}
    for run in runs:
        if run.name not in parts:
            continue
        for rank, (item, part) in enumerate(zip(run.ranked, parts[run.name], strict=True), 1):
            scores[item] = scores.get(item, 0.0) + part
            found.setdefault(item, {})[run.name] = (rank, part)
    fused = [Fused(item, scores[item], found[item]) for item in scores]
    fused.sort(key=_order)
    return fused


def _order(fused: Fused) -> tuple[float, int, int, str]:
    # Ties (the candidates past every lane's normalisation window all score 0) go to the
    # candidate more lanes found, then to the better ranks, then to the smaller ID.
    ranks = sum(rank for rank, _ in fused.contributions.values())
    return (-round(fused.score, 12), -len(fused.contributions), ranks, fused.id)


class Lane(Protocol):
    """A search lane: what the registry, the engine, `/status`, the settings, the schema and the
    evaluation know of it."""

    @property
    def name(self) -> str: ...

    @property
    def kinds(self) -> tuple[str, ...]:
        """What it ranks: page, chunk."""
        ...

    @property
    def weight(self) -> float:
        """Its default weight in the fusion."""
        ...

    @property
    def doc(self) -> str:
        """One line, for the settings' and the API's documentation."""
        ...

    @property
    def embeds(self) -> bool:
        """True when it ranks by the embedding model's vectors: its status follows the
        embedding health, and the evaluation ranks it again for each page-vector text."""
        ...

    @property
    def grid(self) -> tuple[float, ...]:
        """Its weights tried by `groundwiki eval --grid` (the first lane's is held at 1)."""
        ...

    @property
    def fills_in_for(self) -> str | None:
        """Another lane's name: with the fallback mode on (`token_lane: fallback`), this lane's
        ranking is fused only when that lane found nothing. None: always fused."""
        ...

    def state(
        self, indexer: LaneIndexer, kind: str | None, view: LaneView | None = None
    ) -> LaneState:
        """Whether it can rank `kind` now (None: the lane as a whole), from its own index, for
        `view`'s texts (None: every text indexed)."""
        ...

    def status(
        self, indexer: LaneIndexer, kind: str | None = None, view: LaneView | None = None
    ) -> LaneState:
        """What `/status` says of it, as a whole (None) or for searches of `kind`: `state`,
        with the indexer's health laid over, for `view` (None: the whole index)."""
        ...

    def rank(self, query: LaneQuery) -> Scored:
        """The candidates in rank order with the lane's scores, at most `query.depth`, all in
        `query.allowed`."""
        ...


@dataclass(frozen=True)
class BaseLane:
    """The parts most lanes share; a lane module subclasses it and writes `rank` (and `state`
    when the lane can be unready)."""

    name: str
    kinds: tuple[str, ...]
    weight: float
    doc: str
    embeds: bool = False
    grid: tuple[float, ...] = (1.0,)
    fills_in_for: str | None = None

    def state(
        self, indexer: LaneIndexer, kind: str | None, view: LaneView | None = None
    ) -> LaneState:
        return ranks_kind(self, kind) or not_indexed_yet(self, indexer, kind) or READY

    def status(
        self, indexer: LaneIndexer, kind: str | None = None, view: LaneView | None = None
    ) -> LaneState:
        return with_health(self, indexer, self.state(indexer, kind, view), view)

    def rank(self, query: LaneQuery) -> Scored:
        raise NotImplementedError(f"the {self.name} lane does not say how it ranks")


def ranks_kind(lane: Lane, kind: str | None) -> LaneState | None:
    """`unavailable` when the lane does not rank this kind at all."""
    if kind is None or kind in lane.kinds:
        return None
    return LaneState("unavailable", f"the {lane.name} lane ranks {_plural(lane.kinds)} only")


def not_indexed_yet(lane: Lane, indexer: LaneIndexer, kind: str | None) -> LaneState | None:
    """`warming` while the first sync has not indexed `kind` yet (None: one of the lane's
    kinds): it indexes pages first, raw-source chunks last, and serves each as it is in."""
    if indexer.snapshot is None:
        return None  # no index at all: the engine says so for every lane (`NotReady`)
    missing = [k for k in ((kind,) if kind else lane.kinds) if k not in indexer.ready_kinds]
    if not missing:
        return None
    return LaneState("warming", f"first sync: {_plural(missing)} not indexed yet")


def with_health(
    lane: Lane, indexer: LaneIndexer, ready: LaneState, view: LaneView | None = None
) -> LaneState:
    """A lane is only `ok` in `/status` while its index follows the files: `stale` when the
    sync is failing and answers come from the last good batch, `failing` when its index cannot
    be written, `warming` until the first sync has finished. The failure's text as `view`'s
    viewer may be told it (`health.shown_error`)."""
    if ready.state == "unavailable":
        return ready
    if lane.embeds and indexer.embed_health.failing:
        return LaneState("failing", indexer.embed_health.reason(_others(view)))
    synced = indexer.snapshot is not None
    if indexer.sync_health.failing:
        reason = indexer.sync_health.reason(_others(view))
        return LaneState("stale" if synced else "failing", reason)
    if not synced:
        return LaneState("warming", "first sync running")
    return ready


def _others(view: LaneView | None) -> frozenset[str]:
    """The users whose files `view`'s viewer must not be told of (none without a view)."""
    return view.others() if view is not None else frozenset()


def _plural(kinds: Sequence[str]) -> str:
    return " and ".join(f"{kind}s" for kind in kinds)
