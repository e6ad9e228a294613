"""What the sidecar's indexes cost: cold indexing, embedding, a warm restart, and an edit.

Generates the seeded synthetic wiki of lint_scale.py (2,000 pages by default) plus a corpus of
raw sources sized to give about --chunks raw-source chunks (20,000 by default), then, in one
run and on the real components (Whoosh, Chroma on disk, the default ONNX model):

  lexical   Whoosh indexing every page and chunk into a fresh index, against SQLite FTS5
            (porter tokenizer) indexing the same text in the same run: documents per second;
  cold      a first `SidecarService.start` (compile, Whoosh, the store): seconds until the
            lexical and token lanes answer;
  embed     the sidecar's embedding pipeline (store, cache, model, Chroma, manifest) over the
            pending pages, page passages and chunks, against the model alone
            (`MiniLMOnnx.embed`) on the same texts: texts per second and the ratio (target: at
            least 90%);
  restart   a second start with nothing changed: seconds until ready, in-process and as a
            `groundwiki index` subprocess (target: under 5 s), and the texts it embedded (0);
  edit      --edits single-page summary edits with the watcher running: seconds from the write
            until the lexical lane finds the new word, until the token lane's snapshot has it,
            and until the page's new vector is in Chroma (target: p95 under 1 s in every lane).

--embed sample embeds only --sample chunks (and every page), for a quicker run; the restart
and edit figures are then taken with the other chunks still pending, so the edits compete with
the background embedding for both cores (the semantic lane is `warming` and left out of
queries meanwhile). --embed all (the default) embeds everything first: steady state.

    .venv/bin/python bench/sidecar_scale.py [--pages 2000] [--chunks 20000] [--embed all]
"""

from __future__ import annotations

import argparse
import logging
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from groundwiki.core import compile_wiki
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from groundwiki_sidecar.embedding.embedders import MiniLMOnnx
from groundwiki_sidecar.index.documents import RecordCache
from groundwiki_sidecar.index.whoosh_index import LexicalIndex
from harness import RESULTS, machine_facts, write_results
from lint_scale import Words, generate_wiki

RESTART_TARGET_S = 5.0
EDIT_TARGET_S = 1.0
EMBED_TARGET = 0.90


def add_corpus(root: Path, chunks: int, seed: int) -> int:
    """Raw sources of plain paragraphs, enough for about `chunks` chunks; returns files made."""
    rng = random.Random(seed + 1)
    words = Words(rng)
    folder = root / "raw-sources" / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    # About one chunk per paragraph of 40-70 pseudo-words (measured: 1.1 on this generator).
    paragraphs_per_file = 10
    files = max(1, round(chunks / paragraphs_per_file / 1.1))
    for number in range(files):
        text = [f"# Corpus document {number}", ""]
        for _ in range(paragraphs_per_file):
            text += [" ".join(words.sentence(8, 14) for _ in range(rng.randint(4, 6))), ""]
        (folder / f"doc-{number:05}.md").write_text("\n".join(text), encoding="utf-8")
    return files


def sidecar_wiki(root: Path, pages: int, chunks: int, seed: int, sidecar: Any = None) -> Path:
    """The seeded synthetic wiki with about `chunks` raw-source chunks, its mkdocs.yml naming
    the plugin (with these sidecar settings); returns the mkdocs.yml."""
    generate_wiki(root, pages, seed, 0.0)
    add_corpus(root, chunks, seed)
    config_file = root / "mkdocs.yml"
    data = yaml.safe_load(config_file.read_text())
    data["plugins"] = [{"groundwiki": {"sidecar": sidecar} if sidecar else {}}]
    config_file.write_text(yaml.safe_dump(data))
    return config_file


def fts5_index(path: Path, pages: list[Any], chunks: list[Any]) -> float:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE VIRTUAL TABLE pages USING fts5(key, title, summary, tags, body, tokenize='porter')"
    )
    db.execute("CREATE VIRTUAL TABLE chunks USING fts5(id UNINDEXED, text, tokenize='porter')")
    started = time.perf_counter()
    with db:
        db.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?, ?)",
            [(p.key, p.title, p.summary, " ".join(p.tags), p.body) for p in pages],
        )
        db.executemany("INSERT INTO chunks VALUES (?, ?)", [(c.id, c.text) for c in chunks])
    elapsed = time.perf_counter() - started
    db.close()
    return elapsed


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def wait(condition: Any, timeout: float = 120.0) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if condition():
            return time.perf_counter() - started
        time.sleep(0.005)
    raise TimeoutError("the edit did not arrive")


