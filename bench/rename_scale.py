"""How long `groundwiki rename` takes in a real vault, and whether lint finds anything new after it.

The vault (../shared/vaults/obsidian-hub by default) is read, never written: every run renames a
page in a fresh copy under a temp folder, with a mkdocs.yml whose docs_dir is the copy. One full
compile counts each page's backlinks (links from other pages that reach it by file name, path
or key, the ones a rename rewrites); two pages are renamed:

  fifty     the page with the fewest backlinks at or above 50, the issue's case (when no page
            has 50, generated notes linking to the most linked page are added to reach it, and
            the report says so);
  most      the page with the most backlinks, the worst case.

For each: `groundwiki -q rename OLD NEW` end to end as a writer runs it (median of --runs, each
on a fresh copy), the same in-process (scoped compile + plan + apply, median), and on one
more copy `groundwiki lint --format json` before and after: the findings must be the same, the
moved page's path and key aside. Target: under 2 s end to end for the 50-backlink page.

    .venv/bin/python bench/rename_scale.py [--vault DIR] [--runs 3] [--skip-lint]
"""

from __future__ import annotations

import argparse
import json
import posixpath
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from groundwiki.core import compile_wiki, load_config
from groundwiki.core.edit.edits import Edits
from groundwiki.core.edit.rename import plan_rename
from groundwiki.core.edit.rename_reading import scoped_wiki
from harness import RESULTS, machine_facts, write_results

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "vaults" / "obsidian-hub"
GROUNDWIKI = str(Path(sys.executable).parent / "groundwiki")
TARGET_SECONDS = 2.0
WANTED_BACKLINKS = 50
CONFIG = "site_name: vault\ndocs_dir: vault\nplugins:\n  - groundwiki: {}\n"


