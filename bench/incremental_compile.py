"""An edit's compile, lint and graph, kept across edits (the incremental core) against the same
work from scratch, in the same run: on the seeded synthetic wiki of lint_scale.py (10,001 pages
by default) or on a vault.

Each round edits one page (a sentence appended, or a new wikilink to another page, alternately),
then times the compile kept by a long-running process (`CompileCache.last`) with its lint
findings and graph, and the same from scratch (sharing only the parsed page files, as a rebuild
would with the build cache). Prints p50 and p95 of each and their ratio.

    .venv/bin/python bench/incremental_compile.py [--pages 10000] [--rounds 20]
    .venv/bin/python bench/incremental_compile.py --vault ../shared/vaults/obsidian-hub
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.lint.runner import collect_findings
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki
from groundwiki.core.wiki.graph import build_graph
from harness import RESULTS, machine_facts, p95, write_results
from lint_scale import generate_wiki


def vault_config(vault: Path, root: Path) -> Path:
    shutil.copytree(vault, root / "vault", ignore=shutil.ignore_patterns(".git", ".obsidian"))
    (root / "raw-sources").mkdir()
    config = {"site_name": "vault", "docs_dir": "vault", "plugins": [{"groundwiki": {}}]}
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root / "mkdocs.yml"


def everything(wiki: Any) -> int:
    """What a rebuild needs of a compile: its findings, its graph and backlinks."""
    findings = collect_findings(wiki)
    graph = build_graph(wiki)
    graph.backlinks()
    return len(findings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--vault", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-incremental-"))
    try:
        if args.vault is not None:
            config_file = vault_config(args.vault.resolve(), workdir)
            subject = f"vault {args.vault.name}"
        else:
            generate_wiki(workdir / "wiki-root", args.pages, args.seed, 0.0)
            config_file = workdir / "wiki-root" / "mkdocs.yml"
            subject = f"synthetic wiki, {args.pages} pages"
        config = load_config(config_file)
        cache = CompileCache()
        started = time.perf_counter()
        everything(compile_wiki(config, files=cache))
        print(f"{subject}: first compile, lint and graph {time.perf_counter() - started:.1f} s")
        pages = sorted(config.docs_dir.rglob("*.md"))
        step = max(1, len(pages) // (args.rounds + 2))
        kept_s: list[float] = []
        full_s: list[float] = []
        stale: list[int] = []
        for number in range(args.rounds):
            page, other = pages[(number + 1) * step], pages[(number + 2) * step]
            text = page.read_text(encoding="utf-8", errors="replace").rstrip("\n")
            if number % 2:
                text += f"\n\nSee also [[{other.stem}]].\n"
            else:
                text += f"\n\nA sentence added in round {number}.\n"
            page.write_text(text, encoding="utf-8")
            began = time.perf_counter()
            wiki = compile_wiki(config, files=cache)
            kept_findings = everything(wiki)
            kept_s.append(time.perf_counter() - began)
            stale.append(len(wiki.stale or ()))
            fresh = CompileCache(pages=cache.pages, sources=cache.sources, chunks=cache.chunks)
            began = time.perf_counter()
            full_findings = everything(compile_wiki(config, files=fresh))
            full_s.append(time.perf_counter() - began)
            if kept_findings != full_findings:
                raise SystemExit(
                    f"round {number}: {kept_findings} findings kept, {full_findings} from scratch"
                )
            print(
                f"  round {number + 1}: kept {kept_s[-1]:5.2f} s ({stale[-1]} stale pages), "
                f"from scratch {full_s[-1]:5.2f} s"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results = {
        "kept": {"runs": kept_s, "p50_s": statistics.median(kept_s), "p95_s": p95(kept_s)},
        "full": {"runs": full_s, "p50_s": statistics.median(full_s), "p95_s": p95(full_s)},
        "stale_pages": stale,
        "ratio_p50": statistics.median(full_s) / statistics.median(kept_s),
    }
    print(
        f"\nkept p50 {results['kept']['p50_s']:.2f} s, p95 {results['kept']['p95_s']:.2f} s; "
        f"from scratch p50 {results['full']['p50_s']:.2f} s: {results['ratio_p50']:.1f}x"
    )
    name = "incremental_compile_vault.json" if args.vault else "incremental_compile.json"
    write_results(
        args.output or RESULTS / name,
        {
            "benchmark": "incremental_compile",
            "machine": facts,
            "params": {"subject": subject, "rounds": args.rounds, "seed": args.seed},
            "results": results,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
