"""Runs a test collection through the sidecar's real indexer and query engine, and two outside
BM25 implementations on the same text, and scores every ranking with ir-measures.

Systems (the lanes come from the registry, `sidecar/lanes`):
- one per lane (`lexical`, `semantic`, `token`), as the engine ranks it inside a hybrid query;
- `hybrid`: the engine's fused answer with the configured weights and k;
- `hybrid:token-fused`: the same with the lanes that only fill in (the token lane, under
  `token_lane: fallback`) always fused;
- `lexical:bm25`: the lexical lane's BM25F with the body as its only field, which is plain
  BM25 over the same text the baselines get (the correctness check against `bm25s`);
- `bm25s`, `fts5`: the outside baselines;
- with the other page-vector text also evaluated, the lanes that rank by vectors and the
  hybrid again with that suffix: `semantic:summary` and `hybrid:summary`;
- with `http`, `hybrid:http`: the same wiki served by a real sidecar process and every query
  posted to its `/search` (http_run.py), with how many queries' first ten hits are identical
  to the harness's (`parity`).

The fusion grid re-fuses the lanes' own rankings with other weights and k through the engine's
`fuse`, so no query runs twice.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import SidecarSettings, load_sidecar
from groundwiki_sidecar.evaluation.baselines import bm25s_rankings, fts5_rankings
from groundwiki_sidecar.evaluation.collection import Collection
from groundwiki_sidecar.evaluation.corpus_wiki import write_corpus_wiki
from groundwiki_sidecar.evaluation.http_run import http_rankings, parity
from groundwiki_sidecar.evaluation.metrics import MEASURES, Scorer, score_runs
from groundwiki_sidecar.index.bm25f import Bm25f
from groundwiki_sidecar.lanes import Fusion, LaneRun
from groundwiki_sidecar.lanes.lexical_lane import LEXICAL
from groundwiki_sidecar.search.query import QueryEngine

RUNS_FILE = "lane-runs.json"
# The figures are of quality, not speed: a lane that a busy machine slows past the engine's
# 2 s must still answer, or one run's figures would differ from the next's.
LANE_TIMEOUT_S = 120.0
DEPTH = 100  # ranks kept per query: Recall@100 needs them
DEFAULT_PAGE_VECTOR = SidecarSettings().page_vector
Progress = Callable[[str, int, int], None]


@dataclass
class VariantRun:
    """The lanes' rankings (document IDs) of every query, for one page-vector setting, with each
    lane's scores and whether it took part (`ok`, or `standby` when it only fills in): enough
    to fuse them again any other way without running a query twice."""

    page_vector: str
    lanes: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    scores: dict[str, dict[str, tuple[float, ...]]] = field(default_factory=dict)
    states: dict[str, dict[str, str]] = field(default_factory=dict)
    signals: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    hybrid: dict[str, tuple[str, ...]] = field(default_factory=dict)
    http: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bm25: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lane_ms: dict[str, list[float]] = field(default_factory=dict)
    hybrid_ms: list[float] = field(default_factory=list)
    index_s: float = 0.0
    embed_s: float = 0.0
    embedded: int = 0

    def lane_runs(self, query_id: str) -> list[LaneRun]:
        """The lanes' answers to one query as the engine had them."""
        return [
            LaneRun(
                name,
                self.states[name][query_id],
                self.lanes[name][query_id],
                scores=self.scores[name][query_id],
                signals=self.signals.get(name, {}).get(query_id, {}),
            )
            for name in self.lanes
        ]

    def to_json(self) -> dict[str, Any]:
        """The rankings and scores, for fusing offline (`lane-runs.json` in a kept folder)."""
        return {
            "page_vector": self.page_vector,
            "lanes": {
                name: {
                    query_id: {
                        "state": self.states[name][query_id],
                        "ranked": list(ranked),
                        "scores": list(self.scores[name][query_id]),
                        "signals": self.signals.get(name, {}).get(query_id, {}),
                    }
                    for query_id, ranked in by_query.items()
                }
                for name, by_query in self.lanes.items()
            },
        }


