"""Locating a quote in a raw source's extracted text, as the lines a provenance comment cites."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from groundwiki.core.evidence.cite import locate
from groundwiki.core.model.records import Source
from groundwiki.core.sources.extract import extract
from helpers.wikis import page, write_wiki
from test_extract import minimal_pdf, write

NOTES = """# Wing flutter

Flutter is a self-excited vibration
of a lifting surface at speed.

## Tests

The model was tested at Mach 0.8.
Flutter is a self-excited vibration.
"""


def source(tmp_path: Path, name: str, data: str | bytes) -> Source:
    path = write(tmp_path, name, data)
    got = extract(path)
    return Source(name, path, got.format, got.text, got.content_hash, got.heading_lines)


def test_a_quote_wrapped_over_lines_is_cited_by_the_lines_it_spans(tmp_path):
    notes = source(tmp_path, "notes.md", NOTES)
    found = locate(notes, "Flutter is a self-excited   vibration of a lifting surface")
    assert found.found is not None and (found.found.start, found.found.end) == (3, 4)
    assert found.found.spec("raw-sources/notes.md") == "raw-sources/notes.md#L3-L4"
    assert found.occurrences == 1


def test_a_quote_on_one_line_gives_a_single_line_and_counts_its_occurrences(tmp_path):
    found = locate(source(tmp_path, "notes.md", NOTES), "a self-excited vibration")
    assert found.found is not None and found.found.spec("n.md") == "n.md#L3"
    assert found.occurrences == 2  # the first place, and a warning that it is not unique


def test_case_and_punctuation_count_and_the_closest_lines_are_offered(tmp_path):
    notes = source(tmp_path, "notes.md", NOTES)
    found = locate(notes, "the model was tested at mach 0.9")
    assert found.found is None and found.occurrences == 0
    assert found.candidates and (found.candidates[0].start, found.candidates[0].end) == (8, 8)
    assert 0.5 < found.candidates[0].score < 1.0
    spans = [(c.start, c.end) for c in found.candidates]
    assert all(a[1] < b[0] or a[0] > b[1] for a in spans for b in spans if a != b)  # apart


def test_a_quote_sharing_no_word_with_the_source_has_no_candidates(tmp_path):
    found = locate(source(tmp_path, "notes.md", NOTES), "zebra quagga")
    assert found.found is None and found.candidates == ()


def test_html_csv_and_pdf_are_cited_by_their_extracted_lines(tmp_path):
    html = source(
        tmp_path,
        "page.html",
        "<html><body><h1>Report</h1>\n<p>Lift rises\nwith speed.</p></body></html>",
    )
    where = locate(html, "Lift rises with speed.").found
    assert where is not None and html.lines[where.start - 1].strip().startswith("Lift")
    table = source(tmp_path, "runs.csv", "run,mach\n1,0.8\n2,0.9\n")
    assert locate(table, "2,0.9").found.spec("runs.csv") == "runs.csv#L3"
    pdf = source(tmp_path, "doc.pdf", minimal_pdf(["First page text.", "Second page text."]))
    second = locate(pdf, "Second page text.").found
    assert second is not None and "Second page text." in pdf.lines[second.start - 1]


def test_an_empty_quote_or_a_source_without_text_is_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        locate(source(tmp_path, "notes.md", NOTES), "  \n ")
    broken = Source("x.pdf", tmp_path / "x.pdf", "pdf", None, None, problem="not a PDF")
    with pytest.raises(ValueError, match=r"x\.pdf has no text to cite: not a PDF"):
        locate(broken, "anything")


# --- `groundwiki cite`, run as a user runs it ----------------------------------------------------

GROUNDWIKI = str(Path(sys.executable).parent / "groundwiki")


def cite(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GROUNDWIKI, "-q", "cite", *args], cwd=root, capture_output=True, text=True, timeout=120
    )


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
    lint = subprocess.run(
        [GROUNDWIKI, "-q", "lint"], cwd=wiki_root, capture_output=True, text=True, timeout=120
    )
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


def test_the_handbooks_copy_of_the_help_is_what_the_command_prints():
    import os

    shown = subprocess.run(
        [GROUNDWIKI, "cite", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "100"},
    ).stdout
    copy = Path(__file__).parents[2] / "raw-sources/cli/groundwiki-cite-help.txt"
    assert copy.read_text() == "$ groundwiki cite --help\n" + shown, (
        "regenerate it: (echo '$ groundwiki cite --help'; COLUMNS=100 groundwiki cite --help)"
    )
