"""`groundwiki lock --check` and `--fix-moved`, run as a writer runs them: text pushed down by
lines inserted above it gets its citation corrected and stays verified; changed text is only
reported, --check naming the claims to re-read before relocking, and fails `lint --strict`;
nothing is written on --check or --dry-run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import commands
from helpers.wikis import page, write_wiki

NOTES = "".join(f"Line {n} of the notes.\n" for n in range(1, 11))


def groundwiki(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return commands.groundwiki("-q", *args, cwd=root)


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def lint_rules(root: Path) -> list[str]:
    done = groundwiki(root, "lint", "--format", "json")
    return sorted(f["rule"] for f in __import__("json").loads(done.stdout)["findings"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_wiki(
        tmp_path,
        {
            "index.md": page(kind="overview", title="Home", body="See [[wing]].\n"),
            "wing.md": page(
                sources=["raw-sources/notes.md#L7"],
                body="Says lines 3-4. <!-- from: raw-sources/notes.md#L3-L4 -->\n"
                "Says line 9. <!-- from: raw-sources/notes.md#L9 -->\n",
            ),
        },
        {"notes.md": NOTES},
    )
    assert groundwiki(tmp_path, "lock").returncode == 0
    return tmp_path


def insert_above(root: Path, count: int) -> None:
    notes = root / "raw-sources/notes.md"
    notes.write_text("".join(f"New {n}.\n" for n in range(count)) + notes.read_text())


def test_check_passes_on_a_current_lock_and_fails_on_a_stale_one_writing_nothing(root):
    assert groundwiki(root, "lock", "--check").returncode == 0
    insert_above(root, 2)
    (root / "wiki/wing.md").write_text(
        (root / "wiki/wing.md").read_text() + "New. <!-- from: raw-sources/notes.md#L1 -->\n"
    )
    before = files(root)
    done = groundwiki(root, "lock", "--check")
    assert done.returncode == 1
    assert "wiki.lock: out of date (2 added, 0 changed, 1 removed)" in done.stderr
    assert "run `groundwiki lock`" in done.stderr
    assert files(root) == before


def test_drift_fails_check_naming_what_to_reread_and_fails_lint_only_when_strict(root):
    notes = root / "raw-sources/notes.md"
    notes.write_text(notes.read_text().replace("Line 9 of", "Line 9, reworded, of"))
    before = files(root)
    done = groundwiki(root, "lock", "--check")
    assert done.returncode == 1 and files(root) == before
    assert "the text of 1 citation changed since it was locked (drift):" in done.stderr
    assert "  wiki/wing.md:7: raw-sources/notes.md#L9\n" in done.stderr  # the page, the lines
    assert "Re-read each changed source at the cited lines and the claims that cite it" in (
        done.stderr
    )
    assert "only then run `groundwiki lock`" in done.stderr
    lint = groundwiki(root, "lint")
    assert lint.returncode == 0 and "wiki/wing.md:7:14: warning drifted-source:" in lint.stdout
    strict = groundwiki(root, "lint", "--strict")
    assert strict.returncode == 1 and "drifted-source" in strict.stdout


def test_fix_moved_corrects_every_moved_citation_where_it_is_written_and_relocks(root):
    insert_above(root, 3)
    assert lint_rules(root).count("moved-source") == 3
    done = groundwiki(root, "lock", "--fix-moved")
    assert done.returncode == 0, done.stderr
    text = (root / "wiki/wing.md").read_text()
    assert "<!-- from: raw-sources/notes.md#L6-L7 -->" in text  # in a comment
    assert "<!-- from: raw-sources/notes.md#L12 -->" in text
    assert "- raw-sources/notes.md#L10\n" in text  # in the frontmatter
    assert "wiki/wing.md:" in done.stderr and "notes.md#L3-L4 -> raw-sources/notes.md#L6-L7" in (
        done.stderr
    )
    assert lint_rules(root) == []  # verified at the new lines, nothing unlocked
    assert groundwiki(root, "lock", "--check").returncode == 0


def test_changed_text_is_reported_and_never_fixed(root):
    notes = root / "raw-sources/notes.md"
    lines = notes.read_text().splitlines(keepends=True)
    lines[8] = "Line 9, reworded by someone.\n"
    notes.write_text("New.\n" + "".join(lines))
    lock_before = (root / "wiki.lock").read_text()
    done = groundwiki(root, "lock", "--fix-moved")
    assert done.returncode == 1
    assert "left raw-sources/notes.md#L9 as it is: its text changed" in done.stderr
    text = (root / "wiki/wing.md").read_text()
    assert "notes.md#L4-L5" in text and "notes.md#L9 -->" in text  # moved fixed, drift kept
    lock = (root / "wiki.lock").read_text()
    drifted = [row for row in lock.splitlines() if "notes.md#L9\t" in row]
    assert drifted and drifted == [r for r in lock_before.splitlines() if "notes.md#L9\t" in r]
    assert "drifted-source" in lint_rules(root)


def test_dry_run_shows_the_page_and_lock_changes_and_writes_nothing(root):
    insert_above(root, 1)
    before = files(root)
    done = groundwiki(root, "lock", "--fix-moved", "--dry-run")
    assert done.returncode == 0
    assert files(root) == before
    assert "--- a/wiki/wing.md\n+++ b/wiki/wing.md\n" in done.stdout
    assert "+Says lines 3-4. <!-- from: raw-sources/notes.md#L4-L5 -->" in done.stdout
    assert "+++ b/wiki.lock\n" in done.stdout
    patch = root / "fix.patch"
    patch.write_text(done.stdout)
    applied = subprocess.run(
        ["git", "apply", "--check", "fix.patch"], cwd=root, capture_output=True
    )
    assert applied.returncode == 0, applied.stderr


def test_a_page_with_windows_line_endings_keeps_them(root):
    wing = root / "wiki/wing.md"
    wing.write_bytes(wing.read_bytes().replace(b"\n", b"\r\n"))
    insert_above(root, 1)
    assert groundwiki(root, "lock", "--fix-moved").returncode == 0
    data = wing.read_bytes()
    assert b"notes.md#L4-L5 -->\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_dry_run_without_fix_moved_is_a_usage_error(root):
    done = groundwiki(root, "lock", "--dry-run")
    assert done.returncode == 2 and "--dry-run goes with --fix-moved" in done.stderr
