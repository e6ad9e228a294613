"""Pages read by spawned workers (a threaded process may not fork) are the pages read here, in
the same order; a worker that fails has its share read here, nothing lost."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.read.page_reader import _read_here
from groundwiki.core.read.page_workers import read_spawned
from groundwiki.core.read.provenance import PathGuard
from groundwiki.core.wiki.compiler import discover_pages
from helpers.wikis import page, write_wiki


def _wiki(root: Path, count: int) -> Path:
    pages = {
        f"notes/n{n:03}.md": page(
            title=f"Note {n}", summary=f"About {n}.", body=f"# N{n}\n\n[[n{n + 1:03}]]\n"
        )
        for n in range(count)
    }
    write_wiki(root, pages, {}, {})
    return root / "mkdocs.yml"


def test_spawned_workers_read_the_same_pages_in_the_same_order(tmp_path: Path) -> None:
    """And say how far they are as they go: each worker tells every PROGRESS_EVERY pages."""
    config = load_config(_wiki(tmp_path, 230))
    paths = discover_pages(config)
    guard = PathGuard(config.raw_dir)
    seen: list[tuple[int, int]] = []
    found = read_spawned(paths, config, guard, lambda done, total: seen.append((done, total)), 2)
    assert found == _read_here(paths, config, guard, None, 0, len(paths))
    assert seen[-1] == (230, 230)
    assert {done for done, _ in seen[:-1]} & {100, 200}, seen  # before the answers came


def test_a_failing_worker_has_its_share_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(_wiki(tmp_path, 10))
    paths = discover_pages(config)
    guard = PathGuard(config.raw_dir)
    # An interpreter that fails as a broken installation would: the worker exits non-zero.
    monkeypatch.setattr(sys, "executable", sys.executable + "-missing")
    found = read_spawned(paths, config, guard, None, 1)
    assert found == _read_here(paths, config, guard, None, 0, len(paths))
    assert "reading its pages here" in caplog.text
