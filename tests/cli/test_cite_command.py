"""`groundwiki cite`, run as a user runs it: the comment printed, appended to a page named by
alias, the closest lines offered, and what to do when a source or a page is unknown. (How a quote
is located in a source is tested in-process in tests/core/test_cite.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.commands import groundwiki
from helpers.wikis import page, write_wiki

NOTES = """# Wing flutter

Flutter is a self-excited vibration
of a lifting surface at speed.

## Tests

The model was tested at Mach 0.8.
Flutter is a self-excited vibration.
"""


def cite(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return groundwiki("-q", "cite", *args, cwd=root)


@pytest.fixture
def wiki_root(tmp_path: Path) -> Path:
    write_wiki(
        tmp_path,
        {"index.md": page(kind="overview", title="Home"), "wing.md": page(aliases=["flutter"])},
        {"notes.md": NOTES},
    )
    return tmp_path


def test_cite_prints_the_comment_and_appends_it_to_a_page_named_by_alias(wiki_root):
    done = cite(wiki_root, "raw-sources/notes.md", "Flutter is a self-excited vibration of a")
    assert (done.returncode, done.stdout) == (0, "<!-- from: raw-sources/notes.md#L3-L4 -->\n")
    assert "stands 2 times" not in done.stderr
    wing = wiki_root / "wiki/wing.md"
    before = wing.read_text()
    shown = cite(wiki_root, "notes.md", "Mach 0.8.", "--page", "flutter", "--dry-run")
    assert shown.returncode == 0 and wing.read_text() == before  # a diff, nothing written
    assert "+++ b/wiki/wing.md" in shown.stdout
    assert "+<!-- from: raw-sources/notes.md#L8 -->" in shown.stdout
    appended = cite(wiki_root, "notes.md", "Mach 0.8.", "--page", "flutter")
    assert appended.returncode == 0
    assert wing.read_text() == before + "<!-- from: raw-sources/notes.md#L8 -->\n"
    lint = groundwiki("-q", "lint", cwd=wiki_root)
    assert "raw-sources/notes.md#L8" in lint.stdout  # the new citation is read (and unlocked)
    assert "invalid-citation" not in lint.stdout and "missing-source" not in lint.stdout


def test_cite_offers_the_closest_lines_and_changes_nothing_when_the_text_is_not_there(wiki_root):
    wing = wiki_root / "wiki/wing.md"
    before = wing.read_text()
    done = cite(wiki_root, "raw-sources/notes.md", "tested at mach 0.9", "--page", "wing")
    assert done.returncode == 1 and done.stdout == "" and wing.read_text() == before
    assert "does not stand verbatim in raw-sources/notes.md" in done.stderr
    assert "<!-- from: raw-sources/notes.md#L8 -->" in done.stderr  # the closest line first


def test_cite_refuses_an_unknown_source_or_page_with_what_to_do(wiki_root):
    missing = cite(wiki_root, "raw-sources/nope.md", "x")
    assert missing.returncode == 2 and "no raw source 'raw-sources/nope.md'" in missing.stderr
    outside = cite(wiki_root, "../mkdocs.yml", "site_name")
    assert outside.returncode == 2 and "no raw source" in outside.stderr
    page_gone = cite(wiki_root, "notes.md", "Mach 0.8.", "--page", "nowhere")
    assert page_gone.returncode == 2 and "no page with key or alias 'nowhere'" in page_gone.stderr
