"""A warm `mkdocs build` with this checkout against one with an earlier commit, in the same run.

For a change whose cost is in the build cache (issue 27 replaced its pickle with JSON read back
into the model's types), the figure that matters is a warm build: the cache of an earlier build
of the same files is read, most pages are reused. This script checks the earlier commit out with
`git worktree` (no install: its `plugins/` goes first on PYTHONPATH), generates the same seeded
synthetic wiki as build_scale.py once per size, copies it for each side (the two caches are
different files), builds each side once untimed to fill its cache, then alternates timed warm
builds, base then this checkout, so that the machine's load falls on both alike. It prints the
median wall time and the median of each of the plugin's phases (.groundwiki/build/
build-phases.json), and the ratio this/base. Target (issue 27): at most 1.05 at 2,000 and 10,000
pages.

    .venv/bin/python bench/warm_build_ab.py [--base-ref 6e181c0] [--sizes 2000,10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from build_scale import PHASES, write_configs
from harness import RESULTS, machine_facts, write_results
from lint_scale import generate_wiki

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"
TARGET = 1.05


def build(config: Path, plugins: Path, site: Path) -> tuple[float, dict[str, float]]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(plugins)}
    started = time.perf_counter()
    done = subprocess.run(
        [str(MKDOCS), "build", "-q", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"{config}: mkdocs build exited {done.returncode}:\n{done.stderr[-2000:]}"
        )
    shutil.rmtree(site, ignore_errors=True)
    phases = json.loads((config.parent / PHASES).read_text(encoding="utf-8"))["phases_s"]
    return seconds, phases


def measure(
    size: int, work: Path, sides: dict[str, Path], repeats: int, seed: int
) -> dict[str, Any]:
    generated = work / f"wiki-{size}"
    generate_wiki(generated, size, seed, 0.0)
    configs: dict[str, Path] = {}
    for side in sides:
        root = work / f"{side}-{size}"
        shutil.copytree(generated, root)
        configs[side] = write_configs(root)["b"]
        build(configs[side], sides[side], root / "site-fill")  # untimed: fills the cache
    times: dict[str, list[float]] = {side: [] for side in sides}
    phases: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for run in range(repeats):
        for side, plugins in sides.items():
            seconds, timings = build(configs[side], plugins, configs[side].parent / f"site-{run}")
            times[side].append(seconds)
            phases[side].append(timings)
            print(f"  {size:>6} pages  {side:<5} run {run + 1}: {seconds:7.2f} s", flush=True)
    medians = {side: statistics.median(values) for side, values in times.items()}
    phase_medians = {
        side: {
            name: round(statistics.median(run.get(name, 0.0) for run in runs), 3)
            for name in sorted({name for run in runs for name in run})
        }
        for side, runs in phases.items()
    }
    shutil.rmtree(generated, ignore_errors=True)
    return {
        "pages": size,
        "seconds": {side: [round(t, 2) for t in values] for side, values in times.items()},
        "median_s": {side: round(value, 2) for side, value in medians.items()},
        "ratio": round(medians["this"] / medians["base"], 3),
        "phases_median_s": phase_medians,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-ref", default="6e181c0", help="the commit to compare against")
    parser.add_argument("--sizes", default="2000,10000", help="page counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="timed warm builds per side")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS / "warm_build_ab.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gw-warm-ab-"))
    base = work / "base"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base_ref],
        check=True,
        capture_output=True,
    )
    sides = {"base": base / "plugins", "this": ROOT / "plugins"}
    results: dict[str, Any] = {"machine": machine_facts(), "base_ref": args.base_ref, "sizes": []}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            row = measure(size, work, sides, args.repeats, args.seed)
            results["sizes"].append(row)
            verdict = "PASS" if row["ratio"] <= TARGET else "FAIL"
            print(
                f"{size} pages, warm: base {row['median_s']['base']:.2f} s, this "
                f"{row['median_s']['this']:.2f} s, ratio {row['ratio']:.3f} "
                f"(target <= {TARGET}): {verdict}",
                flush=True,
            )
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(work, ignore_errors=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
