"""`groundwiki eval`: score the sidecar's retrieval on a BEIR-format test collection."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groundwiki_sidecar import lanes
from groundwiki_sidecar.base.settings import PAGE_VECTORS, settings_from_mapping
from groundwiki_sidecar.evaluation.collection import CollectionError, load_collection
from groundwiki_sidecar.evaluation.targets import check

from groundwiki.core.config.wiki_config import ConfigError
from groundwiki.progress import Progress


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "eval",
        parents=[common],
        help="score search quality on a test collection (BEIR format)",
        description=(
            "Turns each document of a BEIR-format collection into a page of a temporary wiki, "
            "indexes it with the sidecar's real indexes and embedding model, runs every query "
            "through the real query engine, and prints nDCG@10, Recall@100 and MRR@10 per lane, "
            "for the hybrid, and for two outside BM25 baselines (bm25s, SQLite FTS5)."
        ),
    )
    parser.add_argument(
        "collection", type=Path, help="folder with corpus.jsonl, queries.jsonl, qrels/"
    )
    parser.add_argument("--split", default="test", help="qrels/<split>.tsv (default: test)")
    parser.add_argument(
        "--queries",
        type=Path,
        metavar="FILE",
        help="another queries.jsonl for the same documents and judgments (a variant, such as "
        "the questions reworded); the results are named after the file",
    )
    parser.add_argument("--docs", type=int, metavar="N", help="evaluate on a slice of N documents")
    parser.add_argument(
        "--page-vector",
        default="lead",
        help=f"page vector texts to compare, comma-separated ({', '.join(PAGE_VECTORS)})",
    )
    parser.add_argument(
        "--weights",
        help=f"lane weights, e.g. {_example_weights()} (default: the sidecar's)",
    )
    parser.add_argument("--k", type=int, default=None, help="RRF k (default: the sidecar's, 60)")
    parser.add_argument(
        "--fusion",
        choices=lanes.FUSION_METHODS,
        help="how the lanes' answers are combined (default: the sidecar's)",
    )
    parser.add_argument(
        "--normalise",
        choices=lanes.NORMALISATIONS,
        help="convex fusion: how each lane's scores are made comparable (default: the sidecar's)",
    )
    parser.add_argument(
        "--fixed-weights",
        action="store_true",
        help="fuse with the weights as given for every query (default: the sidecar's "
        "adaptive_fusion, weights that adapt to each query)",
    )
    parser.add_argument(
        "--grid",
        action="store_true",
        help="also score every fusion method with a grid of weights and parameters",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the wikis and indexes in DIR and reuse them next time (a text embedded once "
        "is not embedded again); the lanes' rankings and scores are written there too",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="also serve the wiki with a real sidecar process and post every query to its "
        "/search, as an agent would (scored as hybrid:http, with how many queries' first ten "
        "hits match the harness's)",
    )
    parser.add_argument("-o", "--output", type=Path, help="write the results as JSON here")
    parser.set_defaults(run=cmd_eval, needs_config=False)


def cmd_eval(args: argparse.Namespace, _config: Any) -> int:
    try:
        from groundwiki_sidecar.evaluation.harness import evaluate
    except ImportError as exc:
        print(
            f"groundwiki eval: {exc.name or exc} is not installed; install the evaluation "
            "extras: pip install 'groundwiki[eval]'",
            file=sys.stderr,
        )
        return 2

    # A bad argument or collection is a GroundwikiError: `groundwiki` reports it at its edge.
    page_vectors = [v.strip() for v in args.page_vector.split(",") if v.strip()]
    if not page_vectors:
        raise ConfigError(f"--page-vector: give one or more of {', '.join(PAGE_VECTORS)}")
    for vector in page_vectors:
        settings_from_mapping({"page_vector": vector}, "--page-vector")
    raw: dict[str, Any] = {}
    if args.weights:
        raw["weights"] = _parse_weights(args.weights)
    if args.k is not None:
        raw["rrf_k"] = args.k
    if args.fusion:
        raw["fusion"] = args.fusion
    if args.normalise:
        raw["fusion_normalise"] = args.normalise
    if args.fixed_weights:
        raw["adaptive_fusion"] = False
    settings = settings_from_mapping(raw, "the command line")
    if args.docs is not None and args.docs < 1:
        raise CollectionError("--docs must be at least 1")
    collection = load_collection(args.collection, args.split, args.queries)
    if args.docs is not None:
        collection = collection.sliced(args.docs)
    print(
        f"{collection.name}: {len(collection.documents)} documents, "
        f"{len(collection.queries)} judged queries",
        file=sys.stderr,
    )
    with Progress(enabled=not getattr(args, "quiet", False)) as progress:
        result = evaluate(
            collection,
            fusion=settings.fusion_rule(),
            page_vectors=page_vectors,
            grid=args.grid,
            keep=args.keep,
            progress=progress.update,
            http=args.http,
        )
    print(format_table(result.to_json()))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
        print(f"results written to {args.output}", file=sys.stderr)
    return 0


def _example_weights() -> str:
    return ",".join(f"{name}={weight:g}" for name, weight in lanes.default_weights().items())


def _parse_weights(text: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    for part in text.split(","):
        lane, _, value = part.partition("=")
        try:
            weights[lane.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"--weights: '{part}' is not lane=number") from None
    return weights


def format_table(data: dict[str, Any]) -> str:
    measures = data["measures"]
    width = max(len(name) for name in data["systems"]) + 2
    lines = [
        f"{data['collection']}: {data['documents']} documents, {data['queries']} queries; "
        f"fusion {describe_fusion(data['fusion'])}",
        "system".ljust(width) + "".join(m.rjust(10) for m in measures),
    ]
    for name, scores in data["systems"].items():
        lines.append(name.ljust(width) + "".join(f"{scores[m]:10.4f}" for m in measures))
    timings = data["timings"]
    for key in sorted(k for k in timings if k.startswith("index")):
        index, suffix = timings[key], key.removeprefix("index")
        query = timings[f"query_ms{suffix}"]
        # The index time's key names the lanes it readies: lexical_and_token_s.
        indexed = next(k for k in index if k.endswith("_s") and k != "embedding_s")
        lines.append(
            f"times{suffix or ''}: {indexed.removesuffix('_s').replace('_', ' ')} index "
            f"{index[indexed]:.1f} s, "
            f"embedding {index['embedding_s']:.1f} s for {index['texts_embedded']} texts; "
            f"per query {query['hybrid_mean']:.1f} ms hybrid ("
            + ", ".join(
                f"{lane} {query[lane + '_mean']:.1f}"
                for lane in lanes.names()
                if lane + "_mean" in query
            )
            + " ms, lanes in parallel)"
        )
    lines.append(f"baselines: bm25s {timings['bm25s_s']:.1f} s, FTS5 {timings['fts5_s']:.1f} s")
    if agreement := data.get("parity"):
        differs = agreement["first_difference"]
        lines.append(
            f"over HTTP: {agreement['identical']} of {agreement['queries']} queries have the same "
            f"first {agreement['top']} hits as the harness"
            + (f" (the first that differs: {differs})" if differs else "")
        )
    if {"lexical:bm25", "bm25s", "hybrid"} <= set(data["systems"]):
        lines.append("targets (nDCG@10):")
        for row in check(data):
            verdict = "PASS" if row["passed"] else "FAIL"
            lines.append(
                f"  {verdict} {row['target']}: {row['value']:.4f} (margin {row['margin']:+.4f})"
            )
    for page_vector, rows in data["grid"].items():
        lines.append(f"\nfusion grid, page_vector {page_vector}, best nDCG@10 first (top 10):")
        for row in rows[:10]:
            lines.append(
                f"  {describe_fusion(row):<70}" + "".join(f"{row[m]:10.4f}" for m in measures)
            )
    return "\n".join(lines)


def describe_fusion(row: dict[str, Any]) -> str:
    """A fusion as the table shows it: `convex zscore, lexical 1.0 semantic 0.7 token 0.5`."""
    weights = " ".join(f"{lane} {weight}" for lane, weight in row["weights"].items())
    parameter = f"k {row['k']}" if row["method"] == "rrf" else row["normalise"]
    adapting = " (adaptive)" if row.get("adaptive") else ""
    return f"{row['method']} {parameter}, {weights}{adapting}"