def run_variant(
    collection: Collection,
    root: Path,
    page_vector: str,
    fusion: Fusion,
    progress: Progress | None = None,
    http: bool = False,
) -> VariantRun:
    sidecar_options = {
        "embed_chunks": False,
        "page_vector": page_vector,
        "weights": dict(fusion.weights),
        "fusion": fusion.method,
        "rrf_k": fusion.k,
        "fusion_normalise": fusion.normalise,
        "adaptive_fusion": fusion.adaptive,
    }
    key_to_doc = write_corpus_wiki(collection, root, sidecar_options)
    sidecar = load_sidecar(root / "mkdocs.yml")
    run = VariantRun(page_vector)
    service = SidecarService(sidecar)
    try:
        indexer = service.indexer
        for lane in lanes.LANES:  # before the long indexing, not after it
            ready = lane.state(indexer, "page")
            if ready.state == "unavailable":
                raise RuntimeError(f"the {lane.name} lane cannot run: {ready.reason}")
        started = time.perf_counter()
        service.sync("evaluation", progress)
        run.index_s = time.perf_counter() - started
        started = time.perf_counter()
        run.embedded = indexer.embed_pending(progress=progress)
        run.embed_s = time.perf_counter() - started
        settings = sidecar.settings  # the fusion written into the wiki's config
        engine = QueryEngine(
            indexer,
            settings.weights,
            settings.rrf_k,
            settings.token_lane,
            settings.fusion_rule(),
            timeout_s=LANE_TIMEOUT_S,
            rank_standby=True,  # the grid fuses the fill-in lanes too (`refuse`)
        )
        body_only = Bm25f({"body": 1.0})
        to_docs = _mapper(key_to_doc)
        try:
            total = len(collection.queries)
            for done, (query_id, text) in enumerate(collection.queries.items(), start=1):
                started = time.perf_counter()
                ranking = engine.search_pages(text, DEPTH)
                run.hybrid_ms.append(1000 * (time.perf_counter() - started))
                run.hybrid[query_id] = to_docs(f.id for f in ranking.fused)
                for ran in ranking.runs:
                    if ran.state not in {"ok", "standby", "skipped"}:  # skipped: declined
                        raise RuntimeError(f"the {ran.name} lane is {ran.state}: {ran.reason}")
                    kept = [i for i, key in enumerate(ran.ranked) if key in key_to_doc]
                    run.lanes.setdefault(ran.name, {})[query_id] = to_docs(ran.ranked)
                    run.scores.setdefault(ran.name, {})[query_id] = tuple(
                        ran.scores[i] for i in kept
                    )
                    run.states.setdefault(ran.name, {})[query_id] = ran.state
                    run.signals.setdefault(ran.name, {})[query_id] = dict(ran.signals)
                    run.lane_ms.setdefault(ran.name, []).append(1000 * ran.seconds)
                ranked = indexer.lexical.rank("page", text, DEPTH, ranker=body_only)
                run.bm25[query_id] = to_docs(key for key, _ in ranked)
                if progress:
                    progress("queries", done, total)
        finally:
            engine.close()
    finally:
        service.stop()
    if http:  # once this process has let go of the indexes, a sidecar of its own serves them
        served = http_rankings(root / "mkdocs.yml", collection.queries, DEPTH, progress)
        run.http = {query_id: to_docs(keys) for query_id, keys in served.items()}
    return run


@contextlib.contextmanager
def _folder(kept: Path | None, workdir: Path | None) -> Iterator[Path]:
    if kept is not None:
        kept.mkdir(parents=True, exist_ok=True)
        yield kept
        return
    with tempfile.TemporaryDirectory(prefix="groundwiki-eval-", dir=workdir) as tmp:
        yield Path(tmp)


def _mapper(key_to_doc: Mapping[str, str]) -> Callable[[Any], tuple[str, ...]]:
    def to_docs(keys: Any) -> tuple[str, ...]:
        return tuple(key_to_doc[key] for key in keys if key in key_to_doc)

    return to_docs