def fresh_copy(vault: Path, work: Path, extra: dict[str, str]) -> Path:
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(vault, work / "vault", ignore=shutil.ignore_patterns(".*"))
    for name, text in extra.items():
        (work / "vault" / name).write_text(text, encoding="utf-8")
    (work / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    return work


def backlinks(root: Path) -> tuple[dict[str, int], dict[str, int], dict[str, str]]:
    """Per page key: links a rename rewrites, files they are in; and each key's path."""
    wiki = compile_wiki(load_config(root / "mkdocs.yml"))
    links: Counter[str] = Counter()
    files: dict[str, set[str]] = {}
    for item in wiki.resolved_links:
        found = item.resolution
        if found is None or found.via in ("alias", "title") or item.page.key == found.key:
            continue
        links[found.key] += 1
        files.setdefault(found.key, set()).add(item.page.rel_path)
    paths = {key: page.doc_path for key, page in wiki.pages.items()}
    return dict(links), {key: len(found) for key, found in files.items()}, paths


def linking_notes(target: str, count: int) -> dict[str, str]:
    return {
        f"rename-bench-{n:02}.md": f"A generated note linking to [[{target}]].\n"
        for n in range(count)
    }


def run_cli(root: Path, old: str, new: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [GROUNDWIKI, "-q", "rename", old, new], cwd=root, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"groundwiki rename exited {done.returncode}: {done.stderr}")
    return elapsed, done.stderr.splitlines()[0]


def run_in_process(root: Path, old: str, new: str) -> tuple[float, float]:
    """(scoped compile + plan, apply) seconds."""
    config = load_config(root / "mkdocs.yml")
    started = time.perf_counter()
    edits = Edits(config.root)
    plan_rename(scoped_wiki(config, old, new), old, new, edits)
    planned = time.perf_counter()
    edits.apply()
    return planned - started, time.perf_counter() - planned


def lint(
    root: Path, moved: tuple[str, str] = ("", ""), key: tuple[str, str] = ("", "")
) -> Counter[tuple[str, str, str]]:
    """Lint's findings as (rule, file, what); with `moved` and `key` (old, new), the findings
    of the page's old file and key spelled as after the rename."""
    done = subprocess.run(
        [GROUNDWIKI, "-q", "lint", "--format", "json"], cwd=root, capture_output=True, text=True
    )
    found: Counter[tuple[str, str, str]] = Counter()
    for f in json.loads(done.stdout)["findings"]:
        path, detail = f["path"], f["detail"]
        if moved[0] and path == moved[0]:
            path = moved[1]
        if key[0]:
            detail = detail.replace(key[0], key[1])
        found[(f["rule"], path, detail)] += 1
    return found


def measure(
    vault: Path, work: Path, extra: dict[str, str], doc_path: str, runs: int, check_lint: bool
) -> dict[str, Any]:
    stem = posixpath.basename(doc_path).removesuffix(".md")
    old, new = doc_path.removesuffix(".md"), f"renamed/{stem} (renamed)"
    cli: list[float] = []
    report = ""
    for _ in range(runs):
        elapsed, report = run_cli(fresh_copy(vault, work, extra), old, new)
        cli.append(elapsed)
    plan: list[float] = []
    apply: list[float] = []
    for _ in range(runs):
        planned, applied = run_in_process(fresh_copy(vault, work, extra), old, new)
        plan.append(planned)
        apply.append(applied)
    result: dict[str, Any] = {
        "page": doc_path,
        "renamed_to": new + ".md",
        "cli_seconds": [round(t, 3) for t in cli],
        "cli_median_seconds": round(statistics.median(cli), 3),
        "in_process_plan_median_seconds": round(statistics.median(plan), 3),
        "in_process_apply_median_seconds": round(statistics.median(apply), 3),
        "report_line": report,
    }
    if check_lint:
        root = fresh_copy(vault, work, extra)
        before = lint(
            root,
            (f"vault/{doc_path}", f"vault/{new}.md"),
            (stem.lower(), f"{stem} (renamed)".lower()),
        )
        run_cli(root, old, new)
        after = lint(root)
        result["lint_findings_before"] = sum(before.values())
        result["lint_findings_after"] = sum(after.values())
        result["lint_new_findings"] = sorted(map(list, (after - before).elements()))
        result["lint_gone_findings"] = sorted(map(list, (before - after).elements()))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-lint", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rename-bench-") as temp:
        work = Path(temp) / "copy"
        extra: dict[str, str] = {}
        links, files, paths = backlinks(fresh_copy(args.vault, work, extra))
        ranked = sorted(links, key=lambda key: (-links[key], key))
        most = ranked[0]
        at_fifty = [key for key in ranked if links[key] >= WANTED_BACKLINKS]
        generated = 0
        if at_fifty:
            fifty = at_fifty[-1]
        else:
            fifty = most
            generated = WANTED_BACKLINKS - links[most]
            extra = linking_notes(posixpath.basename(paths[most]).removesuffix(".md"), generated)
            links[most] = files[most] = WANTED_BACKLINKS
        print(
            f"{len(paths)} pages; most backlinks: {links[most]} ({files[most]} files) "
            f"to {paths[most]}"
        )
        if generated:
            print(f"no page has {WANTED_BACKLINKS} backlinks: added {generated} generated notes")
        results: dict[str, Any] = {
            "machine": machine_facts(),
            "vault": str(args.vault),
            "pages": len(paths),
            "generated_linking_notes": generated,
            "target_seconds": TARGET_SECONDS,
        }
        for name, key in (("fifty", fifty), ("most", most)):
            print(f"\n{name}: {paths[key]}, {links[key]} backlinks in {files[key]} files")
            measured = measure(args.vault, work, extra, paths[key], args.runs, not args.skip_lint)
            measured["backlinks"] = links[key]
            measured["linking_files"] = files[key]
            results[name] = measured
            print(f"  {measured['report_line']}")
            print(
                f"  cli (end to end)  median {measured['cli_median_seconds']} s "
                f"of {measured['cli_seconds']}"
            )
            print(
                f"  in-process        plan {measured['in_process_plan_median_seconds']} s, "
                f"apply {measured['in_process_apply_median_seconds']} s"
            )
            if "lint_new_findings" in measured:
                print(
                    f"  lint              {measured['lint_findings_before']} findings before, "
                    f"{measured['lint_findings_after']} after; "
                    f"{len(measured['lint_new_findings'])} new, "
                    f"{len(measured['lint_gone_findings'])} gone"
                )
        met = results["fifty"]["cli_median_seconds"] < TARGET_SECONDS
        print(
            f"\ntarget < {TARGET_SECONDS} s for {results['fifty']['backlinks']} backlinks: "
            f"{'met' if met else 'NOT met'}"
        )
    write_results(RESULTS / "rename_scale.json", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
