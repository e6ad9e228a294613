"""How the adaptive fusion's rule was fitted, and how it holds on a collection it was not fitted on.

Reads the lanes' rankings, scores and measures that `groundwiki eval --keep DIR` leaves in
`DIR/<collection>/lead/lane-runs.json`, and, per collection:

1. fuses every query again through the engine's own `Fusion`, with the lanes other than the
   lexical one weighed by each multiplier of a geometric grid (1/16 to 16), and scores each
   query's nDCG@10: which weight each query wanted;
2. fits log m(q) = c0 + c1·log coverage + c2·log terms + c3·log similarity: weighted least
   squares on each query's best multiplier (a query weighs by how much its weight matters, each
   collection alike), then a coordinate search on the mean margin over the collections' best
   lanes plus half the worst (`lanes.adaptive` ships this form, rounded);
3. leave-one-collection-out: for each collection (with its variants: `cranfield-para` goes with
   `cranfield`), the rule fitted on the others, scored on it;
4. the shipped rule (`lanes.adaptive`, exact, not on the grid) and the fixed weights, scored on
   every collection.

    .venv/bin/python bench/fusion_fit.py --keep /tmp/eval cranfield=../shared/ir/cranfield \
        cranfield-para=../shared/ir/cranfield,bench/collections/cranfield-para.jsonl ...

Writes bench/results/fusion_fit.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from groundwiki_sidecar.base.settings import SidecarSettings
from groundwiki_sidecar.evaluation.collection import Collection, load_collection
from groundwiki_sidecar.lanes import Fusion, LaneRun
from groundwiki_sidecar.lanes.adaptive import COVERAGE, SIMILARITY, TERMS
from harness import RESULTS, machine_facts, write_results
from ir_measures import nDCG
from retrieval_eval import DEFAULT_COLLECTIONS

MULTIPLIERS = np.exp(np.linspace(math.log(1 / 16), math.log(16), 45))
LOG_M = np.log(MULTIPLIERS)
FEATURES = ("log coverage", "log terms", "log similarity")


class Runs:
    """One collection's kept lane runs, and each query's nDCG@10 at every multiplier."""

    def __init__(self, name: str, collection: Collection, kept: Path) -> None:
        self.name = name
        self.group = name.split("-")[0]
        self.collection = collection
        lanes = json.loads((kept / name / "lead" / "lane-runs.json").read_text())["lanes"]
        self.queries = list(collection.queries)
        self.runs = {
            q: [
                LaneRun(
                    lane,
                    by_query[q]["state"],
                    tuple(by_query[q]["ranked"]),
                    scores=tuple(by_query[q]["scores"]),
                    signals=by_query[q].get("signals", {}),
                )
                for lane, by_query in lanes.items()
            ]
            for q in self.queries
        }
        qrels = [
            ir_measures.Qrel(q, d, g)
            for q, judged in collection.qrels.items()
            for d, g in judged.items()
        ]
        self._evaluator = ir_measures.evaluator([nDCG @ 10], qrels)
        self.lane = {
            lane: self.ndcg({q: tuple(by_query[q]["ranked"]) for q in self.queries})
            for lane, by_query in lanes.items()
        }
        self.best_lane = max(self.lane["lexical"].mean(), self.lane["semantic"].mean())
        base = SidecarSettings().fusion_rule()
        self.base = replace(base, adaptive=False)
        self.table = np.stack([self.ndcg(self.fused(self.scaled(m))) for m in MULTIPLIERS])
        signals = {lane.name: lane.signals for lane in self.runs[self.queries[0]]}
        assert COVERAGE in signals.get("lexical", {}), f"{name}: lane runs without measures"
        self.x = np.array([self.features(q) for q in self.queries])

    def scaled(self, m: float) -> Fusion:
        weights = {n: w if n == "lexical" else w * m for n, w in self.base.weights.items()}
        return replace(self.base, weights=weights)

    def fused(self, fusion: Fusion) -> dict[str, tuple[str, ...]]:
        return {q: tuple(f.id for f in fusion.fuse(self.runs[q])[:100]) for q in self.queries}

    def ndcg(self, ranking: dict[str, tuple[str, ...]]) -> np.ndarray:
        run = [
            ir_measures.ScoredDoc(q, d, float(len(docs) - i))
            for q, docs in ranking.items()
            for i, d in enumerate(docs)
        ]
        values = dict.fromkeys(self.queries, 0.0)
        for metric in self._evaluator.iter_calc(run):
            if metric.query_id in values:
                values[metric.query_id] = metric.value
        return np.array([values[q] for q in self.queries])

    def features(self, query: str) -> list[float]:
        signals = {run.name: run.signals for run in self.runs[query] if run.state == "ok"}
        lexical, semantic = signals.get("lexical", {}), signals.get("semantic", {})
        return [
            math.log(max(lexical.get(COVERAGE, 1e-4), 1e-4)),
            math.log(max(lexical.get(TERMS, 1.0), 1.0)),
            math.log(max(semantic.get(SIMILARITY, 1e-3), 1e-3)),
        ]

    def margin(self, coef: np.ndarray) -> float:
        """Mean nDCG@10 with the rule `coef` (each query's multiplier snapped to the grid)
        minus the best lane's."""
        log_m = np.clip(coef[0] + self.x @ coef[1:], LOG_M[0], LOG_M[-1])
        at = np.abs(LOG_M[:, None] - log_m[None, :]).argmin(0)
        return float(self.table[at, np.arange(len(at))].mean() - self.best_lane)


def least_squares(collections: Sequence[Runs]) -> np.ndarray:
    rows, targets, weights = [], [], []
    for c in collections:
        best = c.table.max(0)
        for j in range(len(c.queries)):
            wanted = np.nonzero(c.table[:, j] >= best[j] - 1e-12)[0]
            rows.append([1.0, *c.x[j]])
            targets.append(LOG_M[round(float(np.median(wanted)))])
            weights.append((best[j] - c.table[:, j].min()) / len(c.queries))
    x, y, w = np.array(rows), np.array(targets), np.array(weights)
    return np.linalg.solve(x.T @ (x * w[:, None]) + 1e-6 * np.eye(x.shape[1]), x.T @ (w * y))


def fit(collections: Sequence[Runs]) -> np.ndarray:
    def objective(coef: np.ndarray) -> float:
        margins = [c.margin(coef) for c in collections]
        return float(np.mean(margins) + 0.5 * min(margins))

    coef = least_squares(collections)
    best = objective(coef)
    for step in (0.5, 0.25, 0.1, 0.05):
        improved = True
        while improved:
            improved = False
            for i in range(len(coef)):
                for sign in (1, -1):
                    trial = coef.copy()
                    trial[i] += sign * step
                    value = objective(trial)
                    if value > best + 1e-9:
                        best, coef, improved = value, trial, True
    return coef


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="groundwiki eval --keep DIR")
    parser.add_argument(
        "collections",
        nargs="*",
        help="NAME=FOLDER[,QUERIES], as evaluated (NAME: its kept folder); default: the four "
        "of `bench/retrieval_eval.py`",
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "fusion_fit.json")
    args = parser.parse_args(argv)
    loaded = []
    for item in args.collections or [f"{_name(c)}={c}" for c in DEFAULT_COLLECTIONS]:
        name, _, where = item.partition("=")
        folder, _, queries = where.partition(",")
        collection = load_collection(Path(folder), queries=Path(queries) if queries else None)
        print(f"{name}: fusing every query at {len(MULTIPLIERS)} weights …", file=sys.stderr)
        loaded.append(Runs(name, collection, args.keep))
    coef = fit(loaded)
    print(
        "fitted on all: log m = "
        + " ".join(f"{c:+.3f}" for c in coef[:1])
        + "".join(f" {c:+.3f}·{f}" for c, f in zip(coef[1:], FEATURES, strict=True))
    )
    held_out: dict[str, Any] = {}
    for group in dict.fromkeys(c.group for c in loaded):
        others = [c for c in loaded if c.group != group]
        rule = fit(others)
        for c in loaded:
            if c.group == group:
                held_out[c.name] = {"coefficients": rule.tolist(), "margin": c.margin(rule)}
    shipped = SidecarSettings().fusion_rule()
    rows: dict[str, Any] = {}
    print(
        f"\n{'collection':<16}{'lexical':>9}{'semantic':>9}{'fixed':>9}{'shipped':>9}"
        f"{'fit, all':>10}{'held out':>10}   (margins over the best lane)"
    )
    for c in loaded:
        fixed = float(c.ndcg(c.fused(c.base)).mean())
        ours = float(c.ndcg(c.fused(shipped)).mean())
        rows[c.name] = {
            "queries": len(c.queries),
            "lexical": float(c.lane["lexical"].mean()),
            "semantic": float(c.lane["semantic"].mean()),
            "best_lane": c.best_lane,
            "fixed": fixed,
            "adaptive_shipped": ours,
            "fitted_on_all_margin": c.margin(coef),
            "held_out": held_out[c.name],
        }
        print(
            f"{c.name:<16}{rows[c.name]['lexical']:9.4f}{rows[c.name]['semantic']:9.4f}"
            f"{fixed - c.best_lane:+9.4f}{ours - c.best_lane:+9.4f}"
            f"{c.margin(coef):+10.4f}{held_out[c.name]['margin']:+10.4f}"
        )
    write_results(
        args.output,
        {
            "benchmark": "fusion_fit",
            "machine": machine_facts(),
            "multipliers": [float(m) for m in MULTIPLIERS],
            "features": FEATURES,
            "fitted_on_all": coef.tolist(),
            "shipped": {"fusion": str(shipped)},
            "collections": rows,
        },
    )
    return 0


def _name(item: str) -> str:
    """The kept folder of `bench/retrieval_eval.py`'s collection: the queries file's name for a
    variant, else the folder's."""
    folder, _, queries = item.partition(",")
    return Path(queries or folder).stem if queries else Path(folder).name


if __name__ == "__main__":
    raise SystemExit(main())
