"""Raw sources in office formats: documents written by the same libraries that read them, and
hostile files, each one finding (never a crash or a stall) with the rest of the wiki read."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import openpyxl
import pytest
from groundwiki.core.sources.extract import extract
from groundwiki.core.sources.office import MAX_CELLS, MAX_INFLATED  # noqa: F401
from odf.draw import Frame, Page, TextBox
from odf.opendocument import (
    OpenDocumentPresentation,
    OpenDocumentSpreadsheet,
    OpenDocumentText,
)
from odf.style import MasterPage, PageLayout
from odf.table import Table, TableCell, TableRow
from odf.text import H, P


def test_a_word_document_gives_a_line_per_paragraph_and_table_row(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Deploy queue", level=1)
    document.add_paragraph("Retries back off   exponentially.")
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).text, table.cell(0, 1).text, table.cell(1, 0).text = "a", "b", "c"
    document.add_paragraph("After the table.")
    document.save(tmp_path / "notes.docx")
    found = extract(tmp_path / "notes.docx")
    assert found.problem is None
    assert found.text == (
        "Deploy queue\nRetries back off exponentially.\na | b\nc\nAfter the table.\n"
    )
    assert found.heading_lines == {1}


def test_a_workbook_gives_each_sheet_and_its_rows(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Costs"
    sheet.append(["item", "cost", None])
    sheet.append([None, None])  # an empty row is no line
    sheet.append(["disk", 12.5])
    workbook.create_sheet("Empty")
    workbook.save(tmp_path / "costs.xlsx")
    found = extract(tmp_path / "costs.xlsx")
    assert found.text == "# Costs\nitem | cost\ndisk | 12.5\n# Empty\n"
    assert found.heading_lines == {1, 4}


def odf_table(name: str, *values: str) -> Table:
    """An OpenDocument table of one row holding `values`."""
    table = Table(name=name)
    row = TableRow()
    for value in values:
        cell = TableCell()
        cell.addElement(P(text=value))
        row.addElement(cell)
    table.addElement(row)
    return table


def test_opendocument_text_sheets_and_slides(tmp_path: Path) -> None:
    text = OpenDocumentText()
    text.text.addElement(H(outlinelevel=1, text="Runbook"))
    text.text.addElement(P(text="Restart the worker."))
    text.text.addElement(odf_table("t", "host", "port"))
    text.save(str(tmp_path / "runbook.odt"))
    found = extract(tmp_path / "runbook.odt")
    assert found.text == "Runbook\nRestart the worker.\nhost | port\n"
    assert found.heading_lines == {1}

    sheets = OpenDocumentSpreadsheet()
    sheets.spreadsheet.addElement(odf_table("Hosts", "web-1", "10.0.0.1"))
    sheets.save(str(tmp_path / "hosts.ods"))
    assert extract(tmp_path / "hosts.ods").text == "# Hosts\nweb-1 | 10.0.0.1\n"

    slides = OpenDocumentPresentation()
    layout = PageLayout(name="layout")
    slides.automaticstyles.addElement(layout)
    master = MasterPage(name="master", pagelayoutname=layout)
    slides.masterstyles.addElement(master)
    page = Page(masterpagename=master)
    frame = Frame(width="10cm", height="2cm", x="1cm", y="1cm")
    box = TextBox()
    box.addElement(P(text="Quarterly latency"))
    frame.addElement(box)
    page.addElement(frame)
    slides.presentation.addElement(page)
    slides.save(str(tmp_path / "review.odp"))
    assert extract(tmp_path / "review.odp").text == "# Slide 1\nQuarterly latency\n"


def test_rtf_and_svg_give_their_text(tmp_path: Path) -> None:
    (tmp_path / "memo.rtf").write_text(
        r"{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}\f0\pard First paragraph.\par Second.\par}"
    )
    assert extract(tmp_path / "memo.rtf").text == "First paragraph.\nSecond.\n"
    (tmp_path / "chart.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><title>Chart</title>'
        '<text x="1">Latency <tspan>p50</tspan></text><rect/></svg>'
    )
    found = extract(tmp_path / "chart.svg")
    assert found.text == "Chart\nLatency p50\n" and found.heading_lines == {1}


def test_xml_entities_are_refused_not_expanded(tmp_path: Path) -> None:
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    (tmp_path / "bomb.svg").write_text(
        f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY l0 "lol">{laughs}]>'
        '<svg xmlns="http://www.w3.org/2000/svg"><text>&l9;</text></svg>'
    )
    found = extract(tmp_path / "bomb.svg")
    assert found.text is None and "DTD or XML entities" in (found.problem or "")


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"\0" * (MAX_INFLATED + 1))
    (tmp_path / "bomb.docx").write_bytes(buffer.getvalue())
    found = extract(tmp_path / "bomb.docx")
    assert found.text is None and "inflates" in (found.problem or "")


def test_a_damaged_document_is_one_finding(tmp_path: Path) -> None:
    (tmp_path / "broken.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    found = extract(tmp_path / "broken.xlsx")
    assert found.text is None and found.problem and found.hint


def test_a_huge_sheet_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A small limit for the test (the default is MAX_CELLS): the bound is what is checked.
    monkeypatch.setattr("groundwiki.core.sources.office.MAX_CELLS", 100)
    workbook = openpyxl.Workbook()
    for n in range(30):
        workbook.active.append([n, n, n, n])
    workbook.save(tmp_path / "big.xlsx")
    found = extract(tmp_path / "big.xlsx")
    assert found.text is None and "more than 100 cells" in (found.problem or "")


def test_a_document_too_large_for_its_reader_is_refused_unread(tmp_path: Path, monkeypatch) -> None:
    from groundwiki.core.sources import office

    document = docx.Document()
    document.add_paragraph("A paragraph. " * 400)
    document.save(tmp_path / "long.docx")
    monkeypatch.setitem(office._MAIN_PART, "docx", ("word/document.xml", 1000))
    found = extract(tmp_path / "long.docx")
    assert found.text is None and "word/document.xml inflates to" in (found.problem or "")


def test_a_workbook_s_cells_are_counted_before_any_is_read(tmp_path: Path, monkeypatch) -> None:
    from groundwiki.core.sources import office

    book = openpyxl.Workbook()
    for row in range(30):
        book.active.append([row, row * 2, "x"])
    book.save(tmp_path / "grid.xlsx")
    monkeypatch.setattr(office, "MAX_CELLS", 50)

    def unread(*args: object, **kwargs: object) -> None:
        raise AssertionError("the workbook was opened")

    monkeypatch.setattr(openpyxl, "load_workbook", unread)
    found = extract(tmp_path / "grid.xlsx")
    assert found.text is None and "more than 50 cells" in (found.problem or "")


def test_libreoffice_s_padding_of_empty_cells_is_not_counted(tmp_path: Path, monkeypatch) -> None:
    from groundwiki.core.sources import office

    sheets = OpenDocumentSpreadsheet()
    table = Table(name="Pad")
    for value in ("a", "b", "c"):
        row = TableRow()
        cell = TableCell()
        cell.addElement(P(text=value))
        row.addElement(cell)
        row.addElement(TableCell(numbercolumnsrepeated=1023))  # empty, to the last column
        table.addElement(row)
    sheets.spreadsheet.addElement(table)
    sheets.save(str(tmp_path / "pad.ods"))
    monkeypatch.setattr(office, "MAX_CELLS", 100)
    assert extract(tmp_path / "pad.ods").text == "# Pad\na\nb\nc\n"
