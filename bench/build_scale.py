"""What the groundwiki plugin costs an `mkdocs build` with mkdocs-material, by wiki size.

Generates the same seeded synthetic wikis as lint_scale.py (with no deliberate faults: a clean
wiki), then times `mkdocs build -q` as a subprocess, per size and in the same run, in three
configurations written as mkdocs.yml files over the same docs:

  a   plain       theme material, `plugins: [search]`, an explicit one-entry nav;
  a'  plain+links a over a copy of the docs whose wikilinks are written as ordinary Markdown
                  links to the same pages: the site a writer gets without groundwiki's link
                  syntax, and the baseline of the targets (issue 16);
  b   plugin      theme material, `plugins: [search, groundwiki]`, nav left to the plugin (it
                  gives a large wiki a compact nav by itself), every output on, built cold:
                  the build cache in .groundwiki/ is deleted before each run, as on a fresh CI
                  machine;
  bw  plugin warm b again with the build cache of an earlier, untimed build of the same files:
                  a second local build, or a CI job that restored .groundwiki/.

After each plugin build the plugin's own timings (.groundwiki/build/build-phases.json: compile,
MkDocs' markdown, templates, search, writing, the raw-source worker) are kept, and the medians
are printed per phase, so the next step is visible.

Every run builds into a fresh site directory, so no run pays for cleaning another's output.
The plugin also writes pages of its own (raw sources, redirects, generated pages), so besides
seconds per wiki page the HTML files of each site are counted and the overhead is also given
per rendered HTML page. An untimed warm-up build of a tiny wiki in each configuration comes
first, so the first size does not pay one-off costs (bytecode, disk cache) the others do not.

Targets (issue 16), printed as PASS/FAIL lines: a cold build at most 1.25x a' at every size,
a 10,000-page cold build under 100 s, a warm build at most 1.10x a'. They are reported, not
enforced: the exit status is 0 whenever every build succeeded.

    .venv/bin/python bench/build_scale.py [--sizes 2000,10000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import posixpath
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from harness import RESULTS, add_scale_options, machine_facts, repeat, write_results
from lint_scale import PAGES_PER_SOURCE, generate_wiki
from markdown.extensions.toc import slugify as toc_slugify

FAULT_RATE = 0.0  # a clean wiki: the build benchmark is not about lint findings
WARMUP_PAGES = 20
COLD_TARGET = 1.25  # a cold build with the plugin, against a'
WARM_TARGET = 1.10  # a build with the cache of an earlier one, against a'
TARGET_PAGES = 10_000
TARGET_SECONDS = 100.0  # 10,000 pages with the plugin, cold
SMALL_NAV = ["index.md"]


@dataclass(frozen=True)
class Variant:
    key: str
    label: str
    file: str
    plugin: bool
    small_nav: bool
    warm: bool = False


VARIANTS = (
    Variant("a", "a  plain (search, small nav)", "mkdocs-plain.yml", False, True),
    Variant("a_md", "a' plain, Markdown links", "mkdocs-plain-links.yml", False, True),
    Variant("b", "b  plugin, cold", "mkdocs-plugin.yml", True, False),
    Variant("b_warm", "bw plugin, warm build cache", "mkdocs-plugin.yml", True, False, True),
)
PHASES = Path(".groundwiki/build/build-phases.json")


def groundwiki_options(config_file: Path) -> dict[str, Any]:
    """The groundwiki plugin options the generator wrote, whatever they are."""
    data = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
    for entry in data.get("plugins") or []:
        if isinstance(entry, dict) and "groundwiki" in entry:
            return dict(entry["groundwiki"] or {})
        if entry == "groundwiki":
            return {}
    raise RuntimeError(f"{config_file}: no groundwiki plugin block")


def write_configs(root: Path) -> dict[str, Path]:
    """One mkdocs.yml per variant, next to the generated one (the plugin resolves raw sources
    and the lock from the config file's folder) and over the same docs."""
    generated = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8")) or {}
    options = groundwiki_options(root / "mkdocs.yml")
    paths: dict[str, Path] = {}
    for variant in VARIANTS:
        docs_dir = generated.get("docs_dir", "wiki")
        if variant.key == "a_md":
            docs_dir = markdown_links_copy(root / docs_dir).name
        config: dict[str, Any] = {
            "site_name": generated.get("site_name", "synthetic"),
            "docs_dir": docs_dir,
            "theme": {"name": "material"},
            "plugins": ["search", {"groundwiki": options}] if variant.plugin else ["search"],
        }
        if variant.small_nav:
            config["nav"] = list(SMALL_NAV)
            config["validation"] = {"nav": {"omitted_files": "info"}}
        path = root / variant.file
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        paths[variant.key] = path
    return paths


_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:#([^\]|]*))?(?:\|([^\]]*))?\]\]")


def markdown_links_copy(docs: Path) -> Path:
    """A copy of the docs with every wikilink rewritten as a Markdown link to the page file,
    labelled as groundwiki would label it (the label, else the target's title)."""
    copy = docs.with_name(docs.name + "-markdown-links")
    if copy.exists():
        return copy
    texts = {
        p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8") for p in docs.rglob("*.md")
    }
    targets: dict[str, tuple[str, str]] = {}  # key or alias -> (doc path, title)
    for doc, text in texts.items():
        front = yaml.safe_load(text.split("---\n", 2)[1]) if text.startswith("---\n") else {}
        key = Path(doc).stem.lower()
        title = (front or {}).get("title") or key
        for name in [key, *((front or {}).get("aliases") or [])]:
            targets.setdefault(str(name).lower(), (doc, title))
    for doc, text in texts.items():

        def link(match: re.Match[str], doc: str = doc) -> str:
            target = targets.get(match[1].strip().lower())
            if target is None:
                return match[3] or match[1]
            href = posixpath.relpath(target[0], posixpath.dirname(doc) or ".")
            if match[2]:
                href += "#" + toc_slugify(match[2], "-")
            return f"[{match[3] or target[1]}]({href})"

        path = copy / doc
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_WIKILINK.sub(link, text), encoding="utf-8")
    return copy


