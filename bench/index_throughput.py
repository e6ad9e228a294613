"""What `groundwiki index` costs with the junk filter on, against the code before it, end to end.

Writes a wiki (one page, wiki/index.md) whose raw sources are the first --docs documents of a
BEIR collection (../shared/ir/lisa by default), one .txt file each (title, blank line, text),
plus --junk junk files per document (base64 attachments wrapped at 76, hex dumps, binary read as
Latin-1, runs of whitespace: the kinds of bench/junk_filter.py). Then, in a fresh copy of that
wiki each time, runs `groundwiki index` (compile, Whoosh, Chroma, and every page, passage and
chunk embedded: `embed_chunks: true`; the command returns once no vector is pending) as a
subprocess under each arm's code, the same interpreter and model cache for both:

  new       this tree (its plugins/ and sidecar/): every chunk measured (entropy, words,
            encoded runs), junk chunks neither embedded nor ranked, copies indexed once;
  baseline the tree --baseline names (../main by default): the code before the filter.

The arms alternate (new, baseline, baseline, new, ...) for --rounds runs each, since the
machine's other work drifts. Prints every run (wall seconds, chunks the sidecar reports, texts
embedded, chunks per second), each arm's median, and the ratio new/baseline of the median chunks
per second. Target (the issue): at least 0.95 on the clean corpus (--junk 0), where both arms
must index the same chunks. With --junk above 0 the new arm indexes fewer chunks (the junk is
cut but skipped), so compare its total seconds there, not its rate.

    .venv/bin/python bench/index_throughput.py [--docs 1500] [--rounds 2] [--junk 0.0]
        [--baseline ../main] [--model-cache DIR] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from harness import machine_facts, write_results
from junk_filter import junk  # the same kinds of junk, seeded alike

ROOT = Path(__file__).resolve().parents[1]
SHARED_IR = ROOT.parent / "shared" / "ir"
TARGET = 0.95
# `groundwiki index`'s last line: "...; 123 texts embedded (4.5 texts/s); 1 pages, 99 chunks in
# 12.3 s" (the pace is left out when nothing was embedded).
SUMMARY = re.compile(r"(\d+) texts embedded.*?; (\d+) pages, (\d+) chunks in ([\d.]+) s")


def write_wiki(root: Path, collection: Path, docs: int, junk_share: float, seed: int) -> int:
    """The wiki (mkdocs.yml, wiki/index.md, raw-sources/); returns the junk files written."""
    root.mkdir(parents=True)
    config = {
        "site_name": "index throughput",
        "docs_dir": "wiki",
        "plugins": [{"groundwiki": {"sidecar": {"embed_chunks": True}}}],
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (root / "wiki").mkdir()
    (root / "wiki" / "index.md").write_text(
        f"---\nsummary: The {collection.name} documents as raw sources.\n---\n# Home\n",
        encoding="utf-8",
    )
    folder = root / "raw-sources" / collection.name
    folder.mkdir(parents=True)
    with (collection / "corpus.jsonl").open(encoding="utf-8") as lines:
        for _, line in zip(range(docs), lines, strict=False):
            doc = json.loads(line)
            text = f"{doc.get('title', '')}\n\n{doc['text']}\n"
            (folder / f"{doc['_id']}.txt").write_text(text, encoding="utf-8")
    rng = random.Random(seed)
    extra = int(docs * junk_share)
    if extra:
        (root / "raw-sources" / "junk").mkdir()
    for number in range(extra):
        (root / "raw-sources" / "junk" / f"{number}.txt").write_text(
            junk(rng, number), encoding="utf-8"
        )
    return extra


def run_index(tree: Path, wiki: Path, model_cache: Path | None) -> dict[str, Any]:
    """`groundwiki index` on `wiki` under `tree`'s code: wall seconds and what it reported."""
    env = os.environ | {"PYTHONPATH": f"{tree / 'plugins'}{os.pathsep}{tree / 'sidecar'}"}
    if model_cache is not None:
        env["GROUNDWIKI_MODEL_CACHE"] = str(model_cache)
    command = [str(Path(sys.executable).with_name("groundwiki")), "-q", "-f"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, str(wiki / "mkdocs.yml"), "index"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    found = SUMMARY.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"groundwiki index failed ({done.returncode}):\n{done.stderr[-2000:]}")
    embedded, pages, chunks, reported = found.groups()
    # Read from the index once the command is done (no sidecar runs: offline status).
    status = subprocess.run(
        [*command, str(wiki / "mkdocs.yml"), "status", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    try:
        pending = json.loads(status.stdout).get("embedding_pending")
    except json.JSONDecodeError:
        pending = None
    return {
        "seconds": seconds,
        "reported_s": float(reported),
        "embedded": int(embedded),
        "pages": int(pages),
        "chunks": int(chunks),
        "chunks_per_s": int(chunks) / seconds,
        "pending_after": pending,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", type=Path, default=SHARED_IR / "lisa", help="a BEIR folder")
    parser.add_argument(
        "--docs", type=int, default=6000, help="documents made raw sources (LISA has 5,999)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="runs of each arm")
    parser.add_argument("--junk", type=float, default=0.0, help="junk files per document")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--baseline", type=Path, default=ROOT.parent / "main", help="the tree to compare with"
    )
    parser.add_argument(
        "--model-cache",
        type=Path,
        default=None,
        help="GROUNDWIKI_MODEL_CACHE for both arms (default: the environment's)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where the wikis are made")
    parser.add_argument("--output", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    trees = {"new": ROOT, "baseline": args.baseline.resolve()}
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-index-throughput-", dir=args.workdir))
    runs: list[dict[str, Any]] = []
    try:
        template = workdir / "template"
        extra = write_wiki(template, args.collection, args.docs, args.junk, args.seed)
        print(
            f"wiki: {args.docs} documents of {args.collection.name} and {extra} junk files; "
            f"new {trees['new']}, baseline {trees['baseline']}"
        )
        # new, baseline, baseline, new, ...: each arm as often first as second in a pair.
        order = [
            arm
            for pair in range(args.rounds)
            for arm in (("new", "baseline") if pair % 2 == 0 else ("baseline", "new"))
        ]
        for number, arm in enumerate(order, 1):
            wiki = workdir / f"run-{number}"
            shutil.copytree(template, wiki)
            try:
                run = {"arm": arm} | run_index(trees[arm], wiki, args.model_cache)
            finally:
                shutil.rmtree(wiki, ignore_errors=True)
            runs.append(run)
            print(
                f"run {number} {arm:8}: {run['seconds']:7.1f} s wall, {run['chunks']} chunks, "
                f"{run['embedded']} texts embedded, {run['chunks_per_s']:.2f} chunks/s, "
                f"{run['pending_after']} pending after"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    medians: dict[str, dict[str, float]] = {}
    for arm in trees:
        mine = [r for r in runs if r["arm"] == arm]
        medians[arm] = {
            key: statistics.median(r[key] for r in mine)
            for key in ("seconds", "chunks", "embedded", "chunks_per_s")
        }
        row = medians[arm]
        print(
            f"{arm:8} median of {len(mine)}: {row['seconds']:.1f} s, {row['chunks']:.0f} chunks, "
            f"{row['embedded']:.0f} texts embedded, {row['chunks_per_s']:.2f} chunks/s"
        )
    new, base = medians["new"], medians["baseline"]
    rate = new["chunks_per_s"] / base["chunks_per_s"]
    time_ratio = new["seconds"] / base["seconds"]
    print(f"ratio new/baseline: chunks/s {rate:.3f}, seconds {time_ratio:.3f}")
    same = {r["chunks"] for r in runs if r["arm"] == "new"} == {
        r["chunks"] for r in runs if r["arm"] == "baseline"
    }
    if args.junk == 0:
        print(f"{'PASS' if rate >= TARGET else 'FAIL'} chunks/s ratio >= {TARGET}")
        if not same:
            print("NOTE: the arms indexed different chunk counts on the clean corpus")
    else:
        print(
            f"junk: new indexed {base['chunks'] - new['chunks']:.0f} fewer chunks and "
            f"embedded {base['embedded'] - new['embedded']:.0f} fewer texts"
        )
    if args.output:
        write_results(
            args.output,
            {
                "benchmark": "index_throughput",
                "machine": facts,
                "params": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                "runs": runs,
                "medians": medians,
                "chunks_per_s_ratio": rate,
                "seconds_ratio": time_ratio,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
