"""Retrieval quality on several collections in one invocation: every lane, the hybrid and two
outside BM25 baselines per collection, through the same code as `groundwiki eval --http` (the
hybrid asked again of a served sidecar over HTTP), with the grid of every fusion method.

By default the dev collections (Cranfield and LISA) and their reworded questions
(`bench/collections/*-para.jsonl`); `--collection DIR` for any BEIR folder (repeat it; the four
public collections of bench/collections/SOURCES.md, say), `--collection DIR,QUERIES` for a
variant's queries with DIR's documents and judgments.

Checks the targets on each collection and prints them (`groundwiki_sidecar.evaluation.targets`):
- the lexical lane's plain BM25 (body only) is within ±0.01 nDCG@10 of `bm25s`;
- the hybrid's nDCG@10 is at least the best single lane's + 0.01, and `bm25s`'s + 0.03;
- the hybrid over HTTP is within 0.001 of the harness's.

Then how general the fusions are: each grid fusion's worst margin over the hybrid's bar across
the collections, and for each collection the fusion chosen on the other(s), scored on it.
Writes bench/results/retrieval_eval.json (the bundled wiki cites a copy).

    .venv/bin/python bench/retrieval_eval.py [--keep /tmp/eval] [--collection DIR[,QUERIES] ...]

`--keep` reuses the indexes and vectors of an earlier run (embedding is most of the time); the
lanes' kept rankings are what `bench/fusion_fit.py` reads.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from groundwiki.cli.eval_commands import describe_fusion, format_table
from groundwiki.progress import Progress
from groundwiki_sidecar.evaluation.collection import load_collection
from groundwiki_sidecar.evaluation.harness import evaluate
from groundwiki_sidecar.evaluation.targets import MEASURE, check, generality
from harness import RESULTS, machine_facts, write_results

SHARED = Path(__file__).resolve().parents[2] / "shared" / "ir"
VARIANTS = Path(__file__).resolve().parent / "collections"
DEFAULT_COLLECTIONS = (
    str(SHARED / "cranfield"),
    f"{SHARED / 'cranfield'},{VARIANTS / 'cranfield-para.jsonl'}",
    str(SHARED / "lisa"),
    f"{SHARED / 'lisa'},{VARIANTS / 'lisa-para.jsonl'}",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--collection",
        action="append",
        help="a BEIR folder, or FOLDER,QUERIES for a variant's queries; repeat for several "
        "(default: Cranfield and LISA, each with its reworded questions)",
    )
    parser.add_argument("--docs", type=int, help="a slice of N documents (for a quick look)")
    parser.add_argument("--page-vector", default="lead", help="comma-separated: lead,summary")
    parser.add_argument("--keep", type=Path, help="keep and reuse the indexes and vectors here")
    parser.add_argument("--output", type=Path, default=RESULTS / "retrieval_eval.json")
    args = parser.parse_args(argv)
    chosen = [_parse(item) for item in args.collection or DEFAULT_COLLECTIONS]
    for folder, queries in chosen:
        if not (folder / "corpus.jsonl").exists() or (queries and not queries.is_file()):
            print(f"no collection at {folder} {queries or ''}: pass --collection", file=sys.stderr)
            return 2
    page_vectors = tuple(v.strip() for v in args.page_vector.split(",") if v.strip())
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    results: dict[str, dict[str, Any]] = {}
    for folder, queries in chosen:
        collection = load_collection(folder, queries=queries)
        if args.docs:
            collection = collection.sliced(args.docs)
        started = time.perf_counter()
        with Progress() as progress:
            result = evaluate(
                collection,
                page_vectors=page_vectors,
                grid=True,
                keep=args.keep,
                progress=progress.update,
                http=True,
            ).to_json()
        result["seconds"] = time.perf_counter() - started
        result["targets"] = check(result)
        results[collection.name] = result
        print(format_table(result))
    passed = True
    print("\ntargets (defaults, one run each):")
    for name, result in results.items():
        for row in result["targets"]:
            passed &= row["passed"]
            print(
                f"{'PASS' if row['passed'] else 'FAIL'} {name}: {row['target']}: "
                f"{row['value']:.4f} (margin {row['margin']:+.4f})"
            )
    general = generality(results, page_vectors[0]) if len(results) > 1 else {}
    if general:
        print(f"\nfusions by their worst margin over the hybrid's bar ({', '.join(results)}):")
        for row in general["joint"][:15]:
            scores = " ".join(f"{n} {v:.4f}" for n, v in row[MEASURE].items())
            print(f"  {describe_fusion(row):<70} {scores}  worst {row['worst']:+.4f}")
        print("\neach collection held out (the fusion best on the others, scored on it):")
        for name, row in general["held_out"].items():
            print(
                f"  {name}: {describe_fusion(row['fusion'])} -> {row[MEASURE]:.4f} "
                f"(bar {row['needed']:.4f}: {'PASS' if row['passed'] else 'FAIL'})"
            )
    write_results(
        args.output,
        {
            "benchmark": "retrieval_eval",
            "machine": facts,
            "collections": results,
            "generality": general,
            "targets_met": passed,
        },
    )
    return 0


def _parse(item: str) -> tuple[Path, Path | None]:
    folder, _, queries = item.partition(",")
    return Path(folder), Path(queries) if queries else None


if __name__ == "__main__":
    raise SystemExit(main())
