"""Text from office documents: Word (.docx), OpenDocument (.odt, .ods, .odp), Excel (.xlsx),
RTF and SVG.

A citation's line numbers are lines of the extracted text, so each format says what a line is:
- .docx, .odt: one paragraph (a heading, a list item); a table row is one line, its cells
  joined by " | ";
- .xlsx, .ods: a `# <sheet name>` line, then one line per row that holds a value, its cells
  joined by " | " (trailing empty cells dropped);
- .odp: a `# Slide N` line, then one line per paragraph of the slide;
- .rtf: one paragraph, as the RTF's own paragraph marks end it;
- .svg: the text of one `<text>`, `<title>` or `<desc>` element.

Every extractor is bounded, since a raw source is untrusted: a zip container (all but RTF and
SVG are one) is refused before it is opened when it would inflate past `MAX_INFLATED` or by more
than `MAX_RATIO`, or when the XML part its reader builds whole in memory is larger than that
reader can take in seconds (`_MAIN_PART`); a workbook past `MAX_CELLS` cells is refused, its
cells counted before any is read; XML with entity declarations (billion laughs) is refused by
defusedxml. A refusal is one finding on that file; the rest of
the wiki is read as usual.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from io import BytesIO
from typing import Any

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.sources.extracted import Extracted
from groundwiki.core.sources.zip_bounds import MAX_INFLATED, MAX_RATIO, Refused, check_inflation

__all__ = ["MAX_CELLS", "MAX_INFLATED", "MAX_RATIO", "Refused", "extract_office"]

MAX_CELLS = 2_000_000  # cells of one workbook read, empty ones included
CELL_SEPARATOR = " | "

ZIPPED = {"docx", "odt", "ods", "odp", "xlsx"}


def extract_office(fmt: str, data: bytes) -> Extracted:
    """The text of an office document of format `fmt`, or a finding saying why there is none."""
    from defusedxml import DefusedXmlException

    try:
        if fmt in ZIPPED:
            _check_container(data, fmt)
        lines, headings = _EXTRACTORS[fmt](data)
    except DefusedXmlException as exc:
        return Extracted(
            fmt,
            None,
            problem=f"the file declares a DTD or XML entities, which are not read ({exc!r})",
            hint="re-save it from an editor that writes plain XML",
        )
    except Refused as exc:
        return Extracted(
            fmt,
            None,
            problem=f"the file goes past a safety limit: {exc}",
            hint="add the evidence as smaller files, or export its text as .txt",
        )
    except Exception as exc:  # a damaged document is one finding, never a failed build
        return Extracted(
            fmt,
            None,
            problem=f"cannot read the {fmt} file: {excerpt(f'{type(exc).__name__}: {exc}', 200)}",
            hint="re-save the document, or add its text as a .txt file",
        )
    return Extracted(fmt, "\n".join(lines) + ("\n" if lines else ""), frozenset(headings))


def _check_container(data: bytes, fmt: str) -> None:
    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"not a zip container ({exc})") from None
    with archive:
        check_inflation(archive.infolist(), len(data))
        part, limit = _MAIN_PART.get(fmt, ("", 0))
        if part in archive.namelist() and archive.getinfo(part).file_size > limit:
            size = archive.getinfo(part).file_size
            raise Refused(f"its {part} inflates to {size:,} bytes (at most {limit:,})")


# The XML part each reader builds whole in memory, and how large it may be: python-docx (lxml)
# reads a 9 MB document.xml in 5 s and 55 MB; odfpy, pure Python, a 7 MB content.xml in 7 s and
# 150 MB. A workbook is streamed, its cells counted first (`_count_xlsx_cells`).
_MAIN_PART = {
    "docx": ("word/document.xml", 16 * 1024 * 1024),
    **dict.fromkeys(("odt", "ods", "odp"), ("content.xml", 4 * 1024 * 1024)),
}


Lines = tuple[list[str], list[int]]  # the lines, and the 1-based ones that start a section


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.headings: list[int] = []

    def add(self, text: str, heading: bool = False) -> None:
        text = " ".join(text.split())
        if not text:
            return
        self.lines.append(text)
        if heading:
            self.headings.append(len(self.lines))

    def done(self) -> Lines:
        return self.lines, self.headings


def _docx(data: bytes) -> Lines:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(BytesIO(data))
    out = _Writer()
    # A paragraph's `style` looks its style up among all of them each time (2 ms: a minute for
    # a long document), so the names are read once and each paragraph gives its style's ID.
    names = {style.style_id: style.name or "" for style in document.styles}
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            style = names.get(block._p.style or "", "")
            out.add(block.text, heading=style.startswith(("Heading", "Title")))
        elif isinstance(block, Table):
            for row in block.rows:
                out.add(CELL_SEPARATOR.join(_trimmed(cell.text for cell in row.cells)))
    return out.done()


# A cell's start tag in a worksheet's XML (`<c r="A1">`, `<x:c>`), counted before openpyxl
# reads any: it reads some 50,000 cells a second, so a sheet of millions would be refused only
# after a minute. Counting the tags of the inflated XML takes a fraction of a second.
_CELL_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c[\s>/]")
_SCAN = 1 << 20  # bytes of a worksheet inflated at a time while its cells are counted


def _count_xlsx_cells(data: bytes) -> None:
    """Refuse a workbook whose worksheets hold more than `MAX_CELLS` cells, by their tags."""
    cells = 0
    with zipfile.ZipFile(BytesIO(data)) as archive:
        for info in archive.infolist():
            name = info.filename
            if not (name.startswith("xl/worksheets/") and name.endswith(".xml")):
                continue
            with archive.open(info) as stream:
                carry = b""
                while chunk := stream.read(_SCAN):
                    block = carry + chunk
                    # A tag cut by the chunk's end is counted with the next chunk.
                    cut = max(len(block) - 64, 0)
                    cells += len(_CELL_TAG.findall(block, 0, cut))
                    carry = block[cut:]
                    if cells > MAX_CELLS:
                        raise Refused(f"its sheets hold more than {MAX_CELLS:,} cells")
                cells += len(_CELL_TAG.findall(carry))
    if cells > MAX_CELLS:
        raise Refused(f"its sheets hold more than {MAX_CELLS:,} cells")


def _xlsx(data: bytes) -> Lines:
    import openpyxl

    _count_xlsx_cells(data)
    workbook = openpyxl.load_workbook(BytesIO(data), read_only=True, data_only=True)
    out = _Writer()
    cells = 0
    try:
        for sheet in workbook.worksheets:
            out.add(f"# {sheet.title}", heading=True)
            for row in sheet.iter_rows(values_only=True):
                cells += len(row)
                if cells > MAX_CELLS:
                    raise Refused(f"its sheets hold more than {MAX_CELLS:,} cells")
                out.add(CELL_SEPARATOR.join(_trimmed(_cell(v) for v in row)))
    finally:
        workbook.close()
    return out.done()


def _odf(data: bytes, fmt: str) -> Lines:
    from odf import opendocument, table, text
    from odf.draw import Page

    document = opendocument.load(BytesIO(data))
    out = _Writer()
    if fmt == "ods":
        cells = 0
        for sheet in document.spreadsheet.getElementsByType(table.Table):
            out.add(f"# {sheet.getAttribute('name')}", heading=True)
            for row in sheet.getElementsByType(table.TableRow):
                values = []
                for cell in row.getElementsByType(table.TableCell):
                    repeat = int(cell.getAttribute("numbercolumnsrepeated") or 1)
                    value = _odf_text(cell)
                    # LibreOffice pads each row with a run of empty cells to its last column:
                    # only a repeated value counts each time (it would be read each time).
                    cells += repeat if value else 1
                    if cells > MAX_CELLS:
                        raise Refused(f"its sheets hold more than {MAX_CELLS:,} cells")
                    values += [value] * min(repeat, 1024)
                out.add(CELL_SEPARATOR.join(_trimmed(values)))
        return out.done()
    if fmt == "odp":
        for number, page in enumerate(document.presentation.getElementsByType(Page), start=1):
            out.add(f"# Slide {number}", heading=True)
            for paragraph in page.getElementsByType(text.P):
                out.add(_odf_text(paragraph))
        return out.done()
    for element in _odf_blocks(document.text):
        if element.qname[1] == "h":
            out.add(_odf_text(element), heading=True)
        elif element.qname[1] == "table-row":
            row = [_odf_text(c) for c in element.getElementsByType(table.TableCell)]
            out.add(CELL_SEPARATOR.join(_trimmed(row)))
        else:
            out.add(_odf_text(element))
    return out.done()


def _odf_blocks(node: Any) -> Iterator[Any]:
    """Headings, paragraphs and table rows in document order (a paragraph inside a table
    cell is read with its row)."""
    for child in node.childNodes:
        name = getattr(child, "qname", (None, None))[1]
        if name in {"h", "p", "table-row"}:
            yield child
        elif name is not None:
            yield from _odf_blocks(child)


def _odf_text(node: Any) -> str:
    parts: list[str] = []

    def walk(current: Any) -> None:
        for child in current.childNodes:
            if child.nodeType == child.TEXT_NODE:
                parts.append(str(child.data))
            else:
                name = getattr(child, "qname", (None, None))[1]
                if name == "s":
                    parts.append(" " * int(child.getAttribute("c") or 1))
                elif name in {"tab", "line-break"}:
                    parts.append(" ")
                else:
                    walk(child)

    walk(node)
    return "".join(parts)


def _rtf(data: bytes) -> Lines:
    from striprtf.striprtf import rtf_to_text

    text = rtf_to_text(data.decode("latin-1"), errors="ignore")
    out = _Writer()
    for line in text.splitlines():
        out.add(line)
    return out.done()


def _svg(data: bytes) -> Lines:
    from defusedxml import ElementTree

    root = ElementTree.fromstring(data, forbid_dtd=True)
    out = _Writer()
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""
        if name in {"text", "title", "desc"}:
            out.add("".join(element.itertext()), heading=name == "title")
    return out.done()


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _trimmed(values: Iterable[str]) -> list[str]:
    cells = [" ".join(v.split()) for v in values]
    while cells and not cells[-1]:
        cells.pop()
    return cells


_EXTRACTORS: dict[str, Callable[[bytes], Lines]] = {
    "docx": _docx,
    "xlsx": _xlsx,
    "odt": lambda data: _odf(data, "odt"),
    "ods": lambda data: _odf(data, "ods"),
    "odp": lambda data: _odf(data, "odp"),
    "rtf": _rtf,
    "svg": _svg,
}
