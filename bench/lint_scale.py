"""How `groundwiki lint` scales with the size of a wiki.

Generates seeded synthetic wikis (pages in sub-folders, wikilinks, Markdown links, aliases,
provenance comments into generated raw sources, a lock file, and a small rate of deliberate
faults so the finding paths run too), then times, per size and in the same run:

  baseline     read every page, parse its frontmatter with PyYAML's fastest safe loader
               (libyaml when present, as the core uses), markdown-it parse its body:
               the least any tool that understands these pages must do;
  compile+lint `compile_wiki` + `run_lint` in-process;
  cli          `groundwiki -q -f mkdocs.yml lint` end to end, as a user runs it.

The machine is shared and noisy, so results are medians of repeats and are reported as ratios
to the baseline measured alongside them rather than as absolute seconds.

    .venv/bin/python bench/lint_scale.py [--sizes 500,2000,10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import hashlib
import posixpath
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from groundwiki.core import Wiki, compile_wiki, load_config, run_lint
from groundwiki.core.evidence.citations import line_hash
from groundwiki.core.lint.rules import RULES
from groundwiki.core.sources.tokens import load_tokenizer
from harness import RESULTS, add_scale_options, machine_facts, repeat, write_results
from markdown_it import MarkdownIt

# A fair floor: the core parses with libyaml when PyYAML has it, so the baseline does too.
FAST_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

FOLDERS = ("concepts", "guides", "reference", "howto", "notes")
SYLLABLES = [
    "ka",
    "lo",
    "ri",
    "men",
    "tor",
    "va",
    "sel",
    "pri",
    "dun",
    "ex",
    "qua",
    "ni",
    "bor",
    "fa",
    "lis",
    "ter",
    "gon",
    "mi",
    "ra",
    "tu",
    "pel",
    "sor",
    "vin",
    "cha",
    "dro",
    "lum",
    "fen",
    "gar",
    "hol",
    "ist",
]
PAGES_PER_SOURCE = 5


# --- Synthetic wiki ------------------------------------------------------------------------


@dataclass
class PagePlan:
    index: int
    key: str
    folder: str
    title: str
    aliases: list[str]
    headings: list[str]

    @property
    def doc_path(self) -> str:
        return f"{self.folder}/{self.key}.md"


@dataclass
class GeneratedWiki:
    root: Path
    pages: int
    sources: int
    faults: Counter[str] = field(default_factory=Counter)


class Words:
    """Pseudo-words from syllables: deterministic, cheap, and no word list to ship."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vocabulary = sorted(
            {"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(2000)}
        )

    def word(self) -> str:
        return self.rng.choice(self.vocabulary)

    def words(self, n: int) -> str:
        return " ".join(self.word() for _ in range(n))

    def sentence(self, low: int = 6, high: int = 16) -> str:
        text = self.words(self.rng.randint(low, high))
        return text[0].upper() + text[1:] + "."


