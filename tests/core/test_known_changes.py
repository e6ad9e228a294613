"""A listing brought up to date from the changed paths alone (`updated_scan`) equals a walk of
the folder, or says that only a walk can tell."""

from __future__ import annotations

import os
import random
from pathlib import Path

from groundwiki.core.files.file_cache import walk
from groundwiki.core.files.known_changes import updated_scan


def listing(root: Path) -> tuple[tuple[Path, ...], frozenset[Path], tuple[str, ...]]:
    linked: set[Path] = set()
    others: list[str] = []
    paths = walk(root, suffix=".md", linked=linked, others=others)
    return (tuple(paths), frozenset(linked), tuple(sorted(others)))


def test_a_listing_from_changed_paths_equals_a_walk(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    for folder in ("a", "a/b", "c", ".hidden"):
        (root / folder).mkdir(parents=True)
    rng = random.Random(5)
    names = ["one.md", "two.md", "x.png", ".secret.md", "notes.txt", "three.md"]
    folders = ["", "a", "a/b", "c", ".hidden"]
    scan = listing(root)
    walked = 0
    for step in range(200):
        changed: set[Path] = set()
        for _ in range(rng.randint(1, 3)):
            path = root / rng.choice(folders) / rng.choice(names)
            action = rng.random()
            if action < 0.5 and path.parent.is_dir():
                path.write_text(f"step {step}\n")
            elif path.exists():
                path.unlink()
            changed.add(path)
        if rng.random() < 0.05:  # a folder deleted with its files: each file's event and its own
            gone = root / "c"
            for child in gone.iterdir() if gone.is_dir() else ():
                changed.add(child)
                child.unlink()
            if gone.is_dir():
                gone.rmdir()
            changed.add(gone)
        if rng.random() < 0.05 and not (root / "c").exists():  # a folder back: only a walk
            (root / "c").mkdir()
            changed.add(root / "c")
        found = updated_scan(scan, changed, root, ".md")
        truth = listing(root)
        if found is None:
            walked += 1
            found = truth
        assert found == truth, f"step {step}: {sorted(changed)}"
        scan = found
    assert walked < 20


def test_a_symlink_or_a_new_folder_needs_a_walk(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    root.mkdir()
    scan = listing(root)
    (root / "new").mkdir()
    assert updated_scan(scan, {root / "new"}, root, ".md") is None
    os.symlink(tmp_path, root / "link.md")
    assert updated_scan(scan, {root / "link.md"}, root, ".md") is None
    # Paths outside the folder are not its business.
    assert updated_scan(scan, {tmp_path / "elsewhere.md"}, root, ".md") == scan