def refuse(
    run: VariantRun, fusion: Fusion, depth: int = DEPTH, fill_ins_fused: bool = False
) -> dict[str, tuple[str, ...]]:
    """The hybrid ranking the engine would give with another fusion, from the lanes' answers to
    the same queries. `fill_ins_fused`: the lanes that only fill in are fused always, as with
    `token_lane: fused`."""
    fused: dict[str, tuple[str, ...]] = {}
    for query_id in run.hybrid:
        runs = run.lane_runs(query_id)
        if fill_ins_fused:
            runs = [replace(r, state="ok") if r.state == "standby" else r for r in runs]
        fused[query_id] = tuple(f.id for f in fusion.fuse(runs)[:depth])
    return fused


GRID_K = (10, 30, 60, 100)


def grid_fusions() -> list[Fusion]:
    """Every fusion `groundwiki eval --grid` scores: each method (RRF with each k in GRID_K,
    convex with each normalisation) with every combination of the lanes' grid weights
    (`Lane.grid`), each with the weights fixed and adapting per query (`lanes.adaptive`). Both are unchanged when every weight is multiplied by the same number, so
    the first lane's weight is held at 1 and the others are relative to it. A lane that only
    fills in for another keeps its default weight (relative to the first lane's): it is fused
    only on the queries that lane finds nothing for, so its weight barely moves the figures."""
    names = lanes.names("page")
    first = lanes.get(names[0]).weight
    grids = [
        (lane.weight / first,) if lane.fills_in_for else lane.grid for lane in map(lanes.get, names)
    ]
    combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*grids)]
    fusions: list[Fusion] = []
    for combo, adaptive in itertools.product(combos, (False, True)):
        fusions += [Fusion(combo, "rrf", k=k, adaptive=adaptive) for k in GRID_K]
        fusions += [
            Fusion(combo, "convex", normalise=n, adaptive=adaptive) for n in lanes.NORMALISATIONS
        ]
    return fusions


def fusion_label(fusion: Fusion) -> dict[str, Any]:
    """A fusion as a grid row names it: its method and only the parameters that method uses."""
    row: dict[str, Any] = {"method": fusion.method, "weights": dict(fusion.weights)}
    if fusion.method == "rrf":
        row["k"] = fusion.k
    else:
        row["normalise"] = fusion.normalise
    row["adaptive"] = fusion.adaptive
    return row


def fusion_grid(collection: Collection, run: VariantRun) -> list[dict[str, Any]]:
    """Every fusion of `grid_fusions` scored on the lanes' answers, best nDCG@10 first."""
    scorer = Scorer(collection)
    rows = [
        {**fusion_label(fusion), **scorer.score(refuse(run, fusion))} for fusion in grid_fusions()
    ]
    rows.sort(key=lambda r: (-r["nDCG@10"], -r["R@100"], json.dumps(r, sort_keys=True)))
    return rows


@dataclass
class Evaluation:
    collection: str
    documents: int
    queries: int
    fusion: Fusion
    systems: dict[str, dict[str, float]]
    timings: dict[str, Any]
    grid: dict[str, list[dict[str, Any]]]  # page-vector setting -> grid rows
    parity: dict[str, Any] = field(default_factory=dict)  # hybrid vs hybrid:http (`http`)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "documents": self.documents,
            "queries": self.queries,
            "measures": [str(m) for m in MEASURES],
            "fusion": fusion_label(self.fusion),
            "systems": self.systems,
            "timings": self.timings,
            "grid": self.grid,
            "parity": self.parity,
        }


