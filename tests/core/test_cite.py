"""Locating a quote in a raw source's extracted text, as the lines a provenance comment cites.
(`groundwiki cite` run as a command is tested in tests/cli/test_cite_command.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from groundwiki.core.evidence.cite import locate
from groundwiki.core.model.records import Source
from groundwiki.core.sources.extract import extract
from helpers.pdfs import minimal_pdf
from test_extract import write

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
