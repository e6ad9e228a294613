"""Pages renamed in git history: where each former path of a page leads now.

One `git log` over the wiki folder lists every rename git detected (`-M`), oldest applied first,
so chains follow through (a -> b, then b -> c: a and b both lead to c). A former path that a page
holds again today is that page's, not a redirect; a page renamed and later deleted leaves none.
Outside a git work tree, without git, or in a shallow clone that lacks the commits, there is
less (or no) history and nothing fails: the caller gets what git knows.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

log = logging.getLogger("groundwiki")


def renamed_pages(root: Path, docs_dir: Path, pages: set[str]) -> dict[str, str]:
    """Former doc path -> the doc path of the page that stands there now (both relative to
    `docs_dir`, as `Page.doc_path`), for every former path no page holds today."""
    moves = _git_renames(root, docs_dir)
    if not moves:
        return {}
    leads: dict[str, str] = {}
    for old, new in moves:  # oldest first
        leads[old] = new
    found: dict[str, str] = {}
    for old in leads:
        if old in pages:
            continue  # the path was taken again by a page of its own
        seen = {old}
        now = leads[old]
        while now in leads and now not in pages and now not in seen:
            seen.add(now)
            now = leads[now]
        if now in pages:
            found[old] = now
    return dict(sorted(found.items()))


def _git_renames(root: Path, docs_dir: Path) -> list[tuple[str, str]]:
    """(old, new) doc paths of `.md` renames under docs_dir, oldest first."""
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
        if top is None:
            return []
        base = Path(top.strip()).resolve()
        folder = docs_dir.resolve().relative_to(base).as_posix()
        out = _git(
            base,
            "log",
            "--format=",
            "--name-status",
            "-z",
            "-M",
            "--diff-filter=R",
            "--",
            folder if folder != "." else ".",
        )
    except ValueError:
        return []  # the wiki folder is outside the repository
    if out is None:
        return []
    prefix = "" if folder == "." else folder + "/"
    tokens = [t.lstrip("\n") for t in out.split("\0")]
    moves: list[tuple[str, str]] = []
    index = 0
    while index + 2 < len(tokens):
        status = tokens[index]
        if status.startswith("R") and status[1:].isdigit():
            old, new = tokens[index + 1], tokens[index + 2]
            index += 3
            pages = all(p.startswith(prefix) and p.endswith(".md") for p in (old, new))
            if pages:
                moves.append((old[len(prefix) :], new[len(prefix) :]))
        else:
            index += 1
    moves.reverse()  # git log lists the newest commit first
    return moves


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", "-C", str(root), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("groundwiki: no redirects from git history: %s", exc)
        return None
    if done.returncode != 0:
        log.info("groundwiki: no redirects from git history: %s", done.stderr.strip()[:200])
        return None
    return done.stdout
