"""Hostile raw sources (issue 33): each must be one finding within 1 s of CPU and 100 MB of
memory, never a crash or a stall.

Each file is written here (by zipfile and by hand: a bomb, lying sizes, nesting, escaping names,
an encrypted member, a thing named .zip, too many members, entity bombs in SVG and in a Word
document, sheets of millions of cells, a Word document too long for its reader, LaTeX nested
past the stack and past its size) and read
as a raw source is read (`read_file`: an archive's members, or the file's extraction) in a child
process limited to 1 GiB of address space. Printed per file: the CPU seconds and the growth of
the child's peak RSS over an interpreter that has imported the same modules, the finding, and
whether it met both bounds.

    .venv/bin/python bench/hostile_sources.py [--out hostile_sources.json]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from harness import RESULTS, machine_facts, write_results

# The archives are built as the tests build theirs.
TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "core")]
from test_archive_sources import zipped  # noqa: E402

CPU_S = 1.0
RSS_MB = 100
MEMORY_LIMIT = 1 << 30

# Run in the child: read one file as the compile would, report cost and what it found.
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.sources.raw_sources import read_file
import docx, openpyxl, odf.opendocument, pylatexenc.latex2text, pypdf  # what reading may load
resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
config = load_config(Path(sys.argv[1]) / "mkdocs.yml")
path = config.raw_dir / sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.process_time()
try:
    sources = read_file(path, config)
    found = [(s.path, s.problem) for s in sources if s.problem]
    crashed = ""
except BaseException as exc:  # the bench reports it: a crash is what must not happen
    found, crashed = [], f"{type(exc).__name__}: {exc}"[:200]
seconds = time.process_time() - started
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"cpu_s": seconds, "rss_mb": grown, "found": found, "crashed": crashed}))
""".replace("MEMORY", str(MEMORY_LIMIT))


def lying_sizes() -> bytes:
    honest = zipped({"a.txt": b"a" * 50_000_000 + b"\n"})
    return honest.replace((50_000_001).to_bytes(4, "little"), (10).to_bytes(4, "little"))


def encrypted() -> bytes:
    data = bytearray(zipped({"secret.md": b"hidden\n"}, zipfile.ZIP_STORED))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        data[data.index(signature) + offset] |= 0x1
    return bytes(data)


LAUGHS = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
ENTITY_BOMB = f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY l0 "lol">{LAUGHS}]>'


def entity_docx() -> bytes:
    body = (
        f'{ENTITY_BOMB}<w:document xmlns:w="http://schemas.openxmlformats.org/'
        'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p></w:body>'
        "</w:document>"
    )
    types = (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="xml" ContentType="application/xml"/><Override '
        'PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    rels = (
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
        '2006/relationships"><Relationship Id="r1" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
        "</Relationships>"
    )
    return zipped(
        {"[Content_Types].xml": types.encode(), "_rels/.rels": rels.encode(),
         "word/document.xml": body.encode()}
    )  # fmt: skip


def huge_sheet() -> bytes:
    """A workbook of 3,000,000 cells, its XML written by hand (openpyxl takes minutes)."""
    row = "".join(f'<c t="n"><v>{n}</v></c>' for n in range(100))
    rows = "".join(f"<row>{row}</row>" for _ in range(30_000))
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    sheet = (
        f'<?xml version="1.0"?><worksheet xmlns="{main}"><sheetData>{rows}</sheetData></worksheet>'
    )
    book = (
        f'<?xml version="1.0"?><workbook xmlns="{main}" xmlns:r="{rel}"><sheets>'
        '<sheet name="Big" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    book_rels = (
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
        f'2006/relationships"><Relationship Id="rId1" Type="{rel}/worksheet" '
        'Target="worksheets/sheet1.xml"/></Relationships>'
    )
    rels = (
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
        f'2006/relationships"><Relationship Id="rId1" Type="{rel}/officeDocument" '
        'Target="xl/workbook.xml"/></Relationships>'
    )
    types = (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="xml" ContentType="application/xml"/>'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Override PartName="/xl/workbook.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override '
        'PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.worksheet+xml"/></Types>'
    )
    return zipped(
        {"[Content_Types].xml": types.encode(), "_rels/.rels": rels.encode(),
         "xl/workbook.xml": book.encode(), "xl/_rels/workbook.xml.rels": book_rels.encode(),
         "xl/worksheets/sheet1.xml": sheet.encode()}
    )  # fmt: skip


