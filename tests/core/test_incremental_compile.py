"""The incremental compile equals a compile from scratch: a short random walk of edits over
part of the real vault, checked at every step (six steps: the fast lane allows 2 s a test; the
long walk over the whole vault is tests/scale/test_incremental_vault.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from groundwiki.core.read.page_reader import Buffers
from groundwiki.core.wiki import compiler
from groundwiki.core.wiki.compiler import compile_wiki, discover_pages
from helpers.edit_walk import EditWalk, compile_state, copy_vault, differences

# 180 notes of the vault: a folder of templates and guides that link and embed each other.
PARTS = ("00 - Contribute to the Obsidian Hub", "04 - Guides, Workflows, & Courses", "06 - Inbox")


def test_every_step_of_a_walk_equals_a_compile_from_scratch(tmp_path: Path) -> None:
    walk = EditWalk(copy_vault(tmp_path, PARTS), seed=29)
    walk.compile()
    # Five steps here, inside the fast lane's 2 s; tests/scale walks sixty.
    for _ in range(5):
        what = walk.step()
        kept = walk.compile()
        assert kept.stale is not None, "the compile kept across steps recomputed everything"
        full = walk.compile_from_scratch()
        assert full.stale is None
        found = differences(compile_state(kept), compile_state(full))
        assert not found, f"after {what} (steps: {walk.log}): {found}"


def test_a_walk_told_the_changed_paths_equals_a_compile_from_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the sidecar's watcher tells it: the compile looks at those paths alone, no walk.
    walk = EditWalk(copy_vault(tmp_path, PARTS), seed=31, told=True)
    walk.compile()
    walks: list[Path] = []

    def counted(config: Any, *args: Any) -> list[Path]:
        walks.append(config.docs_dir)
        return discover_pages(config, *args)

    monkeypatch.setattr(compiler, "discover_pages", counted)
    # Five steps here, inside the fast lane's 2 s; tests/scale walks sixty.
    for _ in range(5):
        what = walk.step()
        told = len(walks)
        kept = walk.compile()
        walked = len(walks) > told
        found = differences(compile_state(kept), compile_state(walk.compile_from_scratch()))
        assert not found, f"after {what} (steps: {walk.log}, walked: {walked}): {found}"
    # Each compile from scratch walks; a told compile only for a new folder (a rename into one).
    assert len(walks) < 5 * 2, walk.log


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


def test_an_editor_buffer_compiles_as_the_same_text_saved_would(tmp_path: Path) -> None:
    walk = EditWalk(copy_vault(tmp_path, PARTS), seed=5)
    walk.compile()
    doc, other = walk.pages[3], walk.pages[4]
    path = walk.docs / doc
    name = other.rsplit("/", 1)[-1].removesuffix(".md")
    text = path.read_text(encoding="utf-8") + f"\n\nSee [[nowhere at all]] and [[{name}]].\n"
    buffers = Buffers(texts={path: text})
    typed = compile_wiki(walk.config, files=walk.cache, buffers=buffers, rescan=False)
    assert typed.stale is not None and doc in typed.stale
    assert path.read_text(encoding="utf-8") != text  # nothing was saved
    walk._write(path, text)
    assert not differences(compile_state(typed), compile_state(walk.compile_from_scratch()))
