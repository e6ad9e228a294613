"""Text extraction by type; unreadable input is skipped with a reason, never a crash."""

from __future__ import annotations

from pathlib import Path

from groundwiki.core.sources.extract import extract
from helpers.pdfs import minimal_pdf


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_text_formats_are_kept_verbatim_with_normalised_newlines(tmp_path):
    for name in ["a.md", "b.txt", "c.rst", "d.json", "e.csv", "f.yaml", "g.markdown", "h.tsv"]:
        result = extract(write(tmp_path, name, "line one\r\nline two\r\n"))
        assert result.text == "line one\nline two\n", name
        assert result.problem is None


def test_markdown_headings_outside_fences_start_sections(tmp_path):
    result = extract(write(tmp_path, "a.md", "# One\ntext\n```\n# not a heading\n```\n## Two\n"))
    assert result.heading_lines == frozenset({1, 6})


def test_html_drops_script_and_style_and_keeps_line_numbers(tmp_path):
    html = (
        "<html><head><style>p {color: red}</style>\n"
        "<script>var secret = 1;</script></head>\n"
        "<body><h1>Title</h1>\n"
        "<p>First &amp; <b>bold</b></p>\n"
        "<p>Second</p></body></html>\n"
    )
    result = extract(write(tmp_path, "page.html", html))
    lines = result.text.split("\n")
    assert len(lines) == len(html.split("\n"))
    assert lines[2] == "Title"
    assert lines[3] == "First & bold"
    assert "secret" not in result.text and "color" not in result.text
    assert result.heading_lines == frozenset({3})


def test_html_inline_tags_add_no_spaces_and_block_tags_separate_words(tmp_path):
    html = (
        "<p>Keep <em>up to date</em>: run <code>make</code>.</p><p>Next</p>\n<li>a</li><li>b</li>\n"
    )
    assert extract(write(tmp_path, "a.html", html)).text == "Keep up to date: run make. Next\na b\n"


def test_binary_files_are_skipped_with_a_reason(tmp_path):
    result = extract(write(tmp_path, "blob.txt", b"\x00\x01\x02binary"))
    assert result.text is None
    assert "binary" in result.problem and result.hint


def test_unsupported_types_are_skipped_with_a_reason_and_a_fix(tmp_path):
    for name in ["image.png", "Makefile", "settings.toml"]:
        result = extract(write(tmp_path, name, "text that is not read\n"))
        assert result.text is None, name
        assert "not a supported raw-source type" in result.problem
        assert ".txt" in result.hint


def test_non_utf8_text_is_skipped_with_a_reason(tmp_path):
    result = extract(write(tmp_path, "latin.txt", "caf\xe9".encode("latin-1")))
    assert result.text is None and "UTF-8" in result.problem


def test_a_broken_pdf_is_skipped_with_a_reason(tmp_path):
    result = extract(write(tmp_path, "broken.pdf", b"%PDF-1.4\nthis is not a pdf"))
    assert result.text is None and "PDF" in result.problem


def test_pdf_text_is_extracted_page_by_page(tmp_path):
    path = tmp_path / "doc.pdf"
    path.write_bytes(minimal_pdf(["First page text.", "Second page text."]))
    result = extract(path)
    assert result.problem is None
    assert "First page text." in result.text and "Second page text." in result.text
    assert result.text.index("First") < result.text.index("Second")
    assert len(result.heading_lines) == 2
