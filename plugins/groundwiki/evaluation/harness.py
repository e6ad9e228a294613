"""Runs a test collection through the sidecar's real indexer and query engine, and two outside
BM25 implementations on the same text, and scores every ranking with ir-measures.

Systems:
- `lexical`, `semantic`, `token`: one lane each, as the engine ranks it inside a hybrid query;
- `hybrid`: the engine's fused answer with the configured weights and k;
- `hybrid:token-fused`: the same with the token lane always fused (`token_lane: fused`);
- `lexical:bm25`: the lexical lane's BM25F with the body as its only field, which is plain
  BM25 over the same text the baselines get (the correctness check against `bm25s`);
- `bm25s`, `fts5`: the outside baselines;
- with the other page-vector text also evaluated, `semantic:summary` and `hybrid:summary`.

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

from ..sidecar.bm25f import Bm25f
from ..sidecar.query import LANES, LaneRun, QueryEngine, fuse
from ..sidecar.service import SidecarService
from ..sidecar.settings import DEFAULT_WEIGHTS, SidecarSettings, load_sidecar
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
        if indexer.vectors is None:
            raise RuntimeError(f"the semantic lane cannot run: {indexer.semantic_problem}")
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
                for lane in ranking.runs:
                    if lane.state not in {"ok", "standby"}:
                        raise RuntimeError(f"the {lane.name} lane is {lane.state}: {lane.reason}")
                    run.lanes.setdefault(lane.name, {})[query_id] = to_docs(lane.ranked)
                    run.lane_ms.setdefault(lane.name, []).append(1000 * lane.seconds)
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
        lanes = [LaneRun(name, "ok", run.lanes[name][query_id]) for name in LANES]
        fused[query_id] = tuple(f.id for f in fuse(lanes, weights, k)[:depth])
    return fused


# RRF is unchanged when every weight is multiplied by the same number, so the lexical lane's
# weight is held at 1 and the others are relative to it.
GRID_SEMANTIC = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
GRID_TOKEN = (0.0, 0.25, 0.5, 1.0)
GRID_K = (10, 30, 60, 100)


def fusion_grid(collection: Collection, run: VariantRun) -> list[dict[str, Any]]:
    """Every combination of the grid's weights and k, best nDCG@10 first."""
    scorer = Scorer(collection)
    rows = []
    for semantic, token, k in itertools.product(GRID_SEMANTIC, GRID_TOKEN, GRID_K):
        weights = {"lexical": 1.0, "semantic": semantic, "token": token}
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
    weights = dict(weights or DEFAULT_WEIGHTS)
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
                runs["lexical"] = run.lanes["lexical"]
                runs["lexical:bm25"] = run.bm25
                runs["token"] = run.lanes["token"]
            runs[f"semantic{suffix}"] = run.lanes["semantic"]
            runs[f"hybrid{suffix}"] = run.hybrid
            if not suffix:
                # The same weights with the token lane always fused (`token_lane: fused`).
                runs["hybrid:token-fused"] = refuse(run, weights, k)
            timings[f"index{suffix}"] = {
                "lexical_and_token_s": run.index_s,
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
