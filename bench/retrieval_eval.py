"""Retrieval quality on the Cranfield dev collection: every lane, the hybrid and two outside
BM25 baselines in one run, through the same code as `groundwiki eval`.

Checks the issue's targets and prints them:
- the lexical lane's plain BM25 (body only) is within ±0.01 nDCG@10 of `bm25s`;
- the hybrid's nDCG@10 is at least the better single lane's + 0.02.

Also compares the two page-vector texts (`summary`, `lead`) and scores a grid of fusion
weights and k. Writes bench/results/retrieval_eval.json (the bundled wiki cites a copy).

    .venv/bin/python bench/retrieval_eval.py [--collection ../shared/ir/cranfield]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from groundwiki.evaluation.cli import format_table
from groundwiki.evaluation.collection import load_collection
from groundwiki.evaluation.harness import evaluate
from groundwiki.progress import Progress
from groundwiki.sidecar import lanes
from harness import RESULTS, machine_facts, write_results

DEFAULT_COLLECTION = Path(__file__).resolve().parents[2] / "shared" / "ir" / "cranfield"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", type=Path, default=DEFAULT_COLLECTION)
    parser.add_argument("--docs", type=int, help="a slice of N documents (for a quick look)")
    parser.add_argument("--output", type=Path, default=RESULTS / "retrieval_eval.json")
    args = parser.parse_args(argv)
    if not (args.collection / "corpus.jsonl").exists():
        print(f"no collection at {args.collection}: pass --collection", file=sys.stderr)
        return 2
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    collection = load_collection(args.collection)
    if args.docs:
        collection = collection.sliced(args.docs)
    started = time.perf_counter()
    with Progress() as progress:
        result = evaluate(
            collection, page_vectors=("lead", "summary"), grid=True, progress=progress.update
        ).to_json()
    result["seconds"] = time.perf_counter() - started
    print(format_table(result))
    systems = result["systems"]
    ndcg = {name: scores["nDCG@10"] for name, scores in systems.items()}
    gap = ndcg["lexical:bm25"] - ndcg["bm25s"]
    best_lane = max(ndcg[name] for name in lanes.names("page"))
    checks = {
        "bm25_within_0.01_of_bm25s": abs(gap) <= 0.01,
        "hybrid_beats_best_lane_by_0.02": ndcg["hybrid"] >= best_lane + 0.02,
    }
    print("\ntargets:")
    print(
        f"{'PASS' if checks['bm25_within_0.01_of_bm25s'] else 'FAIL'} lexical lane's BM25 "
        f"{ndcg['lexical:bm25']:.4f} vs bm25s {ndcg['bm25s']:.4f} ({gap:+.4f}; within ±0.01)"
    )
    print(
        f"{'PASS' if checks['hybrid_beats_best_lane_by_0.02'] else 'FAIL'} hybrid "
        f"{ndcg['hybrid']:.4f} vs best single lane {best_lane:.4f} "
        f"({ndcg['hybrid'] - best_lane:+.4f}; at least +0.02)"
    )
    write_results(
        args.output,
        {"benchmark": "retrieval_eval", "machine": facts, **result, "targets": checks},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
