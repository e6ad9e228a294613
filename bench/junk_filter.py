"""What the junk filter costs the chunker, and what it skips, on real text with junk mixed in.

Chunks the documents of a collection (LISA and Cranfield from ../shared/ir by default) as raw
sources, with seeded junk added (base64 attachments, hex dumps, binary read as Latin-1, runs
of whitespace) in the proportion `--junk` of documents, twice per round, in alternation:

  filter   the chunker as it is: every chunk measured (entropy, words, letters, encoded runs,
           controls), and units of junk kept apart from text;
  baseline the same chunker with the measuring and marking made no-ops, which is what the
           chunker cost before the filter.

Prints each arm's median and fastest seconds over the rounds and their ratios, then
how many chunks the filter would skip, by kind, and how many of them came from real documents
(the documents are text a careful writer would want found: that count should be 0).

    .venv/bin/python bench/junk_filter.py [--collection DIR ...] [--rounds 5] [--junk 0.05]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import time
from collections import Counter
from pathlib import Path

from groundwiki.core.config.junk_rules import DEFAULT_JUNK_RULES
from groundwiki.core.sources import chunking, hygiene
from groundwiki.core.sources.extracted import Extracted

ROOT = Path(__file__).resolve().parents[1]
SHARED_IR = ROOT.parent / "shared" / "ir"


def documents(folders: list[Path]) -> list[tuple[str, str]]:
    found = []
    for folder in folders:
        with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                doc = json.loads(line)
                text = f"{doc.get('title', '')}\n\n{doc['text']}\n"
                found.append((f"{folder.name}/{doc['_id']}.txt", text))
    return found


def junk(rng: random.Random, index: int) -> str:
    kind = index % 4
    if kind == 0:
        blob = base64.b64encode(rng.randbytes(rng.randint(500, 6000))).decode()
        return "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76)) + "\n"
    if kind == 1:
        return rng.randbytes(rng.randint(200, 3000)).hex() + "\n"
    if kind == 2:
        return bytes(b or 1 for b in rng.randbytes(rng.randint(200, 3000))).decode("latin-1")
    return "." + " " * rng.randint(1000, 20000) + "\n"


def chunk_all(texts: list[tuple[str, str]]) -> list[list[object]]:
    return [list(chunking.chunk_text(path, Extracted("text", text))) for path, text in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--collection",
        action="append",
        type=Path,
        help="a BEIR folder (default: ../shared/ir/lisa and cranfield)",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--junk", type=float, default=0.05, help="junk files per document")
    args = parser.parse_args()
    folders = args.collection or [SHARED_IR / "lisa", SHARED_IR / "cranfield"]
    texts = documents(folders)
    rng = random.Random(13)
    real = len(texts)
    texts += [(f"junk/{i}.txt", junk(rng, i)) for i in range(int(real * args.junk))]
    print(f"{real} documents and {len(texts) - real} junk files from {[f.name for f in folders]}")

    real_measure, real_may_hold = chunking.measure, chunking.may_hold_junk
    empty = hygiene.Measures(0.0, 0, 0.0, 0.0)

    def baseline() -> None:
        chunking.measure = lambda *args, **kwargs: empty  # type: ignore[assignment]
        chunking.may_hold_junk = lambda *args: False  # type: ignore[assignment]

    def restore() -> None:
        chunking.measure, chunking.may_hold_junk = real_measure, real_may_hold

    chunk_all(texts[:200])  # the tokenizer loaded and warm
    seconds: dict[str, list[float]] = {"filter": [], "baseline": []}
    cut: list[list[object]] = []
    for round_ in range(args.rounds):
        order = ("filter", "baseline") if round_ % 2 == 0 else ("baseline", "filter")
        for arm in order:
            (baseline if arm == "baseline" else restore)()
            started = time.perf_counter()
            result = chunk_all(texts)
            seconds[arm].append(time.perf_counter() - started)
            if arm == "filter":
                cut = result
        restore()
    chunks = sum(len(c) for c in cut)
    # The fastest round of each arm is the least disturbed by the machine's other work.
    for name, pick in (("median", statistics.median), ("fastest", min)):
        filtered, base = (pick(seconds[arm]) for arm in ("filter", "baseline"))
        print(f"chunker, {chunks} chunks, {name} of {args.rounds}: filter {filtered:.2f} s, "
              f"baseline {base:.2f} s, ratio {filtered / base:.3f}")  # fmt: skip

    skipped: Counter[str] = Counter()
    from_real: list[str] = []
    for (path, text), pieces in zip(texts, cut, strict=True):
        if not hygiene.may_hold_junk(text):
            continue  # the sources a wiki looks for junk in (Wiki.junk_chunks)
        for chunk in pieces:
            kind = hygiene.junk_kind(hygiene.chunk_measures(chunk), DEFAULT_JUNK_RULES)  # type: ignore[arg-type]
            if kind:
                skipped[kind] += 1
                if not path.startswith("junk/"):
                    from_real.append(f"{path}:{chunk.start_line}: {chunk.text[:60]!r}")  # type: ignore[attr-defined]
    junk_chunks = sum(len(c) for (p, _), c in zip(texts, cut, strict=True) if p.startswith("junk/"))
    print(f"skipped: {dict(skipped)}; junk files' chunks: {junk_chunks}, of them skipped: "
          f"{sum(skipped.values()) - len(from_real)}; real documents' chunks skipped: "
          f"{len(from_real)}")  # fmt: skip
    for line in from_real[:20]:
        print("  ", line)


if __name__ == "__main__":
    main()