def source_lines(words: Words, rng: random.Random, number: int) -> list[str]:
    """A raw source of a few hundred words: headings, and paragraphs wrapped like prose files."""
    lines = [f"# Source {number}: {words.words(3)}", ""]
    for _ in range(rng.randint(3, 5)):
        lines += [f"## {words.words(rng.randint(2, 4)).capitalize()}", ""]
        for _ in range(rng.randint(1, 3)):
            paragraph = " ".join(words.sentence() for _ in range(rng.randint(3, 6))).split()
            width = rng.randint(10, 14)
            lines += [" ".join(paragraph[i : i + width]) for i in range(0, len(paragraph), width)]
            lines.append("")
    return lines


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generate_wiki(root: Path, n_pages: int, seed: int, fault_rate: float) -> GeneratedWiki:
    rng = random.Random(seed)
    words = Words(rng)
    root.mkdir(parents=True)
    (root / "mkdocs.yml").write_text(
        "site_name: synthetic\ndocs_dir: wiki\nplugins:\n  - groundwiki: {}\n", encoding="utf-8"
    )
    wiki_dir, raw_dir = root / "wiki", root / "raw-sources"
    faults: Counter[str] = Counter()

    n_sources = max(1, n_pages // PAGES_PER_SOURCE)
    sources: dict[str, list[str]] = {}
    for number in range(n_sources):
        rel = f"{FOLDERS[number % len(FOLDERS)]}/src-{number:05d}.md"
        lines = source_lines(words, rng, number)
        sources[rel] = lines
        path = raw_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
    source_names = sorted(sources)

    plans: list[PagePlan] = []
    for i in range(n_pages):
        first, second = words.word(), words.word()
        aliases = [f"{words.word()}-{i}" for _ in range(rng.choice((0, 0, 0, 0, 1, 1, 2)))]
        headings = [words.words(rng.randint(2, 4)).capitalize() for _ in range(rng.randint(2, 3))]
        plans.append(
            PagePlan(
                i,
                f"{first}-{second}-{i}",
                FOLDERS[rng.randrange(len(FOLDERS))],
                f"{first.capitalize()} {second} {i}",
                aliases,
                headings,
            )
        )

    lock_rows: list[str] = []

    def faulty() -> bool:
        return rng.random() < fault_rate

    def wikilink(target: PagePlan) -> str:
        if faulty():
            faults["broken-link"] += 1
            return f"[[{target.key}x]]"
        roll = rng.random()
        if roll < 0.15 and target.aliases:
            return f"[[{rng.choice(target.aliases)}]]"
        if roll < 0.25:
            return f"[[{target.key}#{rng.choice(target.headings)}]]"
        if roll < 0.35:
            return f"[[{target.key}|{words.words(2)}]]"
        return f"[[{target.key}]]"

    def citation(plan: PagePlan) -> str:
        name = rng.choice(source_names)
        lines = sources[name]
        start = rng.randint(3, len(lines) - 6)
        end = start + rng.randint(0, 4)
        cited = "\n".join(lines[start - 1 : end])
        spec = f"raw-sources/{name}#L{start}-L{end}"
        if faulty():
            kind = rng.choice(("missing-source", "invalid-citation", "drifted", "moved"))
            faults[kind] += 1
            if kind == "missing-source":
                return f"raw-sources/{name.replace('src-', 'gone-')}#L{start}-L{end}"
            if kind == "invalid-citation":
                return f"raw-sources/{name}#L{len(lines) + 50}-L{len(lines) + 55}"
            # A lock hash that matches no lines (drift) or the lines one below (a move), so
            # the lock rules have to scan the source for the locked text.
            cited = "drifted" if kind == "drifted" else "\n".join(lines[start : end + 1])
        first = line_hash(cited.split("\n", 1)[0])
        lock_rows.append(f"{plan.key}\t{spec}\t{sha256_text(cited)}\t{first}")
        return spec

    for plan in plans:
        others = [rng.choice(plans) for _ in range(rng.randint(4, 9))]
        refs = [p.key for p in rng.sample(plans, k=min(len(plans), rng.randint(0, 3)))]
        front: dict[str, Any] = {
            "title": plan.title,
            "summary": words.sentence(5, 12),
            "tags": sorted({words.word() for _ in range(rng.randint(1, 4))}),
            "refs": refs,
        }
        if plan.aliases:
            front["aliases"] = plan.aliases
        body = [f"# {plan.title}", ""]
        for section, heading in enumerate(["", *plan.headings]):
            if heading:
                body += [f"## {heading}", ""]
            for _ in range(rng.randint(1, 2)):
                sentences = [words.sentence() for _ in range(rng.randint(3, 6))]
                for _ in range(rng.randint(1, 3)):
                    if others:
                        at = rng.randrange(len(sentences))
                        sentences[at] = sentences[at][:-1] + f" see {wikilink(others.pop())}."
                if rng.random() < 0.3:
                    target = rng.choice(plans)
                    href = posixpath.relpath(target.doc_path, posixpath.dirname(plan.doc_path))
                    sentences.append(f"Compare [{words.word()}]({href}).")
                body.append(" ".join(sentences))
                if rng.random() < 0.5:
                    body[-1] += f" <!-- from: {citation(plan)} -->"
                body.append("")
            if section == 0:
                body += [f"<!-- from: {citation(plan)} -->", ""]
        text = "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + "\n".join(body)
        path = wiki_dir / plan.doc_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    overview = "\n".join(f"- [[{p.key}]]" for p in plans[:20])
    (wiki_dir / "index.md").write_text(
        "---\ntitle: Synthetic wiki\nsummary: Generated for the lint benchmark.\n"
        f"kind: overview\n---\n# Synthetic wiki\n\n{overview}\n",
        encoding="utf-8",
    )
    (root / "wiki.lock").write_text(
        "# synthetic lock\n" + "".join(f"{row}\n" for row in sorted(set(lock_rows))),
        encoding="utf-8",
    )
    return GeneratedWiki(root, n_pages + 1, n_sources, faults)


# --- Measurements --------------------------------------------------------------------------


def baseline_pass(docs: Path) -> int:
    md = MarkdownIt("commonmark")
    count = 0
    for path in sorted(docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, front, body = text.split("---\n", 2)
        yaml.load(front, Loader=FAST_SAFE_LOADER)
        md.parse(body)
        count += 1
    return count


@dataclass
class CompileRun:
    wiki: Wiki
    findings: int
    pages_s: float
    sources_s: float
    lint_s: float


def compile_and_lint(config_file: Path) -> CompileRun:
    marks: dict[str, float] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if done == total:
            marks[stage] = time.perf_counter()

    start = time.perf_counter()
    wiki = compile_wiki(load_config(config_file), progress=progress)
    compiled = time.perf_counter()
    report = run_lint(wiki)
    linted = time.perf_counter()
    pages_done = marks.get("pages", start)
    return CompileRun(
        wiki,
        len(report.findings),
        pages_done - start,
        # Includes reading the lock and building the link resolver, both small.
        compiled - pages_done,
        linted - compiled,
    )


def rule_times(wiki: Wiki) -> dict[str, float]:
    times: dict[str, float] = {}
    for name, rule in RULES.items():
        start = time.perf_counter()
        for _ in rule.check(wiki):
            pass
        times[name] = time.perf_counter() - start
    return times


def cli_command(groundwiki: Path, config_file: Path, *args: str) -> Callable[[], int]:
    def run() -> int:
        done = subprocess.run(
            [str(groundwiki), "-q", "-f", str(config_file), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0, 1):  # 1 is "lint found errors", which the faults ensure
            raise RuntimeError(f"groundwiki exited {done.returncode}: {done.stderr.strip()}")
        return done.returncode

    return run


def per_page(seconds: float, pages: int) -> float:
    return seconds / max(pages, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_scale_options(parser, repeats=3, long_run=20.0, unit="run")
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=0.02,
        help="share of links and citations made broken, missing, out of range, drifted or moved",
    )
    parser.add_argument("--no-cli", action="store_true", help="skip the end-to-end CLI runs")
    parser.add_argument(
        "--groundwiki",
        type=Path,
        default=Path(sys.executable).with_name("groundwiki"),
        help="the groundwiki executable (default: next to this Python)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated wikis")
    parser.add_argument("--output", type=Path, default=RESULTS / "lint_scale.json")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    # Loaded once up front so the first size does not pay one-off costs the others do not.
    load_tokenizer()

    startup_s = None
    if not args.no_cli:
        startup_times, _ = repeat(
            lambda: (
                subprocess.run(
                    [str(args.groundwiki), "rules"], capture_output=True, check=True
                ).returncode
            ),
            max(args.repeats, 3),
            args.long_run,
        )
        startup_s = statistics.median(startup_times)
        print(f"CLI startup (`groundwiki rules`, imports only): {startup_s:.3f} s")

    results: list[dict[str, Any]] = []
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-lint-scale-"))
    try:
        for size in sizes:
            root = workdir / f"wiki-{size}"
            started = time.perf_counter()
            generated = generate_wiki(root, size, args.seed, args.fault_rate)
            generate_s = time.perf_counter() - started
            config_file = root / "mkdocs.yml"
            print(
                f"\n== {generated.pages} pages, {generated.sources} raw sources "
                f"(generated in {generate_s:.1f} s at {root}) =="
            )

            base_times, _ = repeat(
                lambda root=root: baseline_pass(root / "wiki"), args.repeats, args.long_run
            )
            core_times, run = repeat(
                lambda config_file=config_file: compile_and_lint(config_file),
                args.repeats,
                args.long_run,
            )
            cli_times: list[float] = []
            if not args.no_cli:
                cli_times, _ = repeat(
                    cli_command(args.groundwiki, config_file, "lint"),
                    args.repeats,
                    args.long_run,
                )
            rules = rule_times(run.wiki)
            wiki = run.wiki
            by_rule = Counter(f.rule for f in run_lint(wiki).findings)

            base = statistics.median(base_times)
            core = statistics.median(core_times)
            cli = statistics.median(cli_times) if cli_times else None
            row: dict[str, Any] = {
                "pages": len(wiki.all_pages),
                "raw_sources": len(wiki.sources),
                "chunks": len(wiki.chunks),
                "links": sum(len(p.outgoing) for p in wiki.all_pages),
                "citations": sum(len(p.citations) for p in wiki.all_pages),
                "findings": run.findings,
                "findings_by_rule": dict(sorted(by_rule.items())),
                "faults_planted": dict(sorted(generated.faults.items())),
                "generate_s": generate_s,
                "baseline_s": base,
                "baseline_runs": base_times,
                "compile_lint_s": core,
                "compile_lint_runs": core_times,
                "ratio_to_baseline": core / base,
                "ms_per_page": 1000 * per_page(core, len(wiki.all_pages)),
                "baseline_ms_per_page": 1000 * per_page(base, len(wiki.all_pages)),
                "split_s": {
                    "pages": run.pages_s,
                    "sources": run.sources_s,
                    "lint": run.lint_s,
                },
                "pages_stage_ratio_to_baseline": run.pages_s / base,
                "rule_s": dict(sorted(rules.items(), key=lambda kv: -kv[1])),
                "cli_s": cli,
                "cli_runs": cli_times,
                "cli_ratio_to_baseline": cli / base if cli else None,
            }
            results.append(row)

            total = run.pages_s + run.sources_s + run.lint_s
            print(
                f"pages {row['pages']}, raw sources {row['raw_sources']}, chunks {row['chunks']}, "
                f"links {row['links']}, citations {row['citations']}, findings {row['findings']}"
            )
            print(f"findings by rule: {row['findings_by_rule']}")
            print(
                f"baseline (read + YAML + markdown-it):           {base:7.3f} s  "
                f"({row['baseline_ms_per_page']:.2f} ms/page, runs {len(base_times)})"
            )
            print(
                f"compile_wiki + run_lint:                        {core:7.3f} s  "
                f"({row['ms_per_page']:.2f} ms/page, {core / base:.2f}x baseline, "
                f"runs {len(core_times)})"
            )
            if cli is not None:
                print(
                    f"groundwiki -q lint (CLI, end to end):           {cli:7.3f} s  "
                    f"({cli / base:.2f}x baseline, runs {len(cli_times)})"
                )
            print(
                "split of the last in-process run: "
                + ", ".join(
                    f"{name} {seconds:.3f} s ({100 * seconds / total:.0f}%)"
                    for name, seconds in row["split_s"].items()
                )
                + f"; pages stage alone {row['pages_stage_ratio_to_baseline']:.2f}x baseline"
            )
            slowest = list(row["rule_s"].items())[:4]
            print("slowest rules: " + ", ".join(f"{n} {s * 1000:.0f} ms" for n, s in slowest))
            if not args.keep:
                shutil.rmtree(root)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    scaling: dict[str, Any] = {}
    if len(results) > 1:
        small, large = results[0], results[-1]

        def factor(key: str) -> float | None:
            if small.get(key) is None or large.get(key) is None:
                return None
            return per_page(large[key], large["pages"]) / per_page(small[key], small["pages"])

        scaling = {
            "from_pages": small["pages"],
            "to_pages": large["pages"],
            "baseline": factor("baseline_s"),
            "compile_lint": factor("compile_lint_s"),
            "cli": factor("cli_s"),
            "lint_stage": (
                per_page(large["split_s"]["lint"], large["pages"])
                / per_page(small["split_s"]["lint"], small["pages"])
            ),
        }
        print(
            f"\nscaling (time per page at {large['pages']} / at {small['pages']} pages; "
            "1.0 = linear):"
        )
        for name in ("baseline", "compile_lint", "cli", "lint_stage"):
            if scaling[name] is not None:
                print(f"  {name:13} {scaling[name]:.2f}")

    print("\nsummary:")
    print(
        f"{'pages':>7} {'sources':>7} {'chunks':>7} {'findings':>8} {'base s':>8} "
        f"{'core s':>8} {'ratio':>6} {'ms/page':>8} {'cli s':>8}"
    )
    for row in results:
        cli_text = f"{row['cli_s']:8.2f}" if row["cli_s"] is not None else f"{'-':>8}"
        print(
            f"{row['pages']:>7} {row['raw_sources']:>7} {row['chunks']:>7} {row['findings']:>8} "
            f"{row['baseline_s']:8.2f} {row['compile_lint_s']:8.2f} "
            f"{row['ratio_to_baseline']:6.2f} {row['ms_per_page']:8.2f} {cli_text}"
        )

    write_results(
        args.output,
        {
            "benchmark": "lint_scale",
            "machine": facts,
            "params": {
                "sizes": sizes,
                "repeats": args.repeats,
                "long_run_s": args.long_run,
                "seed": args.seed,
                "fault_rate": args.fault_rate,
                "pages_per_source": PAGES_PER_SOURCE,
            },
            "cli_startup_s": startup_s,
            "sizes": results,
            "scaling": scaling,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
