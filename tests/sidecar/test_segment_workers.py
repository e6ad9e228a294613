"""A large batch of new pages written by spawned workers as segments of their own
(index/segment_workers.py) is the index one writer makes: the same documents, stored fields and
rankings; a worker that fails has its share written here, nothing lost."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from groundwiki_sidecar.index import whoosh_index
from groundwiki_sidecar.index.documents import PageRecord
from groundwiki_sidecar.index.whoosh_index import LexicalIndex
from test_bm25f import WORDS as AERO_WORDS

WORDS = [*AERO_WORDS, "**bold**", "v1.2"]  # two words Whoosh keeps whole
QUERIES = [
    "wing flutter",
    "shock wave heat",
    "boundary layer drag",
    "**bold** v1.2",
    "cone plate nozzle",
]


def records(count: int) -> list[PageRecord]:
    rng = random.Random(count)
    return [
        PageRecord(
            key=f"page-{n:05}", title=" ".join(rng.choices(WORDS, k=3)), summary="",
            tags=(rng.choice(["aero", "heat"]),), body=" ".join(rng.choices(WORDS, k=40)),
            kind="concept", usage_mode="reference", stale_since=None, archived_since=None,
            path=f"wiki/page-{n:05}.md",
        )
        for n in range(count)
    ]  # fmt: skip


def written(folder: Path, pages: list[PageRecord]) -> LexicalIndex:
    """An index of `pages`, written as a process with threads writes it (may not fork)."""
    lexical = LexicalIndex(folder)
    lexical.apply(pages, [], [], [], fresh=True)
    return lexical


def rankings(lexical: LexicalIndex) -> list[list[tuple[str, float]]]:
    return [lexical.rank("page", query, 50) for query in QUERIES]


def test_spawned_segments_make_the_index_one_writer_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = records(1200)
    monkeypatch.setattr(whoosh_index, "can_fork", lambda: False)
    monkeypatch.setattr(whoosh_index, "spawn_count", lambda count: 0)
    alone = written(tmp_path / "alone", pages)
    monkeypatch.setattr(whoosh_index, "spawn_count", lambda count: 2)
    spread = written(tmp_path / "spread", pages)
    with spread.pages.searcher() as searcher:
        assert len(list(searcher.reader().leaf_readers())) == 2  # one segment per worker
        stored = sorted((f["id"], f["title"]) for f in searcher.all_stored_fields())
    with alone.pages.searcher() as searcher:
        assert stored == sorted((f["id"], f["title"]) for f in searcher.all_stored_fields())
    assert rankings(spread) == rankings(alone)
    assert all(rankings(spread))
    assert not (tmp_path / "spread" / "pages" / "MAIN.tmp").exists()  # no temporary files left
    # The next batch writes over the workers' segments as over any.
    spread.apply(records(3)[:1], [pages[0].uid], [], [])
    assert spread.doc_counts()["pages"] == 1200


def test_a_failing_worker_has_its_share_written_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pages = records(1000)
    monkeypatch.setattr(whoosh_index, "can_fork", lambda: False)
    # An interpreter that fails as a broken installation would: the worker exits non-zero.
    monkeypatch.setattr(sys, "executable", sys.executable + "-missing")
    lexical = written(tmp_path / "failing", pages)
    assert lexical.doc_counts()["pages"] == 1000
    assert (
        "writing its share here" in caplog.text or "writing its 500 documents here" in caplog.text
    )
    assert all(rankings(lexical))
