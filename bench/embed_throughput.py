"""Embedding throughput: the sidecar's pipeline against the model alone, and every setting that
could make either faster, in one run on the same texts; and what each setting that changes the
vectors does to retrieval quality.

Texts: the pending pages, page passages and raw-source chunks of the seeded synthetic wiki of
sidecar_scale.py (--pages, --chunks), as the sidecar embeds them.

  pipeline   the sidecar's whole embedding path (store, vector cache, model, Chroma, manifest)
             over every pending text, in a child process on a fresh copy of the wiki: once with
             the code of --baseline-rev (the pipeline before this benchmark's changes: float
             weights, batches of 8 written to Chroma one by one, each text tokenized twice)
             and once with this checkout; then, in the same child with the same embedder, the
             model alone on the same texts, and the share of the pipeline's time spent inside
             the model's runs;
  model      `MiniLMOnnx.embed` alone on the same texts, for each alternative: the packaged
             graph (int8 weights turned into floats by ONNX Runtime) against the derived int8
             graph; graph optimisation levels; intra-op and inter-op threads and spinning;
             batch size with and without length bucketing; 128 against 256 word pieces;
  quality    nDCG@10 of the semantic ranking (cosine between the query's and each document's
             vector, the documents' title and text as every ranker reads them) on
             ../shared/ir/cranfield and ../shared/ir/lisa, for each setting that changes the
             vectors, and the cosine between each text's vector and the baseline's.

Targets: pipeline >= 3x the baseline pipeline's texts/s with nDCG@10 within 0.01 of the
baseline's on both collections; pipeline >= 95% of the model alone with the same settings.

    .venv/bin/python bench/embed_throughput.py [--pages 200] [--chunks 1000] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from groundwiki_sidecar.embedding.embedders import MiniLMOnnx
from harness import RESULTS, machine_facts, write_results
from sidecar_scale import sidecar_wiki

ROOT = Path(__file__).resolve().parent.parent
SHARED_IR = ROOT.parent / "shared" / "ir"
# The last commit before issue 17's changes to the embedding path.
BASELINE_REV = "27fc5fb"
SPEEDUP_TARGET = 3.0
PIPELINE_TARGET = 0.95
QUALITY_TOLERANCE = 0.01

# Runs in a child: one sidecar's first sync, then every pending text embedded, timed. Uses only
# what both revisions have, so the baseline runs the same steps with its own code.
PIPELINE = """
import json, logging, sys, time
logging.basicConfig(level=logging.WARNING)
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
import groundwiki_sidecar.embedding.embedders as embeddings
sidecar = load_sidecar(__import__("pathlib").Path(sys.argv[1]))
service = SidecarService(sidecar)
service.indexer.check_vectors()
service.sync("bench")
pending = service.indexer.store.pending_count()
embedder = service.indexer.embedder
# The time inside the model's runs, as a share of the pipeline's: its overhead without noise
# from a second measurement.
inside = [0.0]
plain_run = type(embedder)._run
def timed_run(*args):
    began = time.perf_counter()
    try:
        return plain_run(*args)
    finally:
        inside[0] += time.perf_counter() - began
type(embedder)._run = staticmethod(timed_run)
started = time.perf_counter()
done = service.indexer.embed_pending()
seconds = time.perf_counter() - started
type(embedder)._run = staticmethod(plain_run)
# The model alone, in this process, with this embedder (its settings), on the same texts: each
# kind's distinct texts, as the pipeline's vector cache leaves them.
snapshot = service.indexer.snapshot
kinds = {"page": snapshot.pages, "passage": snapshot.passages, "chunk": snapshot.chunks}
texts = {k: list({r.embed_hash: r.embed_text for _, r in sorted(v.items())}.values())
         for k, v in kinds.items()}
started = time.perf_counter()
for kind, some in texts.items():
    if hasattr(embedder, "embed_iter"):
        for _ in embedder.embed_iter(some, kind != "page"):
            pass
    else:
        embedder.embed(some)
model_seconds = time.perf_counter() - started
model_texts = sum(len(v) for v in texts.values())
model = embedder.identity
service.stop()
print(json.dumps({"texts": done, "pending": pending, "seconds": seconds, "model": model,
                  "model_run_seconds": inside[0],
                  "model_texts": model_texts, "model_seconds": model_seconds,
                  "code": embeddings.__file__}))
