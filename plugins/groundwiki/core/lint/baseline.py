"""A baseline of accepted findings: known ones stay quiet, new ones still show.

Entries match on (rule, path, detail), never on line numbers, so an edit that moves a known
finding does not wake it up. Each entry silences one finding: a second copy of a known problem
is new.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.files.safe_paths import write_atomic
from groundwiki.core.lint.findings import Finding


class BaselineError(GroundwikiError):
    """A baseline file that cannot be used; the message says how to fix it."""


def read_baseline(path: Path) -> Counter[tuple[str, str, str]]:
    if not path.is_file():
        return Counter()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["findings"]
        return Counter((e["rule"], e["path"], e["detail"]) for e in entries)
    except (ValueError, KeyError, TypeError) as exc:
        raise BaselineError(
            f"{path}: not a groundwiki baseline ({exc}); regenerate it with "
            "`groundwiki lint --write-baseline`"
        ) from exc


def write_baseline(path: Path, findings: Iterable[Finding]) -> int:
    rows = sorted(f.fingerprint() for f in findings)
    data = {
        "version": 1,
        "findings": [{"rule": r, "path": p, "detail": d} for r, p, d in rows],
    }
    # Renamed over the old file: a symlink at the path is replaced, never written through.
    write_atomic(path, json.dumps(data, indent=2) + "\n")
    return len(rows)


def apply_baseline(
    findings: Iterable[Finding], baseline: Counter[tuple[str, str, str]]
) -> tuple[list[Finding], int]:
    remaining = Counter(baseline)
    active: list[Finding] = []
    silenced = 0
    for finding in findings:
        key = finding.fingerprint()
        if remaining[key] > 0:
            remaining[key] -= 1
            silenced += 1
        else:
            active.append(finding)
    return active, silenced
