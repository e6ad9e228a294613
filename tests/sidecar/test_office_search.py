"""Every raw-source format found end to end: documents written by the libraries that read them
(and an archive holding some), each cited by a page at the line its words stand on, each found
by a chunk search over HTTP, and junk beside them never answered. A real in-process sidecar of
a small wiki (Whoosh on disk, no embedding model: the lexical lane ranks)."""

from __future__ import annotations

import base64
import io
import random
import zipfile
from pathlib import Path

import docx
import openpyxl
import pytest
from groundwiki.core import compile_wiki, load_config, run_lint
from groundwiki.core.evidence.cite import locate
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from helpers.wikis import page, write_wiki
from odf.draw import Frame, TextBox
from odf.draw import Page as Slide
from odf.opendocument import OpenDocumentPresentation, OpenDocumentSpreadsheet, OpenDocumentText
from odf.style import MasterPage, PageLayout
from odf.table import Table, TableCell, TableRow
from odf.text import P
from starlette.testclient import TestClient

pytestmark = pytest.mark.sidecar


def _saved(document: object) -> bytes:
    data = io.BytesIO()
    document.save(data)  # type: ignore[attr-defined]
    return data.getvalue()


def word_document(word: str) -> bytes:
    doc = docx.Document()
    doc.add_heading("Notes", level=1)
    doc.add_paragraph(f"The {word} valve was replaced in March.")
    return _saved(doc)


def workbook(word: str) -> bytes:
    book = openpyxl.Workbook()
    book.active.title = "Parts"
    book.active.append(["part", "supplier"])
    book.active.append([f"{word} gasket", "Acme"])
    return _saved(book)


def odf(kind: str, word: str) -> bytes:
    text = f"The {word} pump was serviced."
    if kind == "odt":
        document = OpenDocumentText()
        document.text.addElement(P(text="Notes"))
        document.text.addElement(P(text=text))
    elif kind == "ods":
        document = OpenDocumentSpreadsheet()
        table, row, cell = Table(name="Log"), TableRow(), TableCell()
        cell.addElement(P(text=text))
        row.addElement(cell)
        table.addElement(row)
        document.spreadsheet.addElement(table)
    else:
        document = OpenDocumentPresentation()
        layout = PageLayout(name="layout")
        document.automaticstyles.addElement(layout)
        master = MasterPage(name="master", pagelayoutname=layout)
        document.masterstyles.addElement(master)
        slide, frame, box = Slide(masterpagename=master), Frame(), TextBox()
        box.addElement(P(text=text))
        frame.addElement(box)
        slide.addElement(frame)
        document.presentation.addElement(slide)
    data = io.BytesIO()
    document.write(data)
    return data.getvalue()


def archive(members: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, content in members.items():
            bundle.writestr(name, content)
    return data.getvalue()


# Each source, the word only it holds, and the line of its extracted text the word is on.
SOURCES: dict[str, tuple[bytes, str, int]] = {
    "notes.docx": (word_document("quillfeather"), "quillfeather", 2),
    "parts.xlsx": (workbook("brassmoth"), "brassmoth", 3),
    "notes.odt": (odf("odt", "tinderjay"), "tinderjay", 2),
    "log.ods": (odf("ods", "copperwren"), "copperwren", 2),
    "review.odp": (odf("odp", "slatefinch"), "slatefinch", 2),
    "memo.rtf": (rb"{\rtf1\ansi\pard Opening.\par The emberlark seal leaked.\par}", "emberlark", 2),
    "chart.svg": (
        b'<svg xmlns="http://www.w3.org/2000/svg"><title>Chart</title>'
        b"<text>The mossgrebe series</text></svg>",
        "mossgrebe",
        2,
    ),
    "paper.tex": (
        b"\\section{Method}\n\nThe \\emph{dunlinhawk} rig ran for $n=3$ days. % a note\n",
        "dunlinhawk",
        2,
    ),
    "bundle.zip!/inner/readme.md": (b"", "sedgeplover", 3),
    "bundle.zip!/inner/spec.docx": (b"", "marshkite", 2),
}
BUNDLE = {
    "inner/readme.md": b"# Readme\n\nThe sedgeplover relay is spare.\n",
    "inner/spec.docx": word_document("marshkite"),
}


BLOB = base64.b64encode(random.Random(7).randbytes(4000)).decode()
DUMP = bytes(b or 1 for b in random.Random(8).randbytes(3000)).decode("latin-1")


@pytest.fixture(scope="module")
def wiki_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("formats")
    files: dict[str, str | bytes] = {
        name: data for name, (data, _, _) in SOURCES.items() if "!/" not in name
    }
    files["bundle.zip"] = archive(BUNDLE)
    # Junk beside them: an attachment and a binary read as Latin-1.
    files["attachment.txt"] = "\n".join(BLOB[i : i + 76] for i in range(0, len(BLOB), 76))
    files["dump.txt"] = DUMP
    citations = "".join(
        f"Cited. <!-- from: raw-sources/{name}#L{line} -->\n\n"
        for name, (_, _, line) in SOURCES.items()
    )
    write_wiki(root, {"index.md": page(body=f"# Home\n\n{citations}")}, files)
    return root


@pytest.fixture(scope="module")
def client(wiki_root):
    service = SidecarService(load_sidecar(wiki_root / "mkdocs.yml"), embed=False)
    service.start(watch=False)
    yield TestClient(create_app(service), base_url="http://127.0.0.1")
    service.stop()


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_format_is_found_by_chunk_search(client, name):
    word = SOURCES[name][1]
    hits = client.get("/chunks/search", params={"q": word}).json()["hits"]
    assert hits and hits[0]["source"] == name, hits
    assert word in hits[0]["text"]


def test_every_format_is_cited_at_the_line_its_words_stand_on(wiki_root):
    wiki = compile_wiki(load_config(wiki_root / "mkdocs.yml"))
    report = run_lint(wiki)
    bad = [f for f in report.findings if f.rule in ("invalid-citation", "missing-source")]
    assert bad == []
    for name, (_, word, line) in SOURCES.items():
        source = wiki.sources[name]
        assert word in source.lines[line - 1], (name, source.lines)
        found = locate(source, word).found  # what `groundwiki cite` does with a quote
        assert found is not None and (found.start, found.end) == (line, line), (name, found)


def test_junk_beside_them_is_never_answered(client):
    status = client.get("/status").json()["skipped_chunks"]
    assert status["encoded"] >= 1 and status["binary"] >= 1 and status["sources"] == 2
    # Queries made of the junk's own text, which the lexical lane would match were it indexed.
    for query in (BLOB[:76], BLOB[2000:2076], " ".join(DUMP[:400].split()[:8])):
        hits = client.post("/chunks/search", json={"query": query, "limit": 50}).json()["hits"]
        assert not [hit for hit in hits if hit["source"] in ("attachment.txt", "dump.txt")]


def test_groundwiki_status_prints_the_junk_it_skipped(client, capsys):
    from groundwiki.cli.sidecar_commands import _print_status

    _print_status(client.get("/status").json(), "http://127.0.0.1:8765")
    shown = capsys.readouterr().out
    assert "junk chunks not indexed:" in shown and "in 2 raw sources" in shown
    assert "binary data" in shown and "encoded data (base64, hex)" in shown