"""


def pipeline_run(wiki: Path, workdir: Path, name: str, pythonpath: Path | None) -> dict[str, Any]:
    copy = workdir / f"wiki-{name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(wiki, copy, ignore=shutil.ignore_patterns(".groundwiki"))
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    ran = subprocess.run(
        [sys.executable, "-c", PIPELINE, str(copy / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if ran.returncode != 0:
        raise SystemExit(f"pipeline {name} failed:\n{ran.stderr[-3000:]}")
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    found["texts_per_s"] = found["texts"] / found["seconds"]
    found["model_texts_per_s"] = found["model_texts"] / found["model_seconds"]
    found["pipeline_over_model"] = found["texts_per_s"] / found["model_texts_per_s"]
    found["model_share"] = found["model_run_seconds"] / found["seconds"]
    shutil.rmtree(copy, ignore_errors=True)
    return found


def baseline_code(workdir: Path, rev: str) -> Path:
    """The package as it was at `rev`, unpacked beside the run (git archive, no checkout)."""
    archive = workdir / "baseline.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", rev, "plugins"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(workdir / "baseline", filter="data")
    return workdir / "baseline" / "plugins"


def pending_texts(wiki: Path) -> list[tuple[str, str]]:
    """(kind, text) of what the pipeline embeds, in its order (pages, passages, chunks)."""
    from groundwiki.core import compile_wiki
    from groundwiki_sidecar.base.settings import load_sidecar
    from groundwiki_sidecar.index.documents import RecordCache

    sidecar = load_sidecar(wiki / "mkdocs.yml")
    lead = sidecar.settings.page_vector == "lead"
    found = RecordCache(lead=lead).all(compile_wiki(sidecar.config))
    texts = [("page", r.embed_text) for _, r in sorted(found.pages.items())]
    seen = {text for _, text in texts}
    for _, passage in sorted(found.passages.items()):
        if passage.embed_text not in seen:  # a one-passage page shares its page's vector
            seen.add(passage.embed_text)
            texts.append(("passage", passage.embed_text))
    texts += [("chunk", r.embed_text) for _, r in sorted(found.chunks.items())]
    return texts


def model_rate(
    texts: list[tuple[str, str]], repeats: int, **options: Any
) -> tuple[float, np.ndarray]:
    """Texts per second of the model alone (best of `repeats`, after a warm-up batch), each
    kind's texts together, as the pipeline embeds them."""
    model = MiniLMOnnx(**options)
    model.load()
    model.embed([text for _, text in texts[:16]])
    rates = []
    vectors = np.zeros((len(texts), 384), np.float32)
    groups = {kind: [i for i, (k, _) in enumerate(texts) if k == kind] for kind, _ in texts}
    for _ in range(repeats):
        started = time.perf_counter()
        for kind, where in groups.items():
            some = [texts[i][1] for i in where]
            for indices, found in model.embed_iter(some, kind != "page"):
                vectors[[where[i] for i in indices]] = found
        rates.append(len(texts) / (time.perf_counter() - started))
    del model
    gc.collect()
    return max(rates), vectors


