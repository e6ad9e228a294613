"""Comparing two runs of the same benchmark: two built sites file by file, and two sidecars'
JSON answers field by field, less the fields that are clocks or timings (bench/layout_parity.py).
"""

from __future__ import annotations

import difflib
import filecmp
import gzip
import json
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

# Fields of an answer that are clocks or timings: with the same code twice on one index searched
# exhaustively, the answers differ in these and nothing else (synced_at moves within a run too:
# the sidecar's watcher compares every file at least every 60 s, SAFETY_SYNC_S).
VOLATILE = frozenset({"took_ms", "synced_at"})
STATUS_FIELDS = (
    "generation", "pages", "chunks", "page_vectors", "chunk_vectors", "passages",
    "passage_vectors", "lexical_docs", "embedding_pending", "model", "lanes", "scope",
)  # fmt: skip
DIFF_EXCERPTS, EXAMPLES = 3, 5  # unified diffs of sites, differing answers shown


def readable(path: Path) -> list[str]:
    """A site file's lines for a diff (a .gz file's inflated)."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def compare_sites(left: Path, right: Path, names: tuple[str, str], out: Path) -> dict[str, Any]:
    """The files only one site has, the files whose bytes differ (with a unified diff of the
    first few), and what `diff -r` says; the whole `diff -r` is written to `out`."""
    files = {
        side: {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
        for side, site in zip(names, (left, right), strict=True)
    }
    common = sorted(files[names[0]] & files[names[1]])
    differing = [n for n in common if not filecmp.cmp(left / n, right / n, shallow=False)]
    excerpts = [
        "".join(list(difflib.unified_diff(readable(left / n), readable(right / n), n, n))[:40])
        for n in differing[:DIFF_EXCERPTS]
    ]
    diff_r = subprocess.run(
        ["diff", "-r", str(left), str(right)], capture_output=True, text=True, check=False
    )
    out.write_text(diff_r.stdout, encoding="utf-8")
    return {
        "files": len(files[names[0]]),
        "identical": not differing and files[names[0]] == files[names[1]],
        "only_in": {s: sorted(files[s] - files[o]) for s, o in (names, names[::-1])},
        "differing": differing,
        "diff_excerpts": excerpts,
        "diff_r_exit": diff_r.returncode,
        "diff_r_lines": len(diff_r.stdout.splitlines()),
        "diff_r_file": str(out),
    }


def without(value: Any, volatile: frozenset[str]) -> Any:
    """A JSON value less the `volatile` keys, at any depth."""
    if isinstance(value, dict):
        return {k: without(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        return [without(v, volatile) for v in value]
    return value


def differences(left: Any, right: Any, at: str = "") -> list[tuple[str, Any, Any]]:
    """(JSON path, left value, right value) wherever two answers differ; list positions [i]."""
    if isinstance(left, dict) and isinstance(right, dict):
        keys = sorted(set(left) | set(right), key=str)
        return [d for k in keys for d in differences(left.get(k), right.get(k), f"{at}.{k}")]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        pairs = enumerate(zip(left, right, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{at}[{i}]")]
    return [] if left == right else [(at or ".", left, right)]


def compare_answers(
    left: dict[str, Any], right: dict[str, Any], queries: list[dict[str, str]]
) -> dict[str, Any]:
    """Per mode: how many answers are identical less VOLATILE, and the first differences."""
    modes: dict[str, Any] = {}
    for mode in left["answers"]:
        pairs = zip(left["answers"][mode], right["answers"][mode], strict=True)
        same, examples, fields = 0, list[dict[str, Any]](), set[str]()
        for number, (a, b) in enumerate(pairs):
            found = differences(without(a, VOLATILE), without(b, VOLATILE))
            same += not found
            fields.update(re.sub(r"\[\d+\]", "[]", path) for path, _, _ in found)
            if found and len(examples) < EXAMPLES:
                shown = {p: [json.dumps(x)[:120] for x in ab] for p, *ab in found[:6]}
                examples.append({"query": queries[number]["query"][:120], "differ": shown})
        modes[mode] = {"identical": same, "asked": len(queries), "fields": sorted(fields),
                       "examples": examples}  # fmt: skip
    status = {k: (left["status"].get(k), right["status"].get(k)) for k in STATUS_FIELDS}
    return {
        "modes": modes,
        "identical": all(m["identical"] == m["asked"] for m in modes.values()),
        "status_differs": {k: v for k, v in status.items() if v[0] != v[1]},
    }


def run_to_run(left: dict[str, Any], right: dict[str, Any]) -> dict[str, int]:
    """Of two runs' raw answers, how many differ in each field (by its name): with the same code
    twice, the fields that vary run to run."""
    counts: Counter[str] = Counter()
    for mode in left["answers"]:
        for a, b in zip(left["answers"][mode], right["answers"][mode], strict=True):
            found = differences(a, b)
            counts.update({re.sub(r"\[\d+\]", "", p).rsplit(".", 1)[-1] for p, _, _ in found})
    return dict(sorted(counts.items()))
