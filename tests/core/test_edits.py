"""The writers' tools change files through one plan: shown as a diff git applies, checked as a
whole before anything is written, and refused (changing nothing) when a change is unsafe."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from groundwiki.core.edit.edits import Edits, Refused


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def repo(root: Path) -> Path:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "w@example.org")
    git(root, "config", "user.name", "Writer")
    (root / "wiki").mkdir()
    (root / "wiki/a.md").write_text("# A\n\nSee b.\n")
    (root / "wiki/b.md").write_text("# B\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    return root


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*.md"))
        if ".git" not in p.parts
    }


def plan(root: Path) -> Edits:
    edits = Edits(root)
    edits.write(root / "wiki/a.md", "# A\n\nSee c.\n")
    edits.move(root / "wiki/b.md", root / "wiki/c.md")
    edits.write(root / "wiki/c.md", "# C\n")
    edits.write(root / "wiki/new.md", "# New\n")
    return edits


def test_the_diff_is_one_git_applies_and_equals_the_change_made(tmp_path):
    root = repo(tmp_path)
    diff = plan(root).diff()
    assert "rename from wiki/b.md\nrename to wiki/c.md\n" in diff
    assert "--- /dev/null\n+++ b/wiki/new.md\n" in diff
    patch = root / "change.patch"
    patch.write_text(diff)
    git(root, "apply", "--check", str(patch))  # raises when git would not apply it
    patch.unlink()
    plan(root).apply()
    assert snapshot(root) == {
        "wiki/a.md": "# A\n\nSee c.\n",
        "wiki/c.md": "# C\n",
        "wiki/new.md": "# New\n",
    }


def test_a_tracked_page_is_moved_with_git_so_history_follows_it(tmp_path):
    root = repo(tmp_path)
    plan(root).apply()
    status = git(root, "status", "--porcelain")
    assert "R" in status.split("wiki/b.md -> wiki/c.md")[0].splitlines()[-1][:2]  # staged rename


def test_outside_git_the_files_are_moved_plainly(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki/a.md").write_text("# A\n\nSee b.\n")
    (tmp_path / "wiki/b.md").write_text("# B\n")
    plan(tmp_path).apply()
    assert sorted(snapshot(tmp_path)) == ["wiki/a.md", "wiki/c.md", "wiki/new.md"]


def test_an_existing_destination_refuses_the_whole_change(tmp_path):
    root = repo(tmp_path)
    (root / "wiki/c.md").write_text("# Someone else's C\n")
    before = snapshot(root)
    with pytest.raises(Refused, match=r"wiki/c\.md already exists.*nothing was changed"):
        plan(root).apply()
    assert snapshot(root) == before


def test_a_file_edited_while_the_change_was_planned_refuses_it(tmp_path):
    root = repo(tmp_path)
    edits = plan(root)
    (root / "wiki/a.md").write_text("# A\n\nSee b, edited meanwhile.\n")
    before = snapshot(root)
    with pytest.raises(Refused, match=r"wiki/a\.md changed while the change was planned"):
        edits.apply()
    assert snapshot(root) == before


def test_a_page_in_an_unresolved_merge_refuses_the_change(tmp_path):
    root = repo(tmp_path)
    git(root, "checkout", "-q", "-b", "other")
    (root / "wiki/a.md").write_text("# A\n\nSee b, other side.\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    (root / "wiki/a.md").write_text("# A\n\nSee b, this side.\n")
    git(root, "commit", "-q", "-am", "this")
    subprocess.run(["git", "-C", str(root), "merge", "-q", "other"], capture_output=True)
    before = snapshot(root)
    edits = Edits(root)
    edits.write(root / "wiki/a.md", "# A\n\nSee c.\n")
    with pytest.raises(Refused, match=r"wiki/a\.md has an unresolved merge conflict"):
        edits.apply()
    assert snapshot(root) == before