def ndcg_at_10(ranked: list[str], judged: dict[str, int]) -> float:
    gains = [judged.get(doc, 0) for doc in ranked[:10]]
    dcg = sum((2**g - 1) / np.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(judged.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / np.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def semantic_quality(collection: Path, **options: Any) -> dict[str, Any]:
    """nDCG@10 of cosine ranking with this model setting; the queries as the sidecar reads them."""
    from groundwiki_sidecar.evaluation.collection import load_collection

    found = load_collection(collection)
    model = MiniLMOnnx(**options)
    model.load()
    ids = [doc.id for doc in found.documents]
    started = time.perf_counter()
    docs = model.embed([doc.full_text for doc in found.documents])
    embed_s = time.perf_counter() - started
    scores = []
    for query_id, text in sorted(found.queries.items()):
        judged = {d: g for d, g in found.qrels.get(query_id, {}).items() if g > 0}
        if not judged:
            continue
        similarity = docs @ model.embed_query(text)
        # Stable: equal scores rank by document ID.
        order = sorted(range(len(ids)), key=lambda i: (-round(float(similarity[i]), 6), ids[i]))
        scores.append(ndcg_at_10([ids[i] for i in order[:10]], judged))
    del model
    gc.collect()
    return {
        "ndcg@10": statistics.mean(scores),
        "queries": len(scores),
        "documents": len(ids),
        "docs_per_s": len(ids) / embed_s,
    }


DEFAULT = {"weights": "int8", "passage_tokens": 128}
MODEL_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("float graph (today's model)", {"weights": "float"}),
    ("int8 graph", {"weights": "int8"}),
    ("int8, passages and chunks 128 (default)", DEFAULT),
    ("int8, optimisation off", {"weights": "int8", "opt_level": "off"}),
    ("int8, optimisation basic", {"weights": "int8", "opt_level": "basic"}),
    ("int8, optimisation extended", {"weights": "int8", "opt_level": "extended"}),
    ("float, optimisation basic", {"weights": "float", "opt_level": "basic"}),
    ("int8, 1 intra-op thread", {"weights": "int8", "threads": 1}),
    ("int8, 2 intra 2 inter-op threads", {"weights": "int8", "inter_threads": 2}),
    ("int8, no spinning", {"weights": "int8", "spin": False}),
    ("int8, batch 1", {"weights": "int8", "batch_size": 1}),
    ("int8, batch 4", {"weights": "int8", "batch_size": 4}),
    ("int8, batch 16", {"weights": "int8", "batch_size": 16}),
    ("int8, batch 32", {"weights": "int8", "batch_size": 32}),
    ("int8, batch 64", {"weights": "int8", "batch_size": 64}),
    ("int8, batch 8 unbucketed", {"weights": "int8", "bucket": False}),
    ("int8, batch 32 unbucketed", {"weights": "int8", "batch_size": 32, "bucket": False}),
    ("float, batch 8 unbucketed", {"weights": "float", "bucket": False}),
    ("int8, 128 word pieces", {"weights": "int8", "max_tokens": 128}),
    ("float, 128 word pieces", {"weights": "float", "max_tokens": 128}),
]
QUALITY_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("float, 256 (today)", {"weights": "float"}),
    ("int8, 256 (default for pages)", {"weights": "int8"}),
    ("float, 128", {"weights": "float", "max_tokens": 128}),
    ("int8, 128 (default for passages, chunks)", {"weights": "int8", "max_tokens": 128}),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=2, help="model-alone runs per setting")
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument(
        "--quick", action="store_true", help="the default settings only, no quality runs"
    )
    parser.add_argument("--no-quality", action="store_true", help="skip the nDCG runs")
    parser.add_argument("--output", type=Path, default=RESULTS / "embed_throughput.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-embed-bench-"))
    results: dict[str, Any] = {"baseline_rev": args.baseline_rev}
    try:
        wiki = workdir / "wiki"
        sidecar_wiki(wiki, args.pages, args.chunks, args.seed)
        texts = pending_texts(wiki)
        lengths = [len(t) for _, t in texts]
        results["texts"] = {"count": len(texts), "chars_mean": statistics.mean(lengths)}
        print(
            f"texts: {len(texts)} (pages, passages, chunks; mean {statistics.mean(lengths):.0f} chars)"
        )

        old = baseline_code(workdir, args.baseline_rev)
        base = pipeline_run(wiki, workdir, "baseline", old)
        print(
            f"pipeline, {args.baseline_rev}: {base['texts_per_s']:.1f} texts/s ({base['texts']} in "
            f"{base['seconds']:.1f} s); its model alone {base['model_texts_per_s']:.1f}; "
            f"{base['model_share']:.1%} of its time in the model's runs"
        )
        new = pipeline_run(wiki, workdir, "current", None)
        print(
            f"pipeline, this checkout: {new['texts_per_s']:.1f} texts/s ({new['texts']} in "
            f"{new['seconds']:.1f} s); its model alone {new['model_texts_per_s']:.1f}; "
            f"{new['model_share']:.1%} of its time in the model's runs"
        )
        results["pipeline"] = {"baseline": base, "current": new}

        variants = MODEL_VARIANTS[:3] if args.quick else MODEL_VARIANTS
        model: dict[str, Any] = {}
        reference: np.ndarray | None = None
        for name, options in variants:
            rate, vectors = model_rate(texts, args.repeats, **options)
            if reference is None:
                reference = vectors
            cosine = (vectors * reference).sum(axis=1)
            model[name] = {
                "options": options,
                "texts_per_s": rate,
                "cosine_to_float_mean": float(cosine.mean()),
                "cosine_to_float_min": float(cosine.min()),
            }
            print(
                f"model, {name:34} {rate:7.1f} texts/s  cosine to float: mean {cosine.mean():.4f}, min {cosine.min():.4f}"
            )
        results["model"] = model
        # Same process, same embedder, same texts: the pipeline's own overhead.
        results["pipeline_over_model"] = new["pipeline_over_model"]
        results["speedup"] = new["texts_per_s"] / base["texts_per_s"]
        print(
            f"\npipeline / model alone (same settings): {results['pipeline_over_model']:.1%}; "
            f"pipeline speed-up over {args.baseline_rev}: {results['speedup']:.2f}x"
        )

        quality: dict[str, Any] = {}
        if not (args.quick or args.no_quality):
            for name, options in QUALITY_VARIANTS:
                row = {}
                for collection in ("cranfield", "lisa"):
                    row[collection] = semantic_quality(SHARED_IR / collection, **options)
                quality[name] = {"options": options, **row}
                print(
                    f"quality, {name:20} nDCG@10 cranfield {row['cranfield']['ndcg@10']:.4f}, "
                    f"lisa {row['lisa']['ndcg@10']:.4f}"
                )
        results["quality"] = quality
        targets: dict[str, bool] = {
            "speedup_at_least_3x": results["speedup"] >= SPEEDUP_TARGET,
            "pipeline_at_least_95pct_of_model": results["pipeline_over_model"] >= PIPELINE_TARGET,
        }
        if quality:
            today = quality["float, 256 (today)"]
            chosen = [quality[name] for name in quality if "default" in name]
            targets["ndcg_within_0.01"] = all(
                row[c]["ndcg@10"] >= today[c]["ndcg@10"] - QUALITY_TOLERANCE
                for row in chosen
                for c in ("cranfield", "lisa")
            )
        results["targets"] = targets
        print("\ntargets:")
        for name, ok in targets.items():
            print(f"{'PASS' if ok else 'FAIL'} {name}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    write_results(
        args.output,
        {
            "benchmark": "embed_throughput",
            "machine": facts,
            "params": vars(args) | {"output": str(args.output)},
            **results,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
