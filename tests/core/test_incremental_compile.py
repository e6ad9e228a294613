"""The incremental compile equals a compile from scratch: a short random walk of edits over
part of the real vault, checked at every step (the 500-step walk over the whole vault is in
tests/scale/test_incremental_vault.py)."""

from __future__ import annotations

from pathlib import Path

from helpers.edit_walk import EditWalk, compile_state, copy_vault, differences

# 180 notes of the vault: a folder of templates and guides that link and embed each other.
PARTS = ("00 - Contribute to the Obsidian Hub", "04 - Guides, Workflows, & Courses", "06 - Inbox")


def test_every_step_of_a_walk_equals_a_compile_from_scratch(tmp_path: Path) -> None:
    walk = EditWalk(copy_vault(tmp_path, PARTS), seed=29)
    walk.compile()
    for _ in range(8):
        what = walk.step()
        kept = walk.compile()
        assert kept.stale is not None, "the compile kept across steps recomputed everything"
        full = walk.compile_from_scratch()
        assert full.stale is None
        found = differences(compile_state(kept), compile_state(full))
        assert not found, f"after {what} (steps: {walk.log}): {found}"


def test_a_change_makes_only_its_dependents_stale(tmp_path: Path) -> None:
    walk = EditWalk(copy_vault(tmp_path, PARTS), seed=3)
    host, shown = walk.pages[0], walk.pages[1]
    walk._append(host, f"![[{shown.removesuffix('.md')}]]")
    assert walk.compile().resolved_links
    alone = next(
        doc for doc in walk.pages[2:] if "🗂️" not in doc
    )  # no folder note: none links to it
    walk._append(alone, "One more sentence, no link.")
    assert walk.compile().stale == {alone}
    # An edit of an embedded page changes what its embedders show: they are stale too.
    walk._append(shown, "One more sentence, no link.")
    kept = walk.compile()
    assert kept.stale is not None and {shown, host} <= kept.stale
    # A new heading may be what a link's anchor names: the pages linking to it are stale.
    linking = {
        item.page.doc_path
        for item in kept.resolved_links
        if item.resolution and kept.pages[item.resolution.key].doc_path == alone
    }
    walk._append(alone, "## A new heading")
    assert walk.compile().stale == {alone} | linking