def build_command(
    mkdocs: Path,
    config_file: Path,
    site_dirs: list[Path],
    cold: bool = False,
    phases: list[dict[str, float]] | None = None,
) -> Callable[[], Path]:
    """A build into a fresh site directory per call; the directories are listed in site_dirs.
    `cold` deletes the plugin's build cache first; `phases` receives the plugin's timings."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    counter = itertools.count()

    def run() -> Path:
        site = config_file.parent / f"site-{config_file.stem}-{next(counter)}"
        site_dirs.append(site)
        if cold:
            shutil.rmtree(config_file.parent / ".groundwiki", ignore_errors=True)
        done = subprocess.run(
            [str(mkdocs), "build", "-q", "-f", str(config_file), "-d", str(site)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-20:])
            raise RuntimeError(
                f"mkdocs build -f {config_file.name} exited {done.returncode}:\n{tail}"
            )
        timings = config_file.parent / PHASES
        if phases is not None and timings.exists():
            phases.append(json.loads(timings.read_text(encoding="utf-8"))["phases_s"])
        return site

    return run


def site_facts(site: Path) -> dict[str, Any]:
    html = [p for p in site.rglob("*.html") if p.is_file()]
    home = site / "index.html"
    home_text = home.read_text(encoding="utf-8", errors="replace") if home.exists() else ""
    return {
        "html_files": len(html),
        "html_mb": sum(p.stat().st_size for p in html) / 1e6,
        "home_html_kb": len(home_text.encode("utf-8")) / 1e3,
        # Links of the rendered navigation (sidebar and table of contents) on the home page:
        # shows whether a nav lists every page.
        "home_nav_links": home_text.count('class="md-nav__link'),
    }


def measure(
    mkdocs: Path, config_file: Path, variant: Variant, repeats: int, long_run: float, keep: bool
) -> dict[str, Any]:
    site_dirs: list[Path] = []
    phases: list[dict[str, float]] = []
    cold = variant.plugin and not variant.warm
    if variant.warm:  # an untimed build leaves the cache the timed ones start from
        build_command(mkdocs, config_file, site_dirs, cold=True)()
    command = build_command(mkdocs, config_file, site_dirs, cold=cold, phases=phases)
    times, site = repeat(command, repeats, long_run)
    facts = site_facts(site)
    if not keep:
        for path in site_dirs:
            shutil.rmtree(path, ignore_errors=True)
    median_phases = {
        name: statistics.median(run.get(name, 0.0) for run in phases)
        for name in (phases[0] if phases else {})
    }
    return {"seconds": statistics.median(times), "runs": times, **facts, "phases_s": median_phases}


def ratio(top: float | None, bottom: float | None) -> float | None:
    if top is None or not bottom:
        return None
    return top / bottom


def warm_up(mkdocs: Path, workdir: Path, seed: int) -> float:
    root = workdir / "warm-up"
    generate_wiki(root, WARMUP_PAGES, seed, FAULT_RATE)
    configs = write_configs(root)
    started = time.perf_counter()
    for variant in VARIANTS:
        build_command(mkdocs, configs[variant.key], [], cold=variant.plugin)()
    elapsed = time.perf_counter() - started
    shutil.rmtree(root, ignore_errors=True)
    return elapsed


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_scale_options(parser, repeats=2, long_run=30.0, unit="build")
    parser.add_argument(
        "--mkdocs",
        type=Path,
        default=Path(sys.executable).with_name("mkdocs"),
        help="the mkdocs executable (default: next to this Python)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated wikis and sites")
    parser.add_argument("--output", type=Path, default=RESULTS / "build_scale.json")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")

    results: list[dict[str, Any]] = []
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-build-scale-"))
    try:
        warm_s = warm_up(args.mkdocs, workdir, args.seed)
        print(f"warm-up ({WARMUP_PAGES} pages, each configuration once, untimed): {warm_s:.1f} s")
        for size in sizes:
            root = workdir / f"wiki-{size}"
            started = time.perf_counter()
            generated = generate_wiki(root, size, args.seed, FAULT_RATE)
            generate_s = time.perf_counter() - started
            configs = write_configs(root)
            print(
                f"\n== {generated.pages} pages, {generated.sources} raw sources "
                f"(generated in {generate_s:.1f} s at {root}) =="
            )
            builds: dict[str, dict[str, Any]] = {}
            for variant in VARIANTS:
                build = measure(
                    args.mkdocs, configs[variant.key], variant, args.repeats, args.long_run,
                    args.keep,
                )  # fmt: skip
                build["ms_per_page"] = 1000 * build["seconds"] / generated.pages
                builds[variant.key] = build
                print(
                    f"{variant.label:31} {build['seconds']:8.2f} s  "
                    f"({build['ms_per_page']:.1f} ms/page, {build['html_files']} HTML files, "
                    f"home nav links {build['home_nav_links']}, runs {len(build['runs'])})"
                )
            a, a_md, b, b_warm = (builds[k] for k in ("a", "a_md", "b", "b_warm"))
            row: dict[str, Any] = {
                "size": size,
                "pages": generated.pages,
                "raw_sources": generated.sources,
                "generate_s": generate_s,
                "builds": builds,
                "links_cost": ratio(a_md["seconds"], a["seconds"]),
                "cold_over_a_md": ratio(b["seconds"], a_md["seconds"]),
                "warm_over_a_md": ratio(b_warm["seconds"], a_md["seconds"]),
                "extra_html_files": b["html_files"] - a_md["html_files"],
            }
            results.append(row)
            print(
                f"cold b/a' {row['cold_over_a_md']:.2f}x, warm bw/a' {row['warm_over_a_md']:.2f}x "
                f"(a'/a {row['links_cost']:.2f}x; the plugin's site has "
                f"{row['extra_html_files']:+d} HTML files: raw sources, redirects, overviews)"
            )
            for key in ("b", "b_warm"):
                shown = ", ".join(
                    f"{name} {value:.1f}" for name, value in builds[key]["phases_s"].items()
                    if value >= 0.05
                )  # fmt: skip
                print(f"  phases of {key} (s, median): {shown}")
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print("\nsummary (seconds are medians; ratios are to a', plain material with Markdown links):")
    print(
        f"{'pages':>7} {'sources':>7} {'a s':>8} {'a2 s':>8} {'b s':>8} {'bw s':>8} {'b/a2':>6} {'bw/a2':>6}"
    )
    for row in results:
        a, a_md, b, b_warm = (row["builds"][k] for k in ("a", "a_md", "b", "b_warm"))
        print(
            f"{row['pages']:>7} {row['raw_sources']:>7} {a['seconds']:8.2f} "
            f"{a_md['seconds']:8.2f} {b['seconds']:8.2f} {b_warm['seconds']:8.2f} "
            f"{row['cold_over_a_md']:6.2f} {row['warm_over_a_md']:6.2f}"
        )

    targets: dict[str, Any] = {}
    print("\ntargets:")
    for row in results:
        cold_ok = row["cold_over_a_md"] <= COLD_TARGET
        warm_ok = row["warm_over_a_md"] <= WARM_TARGET
        targets[f"cold_{row['pages']}"] = {
            "max_ratio": COLD_TARGET, "ratio": row["cold_over_a_md"], "pass": cold_ok
        }  # fmt: skip
        targets[f"warm_{row['pages']}"] = {
            "max_ratio": WARM_TARGET, "ratio": row["warm_over_a_md"], "pass": warm_ok
        }  # fmt: skip
        print(
            f"{verdict(cold_ok)} cold build <= {COLD_TARGET}x a' at {row['pages']} pages: "
            f"{row['cold_over_a_md']:.3f}"
        )
        print(
            f"{verdict(warm_ok)} warm build <= {WARM_TARGET}x a' at {row['pages']} pages: "
            f"{row['warm_over_a_md']:.3f}"
        )
    at_target = [row for row in results if row["size"] == TARGET_PAGES]
    if at_target:
        seconds = at_target[0]["builds"]["b"]["seconds"]
        ok = seconds < TARGET_SECONDS
        targets["ten_k"] = {"max_s": TARGET_SECONDS, "b_s": seconds, "pass": ok}
        print(
            f"{verdict(ok)} {TARGET_PAGES} pages, cold, in < {TARGET_SECONDS:.0f} s: {seconds:.1f} s"
        )
    else:
        targets["ten_k"] = {"max_s": TARGET_SECONDS, "b_s": None, "pass": None}
        print(f"n/a  {TARGET_PAGES} pages, cold, in < {TARGET_SECONDS:.0f} s: not measured")

    write_results(
        args.output,
        {
            "benchmark": "build_scale",
            "machine": facts,
            "params": {
                "sizes": sizes,
                "repeats": args.repeats,
                "long_run_s": args.long_run,
                "seed": args.seed,
                "fault_rate": FAULT_RATE,
                "pages_per_source": PAGES_PER_SOURCE,
                "theme": "material",
                "small_nav": SMALL_NAV,
                "variants": {v.key: v.label[3:].strip() for v in VARIANTS},
            },
            "warm_up_s": warm_s,
            "sizes": results,
            "targets": targets,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
