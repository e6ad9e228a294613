"""Chunk sizes in real word pieces, chunking throughput, and chunk-ID stability on Cranfield.

Writes the Cranfield corpus (BEIR format) as raw sources of a temporary wiki, twice: as plain
text files (one paragraph per document) and as Markdown files (a `## title` heading per
document). Chunks them with the core, then re-tokenizes every chunk with the embedding model's
tokenizer to check the budget for real rather than trusting the core's own count. Also counts
chunks that mix two documents: harmless for the budget, but a retrieval hit on such a chunk
points at two unrelated papers.

Throughput is reported as a ratio to tokenizing the same full texts with `encode_batch` in the
same run, since the machine is shared and absolute numbers drift.

Stability: one sentence near the start of every file is edited (seeded), the files are
re-chunked, and we count how many chunk IDs survive. IDs of chunks the edit did not touch
should all survive; anything less means an edit ripples through the rest of the file.

    .venv/bin/python bench/chunk_tokens.py [--corpus path/to/corpus.jsonl] [--files 50]

Exits 1 (with a FAIL line) when any chunk exceeds the token budget.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwiki.core import Config, load_config
from groundwiki.core.model.records import Chunk, Source
from groundwiki.core.sources.chunking import DEFAULT_POLICY
from groundwiki.core.sources.raw_sources import chunk_source, read_sources
from groundwiki.core.sources.tokens import load_tokenizer
from harness import RESULTS, machine_facts, repeat, write_results

DEFAULT_CORPUS = Path("/work/shared/ir/cranfield/corpus.jsonl")
SMALL = 32
FORMATS = ("txt", "md")
# Where a sentence ends in Cranfield's tokenized text (" . " style); used to pick what to edit.
_SENTENCE = re.compile(r"[^.!?]*[.!?](?=\s|$)")


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Edit:
    path: str  # relative to raw-sources
    line: int  # 1-based
    original: str  # the sentence before the edit
    edited: str


def read_corpus(path: Path) -> list[Doc]:
    docs: list[Doc] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                docs.append(Doc(str(row["_id"]), str(row.get("title") or ""), str(row["text"])))
    return docs


def group(docs: Sequence[Doc], files: int) -> list[Sequence[Doc]]:
    size = math.ceil(len(docs) / max(1, files))
    return [docs[i : i + size] for i in range(0, len(docs), size)]


def render(docs: Sequence[Doc], fmt: str) -> str:
    if fmt == "txt":
        # Documents without text stay out: an empty paragraph is no document in a text file.
        return "\n\n".join(d.text.strip() for d in docs if d.text.strip()) + "\n"
    parts = [f"## {d.title.strip() or f'document {d.id}'}\n\n{d.text.strip()}\n" for d in docs]
    return "\n".join(parts)


def write_wiki(root: Path, groups: list[Sequence[Doc]]) -> Path:
    (root / "wiki").mkdir(parents=True)
    (root / "wiki" / "index.md").write_text(
        "---\ntitle: Cranfield\nsummary: Chunking benchmark.\n---\n# Cranfield\n", encoding="utf-8"
    )
    for fmt in FORMATS:
        folder = root / "raw-sources" / fmt
        folder.mkdir(parents=True)
        for number, docs in enumerate(groups):
            (folder / f"cranfield-{number:03d}.{fmt}").write_text(
                render(docs, fmt), encoding="utf-8"
            )
    config_file = root / "mkdocs.yml"
    config_file.write_text(
        "site_name: cranfield\ndocs_dir: wiki\nplugins:\n  - groundwiki: {}\n", encoding="utf-8"
    )
    return config_file


def edit_near_start(path: Path, rel: str, rng: random.Random) -> Edit | None:
    """Insert a word into one of the first sentences of the first prose line, in place."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        sentences = [m for m in _SENTENCE.finditer(line) if len(m.group().split()) >= 3]
        if not sentences:
            continue
        match = rng.choice(sentences[:3])
        words = match.group().split(" ")
        at = rng.randrange(1, len(words))
        edited = " ".join(
            [*words[:at], rng.choice(("notably", "reportedly", "newly")), *words[at:]]
        )
        lines[number - 1] = line[: match.start()] + edited + line[match.end() :]
        path.write_text("\n".join(lines), encoding="utf-8")
        return Edit(rel, number, match.group().strip(), edited.strip())
    return None


