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
  hybrid again with that suffix: `semantic:summary` and `hybrid:summary`.

The fusion grid re-fuses the lanes' own rankings with other weights and k through the engine's
`fuse`, so no query runs twice.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sidecar import lanes
from ..sidecar.bm25f import Bm25f
from ..sidecar.lanes import LaneRun, fuse
from ..sidecar.lanes.lexical import LEXICAL
from ..sidecar.query import QueryEngine
from ..sidecar.service import SidecarService
from ..sidecar.settings import SidecarSettings, load_sidecar
from .baselines import bm25s_rankings, fts5_rankings
from .collection import Collection
from .corpus_wiki import write_corpus_wiki
from .metrics import MEASURES, Scorer, score_runs

DEPTH = 100  # ranks kept per query: Recall@100 needs them
DEFAULT_PAGE_VECTOR = SidecarSettings().page_vector
Progress = Callable[[str, int, int], None]


@dataclass
class VariantRun:
    """The lanes' rankings (document IDs) of every query, for one page-vector setting."""

    page_vector: str
    lanes: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    hybrid: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bm25: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lane_ms: dict[str, list[float]] = field(default_factory=dict)
    hybrid_ms: list[float] = field(default_factory=list)
    index_s: float = 0.0
    embed_s: float = 0.0
    embedded: int = 0


def run_variant(
    collection: Collection,
    root: Path,
    page_vector: str,
    weights: Mapping[str, float],
    k: int,
    progress: Progress | None = None,
) -> VariantRun:
    sidecar_options = {"embed_chunks": False, "page_vector": page_vector, "rrf_k": k}
    key_to_doc = write_corpus_wiki(collection, root, sidecar_options | {"weights": dict(weights)})
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
        settings = sidecar.settings  # the weights and k written into the wiki's config
        engine = QueryEngine(indexer, settings.weights, settings.rrf_k, settings.token_lane)
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
                    if ran.state not in {"ok", "standby"}:
                        raise RuntimeError(f"the {ran.name} lane is {ran.state}: {ran.reason}")
                    run.lanes.setdefault(ran.name, {})[query_id] = to_docs(ran.ranked)
                    run.lane_ms.setdefault(ran.name, []).append(1000 * ran.seconds)
                ranked = indexer.lexical.rank("page", text, DEPTH, ranker=body_only)
                run.bm25[query_id] = to_docs(key for key, _ in ranked)
                if progress:
                    progress("queries", done, total)
        finally:
            engine.close()
    finally:
        service.stop()
    return run


def _mapper(key_to_doc: Mapping[str, str]) -> Callable[[Any], tuple[str, ...]]:
    def to_docs(keys: Any) -> tuple[str, ...]:
        return tuple(key_to_doc[key] for key in keys if key in key_to_doc)

    return to_docs


def refuse(
    run: VariantRun, weights: Mapping[str, float], k: int, depth: int = DEPTH
) -> dict[str, tuple[str, ...]]:
    """The hybrid ranking the engine would give with other weights and k, from the lanes'
    rankings of the same queries."""
    fused: dict[str, tuple[str, ...]] = {}
    for query_id in run.hybrid:
        runs = [LaneRun(name, "ok", run.lanes[name][query_id]) for name in lanes.names("page")]
        fused[query_id] = tuple(f.id for f in fuse(runs, weights, k)[:depth])
    return fused


GRID_K = (10, 30, 60, 100)


def fusion_grid(collection: Collection, run: VariantRun) -> list[dict[str, Any]]:
    """Every combination of the lanes' grid weights (`Lane.grid`) and k, best nDCG@10 first.
    RRF is unchanged when every weight is multiplied by the same number, so the first lane's
    weight is held at 1 and the others are relative to it."""
    scorer = Scorer(collection)
    names = lanes.names("page")
    grids = [lanes.get(name).grid for name in names]
    rows: list[dict[str, Any]] = []
    for values in itertools.product(*grids):
        weights = dict(zip(names, values, strict=True))
        for k in GRID_K:
            rows.append({"weights": weights, "k": k, **scorer.score(refuse(run, weights, k))})
    rows.sort(key=lambda r: (-r["nDCG@10"], -r["R@100"], str(r["weights"]), r["k"]))
    return rows


@dataclass
class Evaluation:
    collection: str
    documents: int
    queries: int
    weights: dict[str, float]
    k: int
    systems: dict[str, dict[str, float]]
    timings: dict[str, Any]
    grid: dict[str, list[dict[str, Any]]]  # page-vector setting -> grid rows

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "documents": self.documents,
            "queries": self.queries,
            "measures": [str(m) for m in MEASURES],
            "fusion": {"weights": self.weights, "k": self.k},
            "systems": self.systems,
            "timings": self.timings,
            "grid": self.grid,
        }


def evaluate(
    collection: Collection,
    *,
    weights: Mapping[str, float] | None = None,
    k: int = 60,
    page_vectors: Sequence[str] = (DEFAULT_PAGE_VECTOR,),
    grid: bool = False,
    workdir: Path | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    weights = dict(weights or lanes.default_weights())
    page_lanes = [lanes.get(name) for name in lanes.names("page")]
    # The lanes that rank by vectors change with the page-vector text; the others do not, so
    # they are scored once, with the default text.
    shared = [lane.name for lane in page_lanes if not lane.embeds]
    per_variant = [lane.name for lane in page_lanes if lane.embeds]
    fill_ins = [lane.name for lane in page_lanes if lane.fills_in_for]
    runs: dict[str, dict[str, tuple[str, ...]]] = {}
    timings: dict[str, Any] = {}
    variants: dict[str, VariantRun] = {}
    with tempfile.TemporaryDirectory(prefix="groundwiki-eval-", dir=workdir) as tmp:
        for page_vector in page_vectors:
            run = run_variant(
                collection, Path(tmp) / page_vector, page_vector, weights, k, progress
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
            if not suffix and fill_ins:
                # The same weights with the lanes that fill in always fused (`token_lane: fused`).
                runs[f"hybrid:{'+'.join(fill_ins)}-fused"] = refuse(run, weights, k)
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
        weights=weights,
        k=k,
        systems=score_runs(collection, runs),
        timings=timings,
        grid={v: fusion_grid(collection, run) for v, run in variants.items()} if grid else {},
    )
