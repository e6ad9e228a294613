"""`groundwiki cite`, run as a user runs it: the comment printed, added to a page named by alias
after the sentence it supports (or after a line the writer names, or at the end when no sentence
matches), the closest lines offered, and what to do when a source or a page is unknown. (How a quote
is located in a source is tested in-process in tests/core/test_cite.py.)"""

from __future__ import annotations

import json
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
    # No sentence of the page says it: the end of the page, and the output says so.
    assert "no sentence of wiki/wing.md shares half of the quote's words" in appended.stderr
    assert "appended <!-- from: raw-sources/notes.md#L8 --> to the end of" in appended.stderr
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


# The quote's words stand in the frontmatter, in a fence and twice in the text: the comment goes
# after the first sentence of text that shares the most of them, in the middle of its line.
CLAIMS = """---
summary: The model was tested at Mach 0.8.
---
# Wing

```text
The model was tested at Mach 0.8.
```

Wings flutter at speed. The model was tested
at Mach 0.8 in the tunnel. Nothing broke.

- The model was tested at Mach 0.8 again.
"""


@pytest.fixture
def claims_root(tmp_path: Path) -> Path:
    write_wiki(
        tmp_path,
        {"index.md": page(kind="overview", title="Home", body="See [[wing]].\n"), "wing.md": ""},
        {"notes.md": NOTES},
    )
    (tmp_path / "wiki/wing.md").write_bytes(CLAIMS.replace("\n", "\r\n").encode())
    return tmp_path


def test_cite_page_puts_the_comment_after_the_sentence_that_matches_the_quote(claims_root):
    wing = claims_root / "wiki/wing.md"
    done = cite(claims_root, "notes.md", "The model was tested at Mach 0.8.", "--page", "wing")
    assert done.returncode == 0, done.stderr
    marked = "at Mach 0.8 in the tunnel. <!-- from: raw-sources/notes.md#L8 --> Nothing broke."
    assert wing.read_bytes().decode() == CLAIMS.replace(
        "at Mach 0.8 in the tunnel. Nothing broke.", marked
    ).replace("\n", "\r\n")  # that one change, the line endings kept
    assert "at wiki/wing.md:11, after the sentence sharing 5 of the quote's 5 words" in (
        done.stderr
    )
    # A quote that shares more with that sentence than with any other: after the first comment.
    quote = "The model was tested at Mach 0.8. Flutter is a self-excited vibration."
    again = cite(claims_root, "notes.md", quote, "--page", "wing")
    assert again.returncode == 0, again.stderr
    both = marked.replace("--> ", "--> <!-- from: raw-sources/notes.md#L8-L9 --> ")
    assert both in wing.read_text()
    lint = groundwiki("-q", "lint", "--format", "json", cwd=claims_root)
    findings = json.loads(lint.stdout)["findings"]
    cited = sorted((f["line"], f["detail"]) for f in findings if f["rule"] == "unlocked-source")
    assert cited == [(11, "raw-sources/notes.md#L8"), (11, "raw-sources/notes.md#L8-L9")]


def test_cite_page_after_a_line_puts_it_there_and_refuses_code_and_frontmatter(claims_root):
    wing = claims_root / "wiki/wing.md"
    before = wing.read_bytes()
    for line, why in (("2", "is in the frontmatter"), ("7", "is code"), ("9", "not a line of")):
        refused = cite(claims_root, "notes.md", "Mach 0.8.", "--page", "wing", "--after", line)
        assert refused.returncode == 2, refused.stderr
        assert why in refused.stderr and "nothing was changed" in refused.stderr
        assert wing.read_bytes() == before
    args = ("notes.md", "Mach 0.8.", "--page", "wing", "--after", "13")
    shown = cite(claims_root, *args, "--dry-run")
    assert shown.returncode == 0 and wing.read_bytes() == before
    added = "+- The model was tested at Mach 0.8 again. <!-- from: raw-sources/notes.md#L8 -->"
    assert added in shown.stdout
    lone = cite(claims_root, "notes.md", "Mach 0.8.", "--after", "13")
    assert lone.returncode == 2 and "--after goes with --page" in lone.stderr