def percentile(values: Sequence[int], q: float) -> int:
    """Nearest-rank percentile: always a value that occurred."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def crosses_document(chunk: Chunk) -> bool:
    """Whether a chunk holds the end of one Cranfield document and the start of another."""
    body = chunk.text.strip()
    return "\n## " in body if fmt_of(chunk.source) == "md" else "\n\n" in body


def token_stats(counts: Sequence[int], limit: int, chunks: Sequence[Chunk]) -> dict[str, Any]:
    if not counts:
        return {"chunks": 0}
    return {
        "chunks": len(counts),
        "max": max(counts),
        "p95": percentile(counts, 0.95),
        "median": percentile(counts, 0.5),
        "mean": statistics.fmean(counts),
        "min": min(counts),
        "under_32": sum(c < SMALL for c in counts) / len(counts),
        "over_limit": sum(c > limit for c in counts),
        "cross_document": sum(map(crosses_document, chunks)) / len(chunks),
    }


def fmt_of(path: str) -> str:
    return path.split("/", 1)[0]


@dataclass(frozen=True)
class Chunked:
    source: Source
    chunks: tuple[Chunk, ...]


def read_and_chunk(config: Config) -> dict[str, Chunked]:
    """What lint skips but the plugin and sidecar do: read every source, then chunk it."""
    return {path: Chunked(s, chunk_source(s)) for path, s in read_sources(config).items()}


def stability(
    before: dict[str, Chunked], after: dict[str, Chunked], edits: dict[str, Edit]
) -> dict[str, Any]:
    per_format: dict[str, dict[str, int]] = {
        f: {"chunks": 0, "survived": 0, "touched": 0, "untouched": 0, "untouched_survived": 0}
        for f in FORMATS
    }
    for path, source in before.items():
        tally = per_format[fmt_of(path)]
        new_ids = {c.id for c in after[path].chunks}
        edit = edits.get(path)
        for chunk in source.chunks:
            # A chunk is touched when it holds the edited sentence; every other chunk's text is
            # unchanged, so its ID (a hash of policy, path and text) has no reason to move.
            touched = edit is not None and (
                chunk.start_line <= edit.line <= chunk.end_line and edit.original in chunk.text
            )
            survived = chunk.id in new_ids
            tally["chunks"] += 1
            tally["survived"] += survived
            tally["touched"] += touched
            tally["untouched"] += not touched
            tally["untouched_survived"] += survived and not touched
    report: dict[str, Any] = {}
    for name, t in per_format.items():
        report[name] = {
            **t,
            "survival": t["survived"] / t["chunks"] if t["chunks"] else None,
            "untouched_survival": (
                t["untouched_survived"] / t["untouched"] if t["untouched"] else None
            ),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--files", type=int, default=50, help="raw-source files per format")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs (median)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", action="store_true", help="keep the temporary wikis")
    parser.add_argument("--output", type=Path, default=RESULTS / "chunk_tokens.json")
    args = parser.parse_args(argv)
    limit = DEFAULT_POLICY.max_tokens

    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    docs = read_corpus(args.corpus)
    groups = group(docs, args.files)
    print(f"corpus: {len(docs)} documents from {args.corpus}, in {len(groups)} files per format")
    tokenizer = load_tokenizer()

    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-chunk-tokens-"))
    try:
        config = load_config(write_wiki(workdir / "before", groups))
        chunk_times, sources = repeat(lambda: read_and_chunk(config), args.repeats)
        texts = [s.source.text for s in sources.values() if s.source.text]
        base_times, _ = repeat(lambda: tokenizer.encode_batch(texts), args.repeats)
        chunks: list[Chunk] = [c for s in sources.values() for c in s.chunks]
        real = [len(tokenizer.encode(c.text).ids) for c in chunks]

        chunk_s = statistics.median(chunk_times)
        base_s = statistics.median(base_times)
        megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        stats = {"all": token_stats(real, limit, chunks)}
        for f in FORMATS:
            pairs = [(c, n) for c, n in zip(chunks, real, strict=True) if fmt_of(c.source) == f]
            stats[f] = token_stats([n for _, n in pairs], limit, [c for c, _ in pairs])
        mismatches = [
            {"id": c.id, "source": c.source, "core": c.tokens, "real": n}
            for c, n in zip(chunks, real, strict=True)
            if c.tokens != n
        ]
        over = [
            {"id": c.id, "source": c.source, "lines": [c.start_line, c.end_line], "tokens": n}
            for c, n in zip(chunks, real, strict=True)
            if n > limit
        ]

        print(f"\nchunks: {len(chunks)} (policy {DEFAULT_POLICY.identity})")
        print(
            f"{'':5} {'chunks':>7} {'max':>5} {'p95':>5} {'median':>6} {'mean':>7} {'min':>4} "
            f"{'<32':>6} {'>1 doc':>7}"
        )
        for name, s in stats.items():
            print(
                f"{name:5} {s['chunks']:>7} {s['max']:>5} {s['p95']:>5} {s['median']:>6} "
                f"{s['mean']:>7.1f} {s['min']:>4} {100 * s['under_32']:5.1f}% "
                f"{100 * s['cross_document']:6.1f}%"
            )
        print(
            f"core's own token counts disagree with a fresh encode on {len(mismatches)} chunks"
            + (f" (e.g. {mismatches[0]})" if mismatches else "")
        )
        print(
            f"\nchunking (read_sources + chunk_source, {len(texts)} files, {megabytes:.2f} MB): {chunk_s:.3f} s "
            f"= {len(chunks) / chunk_s:.0f} chunks/s, {megabytes / chunk_s:.2f} MB/s"
        )
        print(
            f"baseline (encode_batch of the full texts): {base_s:.3f} s "
            f"= {megabytes / base_s:.2f} MB/s; chunking takes {chunk_s / base_s:.1f}x the baseline"
        )

        after_root = workdir / "after"
        shutil.copytree(workdir / "before", after_root)
        rng = random.Random(args.seed)
        edits: dict[str, Edit] = {}
        for path in sorted(sources):
            edit = edit_near_start(after_root / "raw-sources" / path, path, rng)
            if edit is not None:
                edits[path] = edit
        after = read_and_chunk(load_config(after_root / "mkdocs.yml"))
        stable = stability(sources, after, edits)
        print(f"\nstability: one sentence edited near the start of {len(edits)} files")
        for name, s in stable.items():
            print(
                f"{name:5} {s['survived']}/{s['chunks']} chunk IDs survive "
                f"({100 * s['survival']:.1f}%); {s['touched']} chunks held the edit; "
                f"untouched chunks surviving: {s['untouched_survived']}/{s['untouched']} "
                f"({100 * s['untouched_survival']:.1f}%)"
            )
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    failed = bool(over)
    write_results(
        args.output,
        {
            "benchmark": "chunk_tokens",
            "machine": facts,
            "params": {
                "corpus": str(args.corpus),
                "documents": len(docs),
                "files_per_format": len(groups),
                "repeats": args.repeats,
                "seed": args.seed,
                "policy": DEFAULT_POLICY.identity,
                "limit": limit,
            },
            "tokens": stats,
            "core_count_mismatches": len(mismatches),
            "core_count_mismatch_examples": mismatches[:10],
            "over_limit": over,
            "throughput": {
                "megabytes": megabytes,
                "chunk_s": chunk_s,
                "chunk_runs": chunk_times,
                "chunks_per_s": len(chunks) / chunk_s,
                "mb_per_s": megabytes / chunk_s,
                "baseline_s": base_s,
                "baseline_runs": base_times,
                "baseline_mb_per_s": megabytes / base_s,
                "ratio_to_baseline": chunk_s / base_s,
            },
            "stability": stable,
            "edits": [edit.__dict__ for edit in edits.values()][:5],
            "failed": failed,
        },
    )
    if failed:
        print(
            f"FAIL: {len(over)} chunks exceed {limit} word pieces "
            f"(largest {max(o['tokens'] for o in over)}): {over[:3]}"
        )
        return 1
    print(f"OK: every chunk is within {limit} word pieces")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