def measure_edits(service: SidecarService, root: Path, edits: int) -> dict[str, Any]:
    from whoosh.qparser import QueryParser

    indexer = service.indexer
    keys = sorted(indexer.snapshot.pages)[1 : edits + 1]  # index.md aside
    lanes: dict[str, list[float]] = {"lexical": [], "token": [], "semantic": []}
    for number, key in enumerate(keys):
        page = indexer.snapshot.wiki.pages[key]
        word = f"zqxedit{number}"
        text = page.path.read_text(encoding="utf-8")
        edited = text.replace("summary: ", f"summary: {word} ", 1)
        started = time.perf_counter()
        page.path.write_text(edited, encoding="utf-8")

        def lexical(key: str = key, word: str = word) -> bool:
            with indexer.lexical.pages.searcher() as searcher:
                query = QueryParser("summary", indexer.lexical.pages.schema).parse(word)
                return any(hit["id"] == key for hit in searcher.search(query, limit=3))

        def token(key: str = key, word: str = word) -> bool:
            snapshot = indexer.snapshot
            return snapshot is not None and word in snapshot.pages[key].summary

        def semantic(key: str = key, word: str = word) -> bool:
            snapshot = indexer.snapshot
            if snapshot is None or word not in snapshot.pages[key].summary:
                return False
            return f"page:{key}" not in {i for i, _, _ in indexer.store.pending(10_000)}

        for lane, check in (("token", token), ("lexical", lexical), ("semantic", semantic)):
            wait(check)
            lanes[lane].append(time.perf_counter() - started)
        time.sleep(0.3)
    return {
        lane: {
            "p50_s": statistics.median(times),
            "p95_s": percentile(times, 0.95),
            "max_s": max(times),
            "edits": len(times),
        }
        for lane, times in lanes.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--embed", choices=["all", "sample"], default="all")
    parser.add_argument(
        "--sample", type=int, default=1000, help="chunks embedded with --embed sample"
    )
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", action="store_true", help="keep the generated wiki")
    parser.add_argument("--output", type=Path, default=RESULTS / "sidecar_scale.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-sidecar-scale-"))
    root = workdir / "wiki"
    results: dict[str, Any] = {}
    try:
        generated = generate_wiki(root, args.pages, args.seed, 0.0)
        add_corpus(root, args.chunks, args.seed)
        config_file = root / "mkdocs.yml"
        data = yaml.safe_load(config_file.read_text())
        data["plugins"] = [{"groundwiki": {"sidecar": {"debounce_s": 0.2}}}]
        config_file.write_text(yaml.safe_dump(data))
        sidecar = load_sidecar(config_file)
        wiki = compile_wiki(sidecar.config)
        # The records as the sidecar makes them: with its page-vector text (records() alone
        # gives summary-only page texts, which made the model-alone figure too fast).
        found = RecordCache(lead=sidecar.settings.page_vector == "lead").all(wiki)
        pages, chunks = found.pages, found.chunks
        tokens = [c.tokens for c in wiki.chunks.values()]
        print(
            f"wiki: {len(pages)} pages, {len(wiki.sources)} raw sources, {len(chunks)} chunks "
            f"(mean {statistics.mean(tokens):.0f} word pieces, max {max(tokens)})"
        )
        results["wiki"] = {
            "pages": len(pages),
            "raw_sources": len(wiki.sources),
            "chunks": len(chunks),
            "chunk_tokens_mean": statistics.mean(tokens),
            "chunk_tokens_max": max(tokens),
            "generated_pages": generated.pages,
        }

        # lexical: Whoosh against FTS5 on the same records
        docs = len(pages) + len(chunks)
        started = time.perf_counter()
        LexicalIndex(workdir / "whoosh-cold").apply(
            pages.values(), [], chunks.values(), [], fresh=True
        )
        whoosh_s = time.perf_counter() - started
        fts_s = fts5_index(workdir / "fts5.sqlite", list(pages.values()), list(chunks.values()))
        results["lexical"] = {
            "documents": docs,
            "whoosh_s": whoosh_s,
            "whoosh_docs_per_s": docs / whoosh_s,
            "fts5_s": fts_s,
            "fts5_docs_per_s": docs / fts_s,
            "whoosh_over_fts5_time": whoosh_s / fts_s,
        }
        print(
            f"lexical: Whoosh {whoosh_s:.1f} s ({docs / whoosh_s:,.0f} docs/s), "
            f"FTS5 {fts_s:.2f} s ({docs / fts_s:,.0f} docs/s); Whoosh takes "
            f"{whoosh_s / fts_s:.1f}x FTS5's time"
        )

        # cold start of the sidecar (lexical and token lanes ready)
        started = time.perf_counter()
        service = SidecarService(sidecar)
        service.indexer.check_vectors()
        cold = service.sync("bench cold start")
        service.indexer.save_cache()
        cold_s = time.perf_counter() - started
        results["cold_start"] = {"seconds": cold_s, "added": cold.added}
        print(f"cold start: ready in {cold_s:.1f} s ({cold.added} records)")

        # embedding: pipeline against the model alone, same texts
        pending = service.indexer.store.pending_count()
        limit = pending if args.embed == "all" else len(pages) + args.sample
        started = time.perf_counter()
        embedded = service.indexer.embed_pending(limit=limit)
        pipeline_s = time.perf_counter() - started
        done = service.indexer.store.vector_ids()
        page_texts = [pages[i[5:]].embed_text for i in sorted(done) if i.startswith("page:")]
        chunk_texts = service.indexer.store.chunk_texts(
            [i[6:] for i in sorted(done) if i.startswith("chunk:")]
        )
        other = list(chunk_texts.values())
        other += [
            found.passages[i[8:]].embed_text
            for i in sorted(done)
            if i.startswith("passage:") and i[8:] in found.passages
        ]
        # The model alone on an even sample when everything was embedded: the same mix of
        # short page texts and long chunks, in a quarter of the time.
        step = max(1, (len(page_texts) + len(other)) // 4000)
        page_texts, other = page_texts[::step], other[::step]
        texts = page_texts + other
        # The pipeline's settings: its batch size, passages and chunks cut as it cuts them.
        settings = sidecar.settings
        model = MiniLMOnnx(batch_size=settings.embed_batch, passage_tokens=settings.passage_tokens)
        model.load()
        started = time.perf_counter()
        model.embed(page_texts)
        for _ in model.embed_iter(other, passages=True):
            pass
        raw_s = time.perf_counter() - started
        ratio = (embedded / pipeline_s) / (len(texts) / raw_s)
        results["embed"] = {
            "mode": args.embed,
            "texts": embedded,
            "pipeline_s": pipeline_s,
            "pipeline_texts_per_s": embedded / pipeline_s,
            "model_s": raw_s,
            "model_texts": len(texts),
            "model_texts_per_s": len(texts) / raw_s,
            "pipeline_over_model": ratio,
            "still_pending": service.indexer.store.pending_count(),
        }
        print(
            f"embed: pipeline {embedded / pipeline_s:.1f} texts/s, model alone "
            f"{len(texts) / raw_s:.1f} texts/s on {len(texts)} of the same texts: {ratio:.1%} "
            f"({results['embed']['still_pending']} still pending)"
        )
        service.stop()

        # warm restart, nothing changed
        started = time.perf_counter()
        service = SidecarService(sidecar)
        warm = service.start(watch=False)
        restart_s = time.perf_counter() - started
        service.stop()
        results["restart"] = {
            "in_process_s": restart_s,
            "changed": warm.changed,
            "vectors_pending": results["embed"]["still_pending"],
        }
        if results["embed"]["still_pending"] == 0:
            # `groundwiki index` would embed whatever is pending: timed only when nothing is.
            started = time.perf_counter()
            done_cli = subprocess.run(
                [
                    str(Path(sys.executable).with_name("groundwiki")),
                    "-q",
                    "-f",
                    str(config_file),
                    "index",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            results["restart"]["groundwiki_index_s"] = time.perf_counter() - started
            results["restart"]["groundwiki_index_exit"] = done_cli.returncode
        print(
            f"restart, nothing changed: ready in {restart_s:.2f} s in-process ({warm.changed} "
            f"records changed); `groundwiki index` "
            f"{results['restart'].get('groundwiki_index_s', float('nan')):.2f} s"
        )

        # edit to searchable, watcher running
        service = SidecarService(sidecar)
        service.start(watch=True)
        calls_before = service.indexer.embedder.calls if service.indexer.embedder else 0
        results["edit"] = measure_edits(service, root, args.edits)
        results["restart"]["texts_embedded_after_restart"] = calls_before
        service.stop()
        for lane, row in results["edit"].items():
            print(
                f"edit -> {lane:8}: p50 {row['p50_s']:.3f} s, p95 {row['p95_s']:.3f} s, "
                f"max {row['max_s']:.3f} s ({row['edits']} edits)"
            )

        targets = {
            "embed_at_least_90pct": results["embed"]["pipeline_over_model"] >= EMBED_TARGET,
            "restart_under_5s": results["restart"]["in_process_s"] < RESTART_TARGET_S,
            "edit_p95_under_1s": all(r["p95_s"] < EDIT_TARGET_S for r in results["edit"].values()),
        }
        results["targets"] = targets
        print("\ntargets:")
        for name, ok in targets.items():
            print(f"{'PASS' if ok else 'FAIL'} {name}")
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"kept {workdir}")
    write_results(
        args.output,
        {
            "benchmark": "sidecar_scale",
            "machine": facts,
            "params": vars(args) | {"output": str(args.output)},
            **results,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
