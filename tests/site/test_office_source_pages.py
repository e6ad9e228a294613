"""Raw-source pages of office documents and archives on a real `mkdocs build` (slow): a
workbook's sheets as tables whose rows are the cited lines, a document's paragraphs as wrapped
lines, an archive's member as a page of its own, the writer's cell text escaped."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import openpyxl
import pytest
from helpers.site_builds import build_material_site, html
from helpers.wikis import page, write_wiki

HOSTILE = "<img src=x onerror=alert(1)>"


def workbook() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Costs"
    sheet.append(["item", "cost"])
    sheet.append(["disk", 12.5])
    sheet.append([HOSTILE, 3])
    book.create_sheet("Staff").append(["name", "team", "since"])
    data = io.BytesIO()
    book.save(data)
    return data.getvalue()


def document() -> bytes:
    doc = docx.Document()
    doc.add_heading("Deploy queue", level=1)
    doc.add_paragraph("Retries back off exponentially. " * 20)
    data = io.BytesIO()
    doc.save(data)
    return data.getvalue()


def archive() -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("notes/a.md", "# Notes\n\nThe bundle's note.\n")
    return data.getvalue()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("office")
    body = (
        "# Home\n\nDisk costs. <!-- from: raw-sources/costs.xlsx#L2-L3 -->\n\n"
        "Retries. <!-- from: raw-sources/queue.docx#L2 -->\n\n"
        "Noted. <!-- from: raw-sources/bundle.zip!/notes/a.md#L3 -->\n"
    )
    write_wiki(
        root,
        {"index.md": page(body=body)},
        {"costs.xlsx": workbook(), "queue.docx": document(), "bundle.zip": archive()},
    )
    result = build_material_site(root)
    assert result.returncode == 0, result.stderr
    return root


def test_a_workbook_s_page_shows_each_sheet_as_a_table_of_numbered_rows(site):
    text = html(site, "raw-sources/costs.xlsx")
    table = text[text.index('<table class="gw-sheet">') :]
    rows = re.findall(r'<tr class="gw-line[^"]*" id="L(\d+)">(.*?)</tr>', table)
    assert [int(n) for n, _ in rows] == [1, 2, 3, 4, 5, 6]
    assert "<th" in rows[0][1] and ">Costs</th>" in rows[0][1]
    assert re.findall(r"<td>(.*?)</td>", rows[2][1]) == ["disk", "12.5"]
    assert ">Staff</th>" in rows[4][1]
    assert re.findall(r"<td>(.*?)</td>", rows[5][1]) == ["name", "team", "since"]
    # The cell's markup is text, never an element.
    assert HOSTILE not in text and "&lt;img src=x onerror=alert(1)&gt;" in text


def test_a_document_s_page_shows_a_line_per_paragraph_wrapped(site):
    text = html(site, "raw-sources/queue.docx")
    assert 'class="gw-line" id="L2"' in text
    assert "Retries back off exponentially." in text and '<pre class="gw-source">' in text


def test_an_archive_member_has_a_page_the_citation_links_to(site):
    text = html(site, "raw-sources/bundle.zip!/notes/a.md")
    assert 'id="L3"' in text and "bundle&#x27;s note." in text
    home = html(site, "")
    assert "bundle.zip!/notes/a.md/#L3" in home or "bundle.zip%21/notes/a.md/#L3" in home