def evaluate(
    collection: Collection,
    *,
    fusion: Fusion | None = None,
    page_vectors: Sequence[str] = (DEFAULT_PAGE_VECTOR,),
    grid: bool = False,
    workdir: Path | None = None,
    keep: Path | None = None,
    progress: Progress | None = None,
    http: bool = False,
) -> Evaluation:
    """`keep`: a folder to keep the wikis and indexes in (`<keep>/<collection>/<page vector>`)
    and to take them up from next time: a text embedded once is not embedded again, which is
    most of a run's time. Each variant's lane rankings and scores are written beside its wiki
    (`lane-runs.json`). `fusion`: default, the sidecar's. `http`: the default page-vector
    text's wiki is also served by a sidecar process and asked over HTTP (`hybrid:http`)."""
    fusion = fusion or SidecarSettings().fusion_rule()
    page_lanes = [lanes.get(name) for name in lanes.names("page")]
    # The lanes that rank by vectors change with the page-vector text; the others do not, so
    # they are scored once, with the default text.
    shared = [lane.name for lane in page_lanes if not lane.embeds]
    per_variant = [lane.name for lane in page_lanes if lane.embeds]
    fill_ins = [lane.name for lane in page_lanes if lane.fills_in_for]
    runs: dict[str, dict[str, tuple[str, ...]]] = {}
    timings: dict[str, Any] = {}
    variants: dict[str, VariantRun] = {}
    agreement: dict[str, Any] = {}
    with _folder(keep / collection.name if keep else None, workdir) as folder:
        for page_vector in page_vectors:
            served = http and page_vector == DEFAULT_PAGE_VECTOR
            run = run_variant(
                collection, folder / page_vector, page_vector, fusion, progress, http=served
            )
            if keep:
                (folder / page_vector / RUNS_FILE).write_text(
                    json.dumps(run.to_json()) + "\n", encoding="utf-8"
                )
            variants[page_vector] = run
            suffix = "" if page_vector == DEFAULT_PAGE_VECTOR else f":{page_vector}"
            if not suffix:
                for name in shared:
                    runs[name] = run.lanes[name]
                    if name == LEXICAL.name:
                        runs[f"{name}:bm25"] = run.bm25
            for name in per_variant:
                runs[f"{name}{suffix}"] = run.lanes[name]
            runs[f"hybrid{suffix}"] = run.hybrid
            if not suffix:
                # The same weights with the other fusion methods, and with the lanes that fill
                # in always fused (`token_lane: fused`).
                for method in lanes.FUSION_METHODS:
                    if method != fusion.method:
                        runs[f"hybrid:{method}"] = refuse(run, replace(fusion, method=method))
                # The same weights fixed, or adapting per query (`lanes.adaptive`).
                other = replace(fusion, adaptive=not fusion.adaptive)
                runs["hybrid:adaptive" if other.adaptive else "hybrid:fixed"] = refuse(run, other)
                if fill_ins:
                    fused = refuse(run, fusion, fill_ins_fused=True)
                    runs[f"hybrid:{'+'.join(fill_ins)}-fused"] = fused
                if served:
                    runs["hybrid:http"] = run.http
                    agreement = parity(run.hybrid, run.http, top=10)
            timings[f"index{suffix}"] = {
                # The lanes other than the vectors' are ready once the sync is done.
                "_and_".join(shared) + "_s": run.index_s,
                "embedding_s": run.embed_s,
                "texts_embedded": run.embedded,
            }
            timings[f"query_ms{suffix}"] = {
                "hybrid_mean": statistics.mean(run.hybrid_ms),
                **{f"{lane}_mean": statistics.mean(ms) for lane, ms in run.lane_ms.items()},
            }
    texts = {doc.id: doc.full_text for doc in collection.documents}
    for name, ranker in (("bm25s", bm25s_rankings), ("fts5", fts5_rankings)):
        started = time.perf_counter()
        runs[name] = ranker(texts, collection.queries, DEPTH)
        timings[name + "_s"] = time.perf_counter() - started
    return Evaluation(
        collection=collection.name,
        documents=len(collection.documents),
        queries=len(collection.queries),
        fusion=fusion,
        systems=score_runs(collection, runs),
        timings=timings,
        grid={v: fusion_grid(collection, run) for v, run in variants.items()} if grid else {},
        parity=agreement,
    )
