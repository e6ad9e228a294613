"""The sidecar's records worked out by difference (`RecordCache`, what an edit's batch costs)
equal the records made from scratch, in the same order, at every step of a random walk of edits
over part of the real vault; and the delta it reports is exactly what differs."""

from __future__ import annotations

from pathlib import Path

import pytest
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.index.documents import RecordCache
from helpers.edit_walk import EditWalk, copy_vault
from helpers.sidecar_helpers import small_wiki

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


def test_small_batches_leave_segments_unmerged_up_to_a_bound(tmp_path):
    # whoosh_index.SMALL_BATCH / MERGE_FROM_SEGMENTS: an edit's commit does not merge the small
    # segments each time, and their number stays bounded; answers are those of one segment.
    from groundwiki_sidecar.index.whoosh_index import MERGE_FROM_SEGMENTS

    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    ops = Operations(service)
    try:
        service.start(watch=False)
        wing = sidecar.config.docs_dir / "wing.md"
        text = wing.read_text()
        counts = []
        for number in range(2 * MERGE_FROM_SEGMENTS):
            wing.write_text(text.replace("Flutter grows", f"Flutter grows{number}x"))
            service.sync("edit", changes=frozenset({wing}))
            counts.append(len(service.indexer.lexical.pages._segments()))
        assert max(counts) <= MERGE_FROM_SEGMENTS + 1 and len(set(counts)) > 2
        last = f"grows{2 * MERGE_FROM_SEGMENTS - 1}x"
        assert [hit["key"] for hit in ops.search(last, 5)["hits"]] == ["wing"]
        assert ops.search("grows0x", 5)["hits"] == []  # no older version left in any segment
    finally:
        ops.close()
        service.stop()
