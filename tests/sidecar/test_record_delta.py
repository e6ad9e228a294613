"""The sidecar's records worked out by difference (`RecordCache`, what an edit's batch costs)
equal the records made from scratch, in the same order, at every step of a random walk of edits
over part of the real vault; and the delta it reports is exactly what differs."""

from __future__ import annotations

from pathlib import Path

import pytest
from groundwiki_sidecar.index.documents import RecordCache
from helpers.edit_walk import EditWalk, copy_vault

PARTS = ("00 - Contribute to the Obsidian Hub", "06 - Inbox")


@pytest.mark.parametrize("seed", [7, 8])
def test_records_by_difference_equal_records_from_scratch(tmp_path: Path, seed: int) -> None:
    walk = EditWalk(copy_vault(tmp_path, PARTS), seed=seed, told=True)
    kept = RecordCache(lead=True)
    last = kept.all(walk.compile())
    assert kept.delta is None  # the first call works from scratch
    for _ in range(20):
        what = walk.step()
        wiki = walk.compile()
        now = kept.all(wiki)
        fresh = RecordCache(lead=True).all(wiki)
        for kind in ("pages", "passages", "chunks", "by_page"):
            mine, theirs = getattr(now, kind), getattr(fresh, kind)
            assert list(mine.items()) == list(theirs.items()), f"{kind} after {what}"
        delta = kept.delta
        assert delta is not None, what
        for kind, name in (("page", "pages"), ("passage", "passages"), ("chunk", "chunks")):
            before, after = getattr(last, name), getattr(now, name)
            differ = {n for n, record in after.items() if before.get(n) != record}
            assert differ <= delta.changed[kind].keys(), f"{kind} after {what}"
            assert all(after[n] is r for n, r in delta.changed[kind].items()), what
            assert set(delta.gone[kind]) == before.keys() - after.keys(), f"{kind} after {what}"
        last = now