def huge_ods() -> bytes:
    """An OpenDocument spreadsheet of 3,000,000 cells, its XML written by hand."""
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    )
    row = "<table:table-row>" + "<table:table-cell><text:p>1</text:p></table:table-cell>" * 100
    rows = (row + "</table:table-row>") * 30_000
    content = (
        f'<?xml version="1.0"?><office:document-content {ns}><office:body><office:spreadsheet>'
        f'<table:table table:name="Big">{rows}</table:table></office:spreadsheet></office:body>'
        "</office:document-content>"
    )
    manifest = (
        '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:'
        'opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" '
        'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
        archive.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
    return data.getvalue()


def long_document() -> bytes:
    """A Word document whose document.xml is 20 MB of paragraphs (incompressible enough)."""
    rng = random.Random(3)
    paragraphs = "".join(
        f"<w:p><w:r><w:t>{rng.random()} {rng.random()} {rng.random()}</w:t></w:r></w:p>"
        for _ in range(300_000)
    )
    body = (
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{paragraphs}</w:body></w:document>"
    )
    return zipped({"word/document.xml": body.encode()})


def hostile_files() -> dict[str, bytes]:
    deep = zipped({"c.txt": b"third level\n"})
    return {
        "bomb.zip": zipped({"zeros.txt": b"\0" * 200_000_000}),
        "nested-bomb.zip": zipped(
            {"inner.zip": zipped({"zeros.txt": b"\0" * 200_000_000})}, zipfile.ZIP_STORED
        ),
        "lying-sizes.zip": lying_sizes(),
        "too-deep.zip": zipped({"one.zip": zipped({"two.zip": deep})}),
        "escaping-names.zip": zipped({"../escape.md": b"x\n", "/etc/passwd.txt": b"x\n"}),
        "encrypted.zip": encrypted(),
        "not-a-zip.zip": b"just text, not a zip\n" * 1000,
        "many-members.zip": zipped({f"{n}.md": b"x\n" for n in range(10_001)}),
        "laughs.svg": f'{ENTITY_BOMB}<svg xmlns="http://www.w3.org/2000/svg"><text>&l9;</text></svg>'.encode(),
        "laughs.docx": entity_docx(),
        "huge-sheet.xlsx": huge_sheet(),
        "huge-sheet.ods": huge_ods(),
        "long-document.docx": long_document(),
        "nested-braces.tex": b"{" * 200_000 + b"x" + b"}" * 200_000,
        "too-long.tex": b"\\emph{a} " * 250_000,
    }  # fmt: skip


def measure(root: Path, name: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), name],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        return {"cpu_s": None, "rss_mb": None, "found": [], "crashed": done.stderr[-300:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "hostile_sources.json")
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine_facts(), "files": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "wiki").mkdir()
        (root / "wiki" / "index.md").write_text("---\nsummary: Home.\n---\n# Home\n")
        (root / "mkdocs.yml").write_text(
            "site_name: hostile\ndocs_dir: wiki\nplugins:\n  - groundwiki\n"
        )
        raw = root / "raw-sources"
        raw.mkdir()
        for name, data in hostile_files().items():
            (raw / name).write_bytes(data)
        width = max(map(len, hostile_files()))
        print(f"{'file':<{width}}  {'bytes':>10}  cpu s  rss MB  met  finding")
        for name in hostile_files():
            found = measure(root, name)
            met = (
                not found["crashed"]
                and bool(found["found"])
                and found["cpu_s"] <= CPU_S
                and found["rss_mb"] <= RSS_MB
            )
            found["met"] = met
            found["bytes"] = (raw / name).stat().st_size
            results["files"][name] = found
            what = found["crashed"] or "; ".join(f"{p}: {why}" for p, why in found["found"])
            cpu = "-" if found["cpu_s"] is None else f"{found['cpu_s']:.2f}"
            rss = "-" if found["rss_mb"] is None else f"{found['rss_mb']:.0f}"
            print(
                f"{name:<{width}}  {found['bytes']:>10,}  {cpu:>5}  {rss:>6}  "
                f"{'yes' if met else 'NO':>3}  {what[:110]}"
            )
    met = sum(1 for found in results["files"].values() if found["met"])
    print(f"{met} of {len(results['files'])} hostile files: a finding within {CPU_S:g} s and "
          f"{RSS_MB} MB")  # fmt: skip
    write_results(args.out, results)


if __name__ == "__main__":
    main()
