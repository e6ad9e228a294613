"""Raw sources in a .zip (each member a source of its own, `bundle.zip!/notes/a.md`) and in
LaTeX: archives built by the tests with the real libraries, cited, locked and chunked in a real
compile; hostile archives and LaTeX, each one finding (never a crash or a stall)."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import docx
import openpyxl
from groundwiki.cli.dispatch import main as groundwiki
from groundwiki.core import compile_wiki, load_config, run_lint
from groundwiki.core.evidence.cite import locate
from groundwiki.core.evidence.lock import write_lock
from groundwiki.core.sources.archive import MAX_DEPTH, read_archive
from groundwiki.core.sources.extract import extract, extract_bytes
from groundwiki.core.sources.latex import MAX_LATEX_BYTES
from groundwiki.core.sources.raw_sources import chunk_source, source_named
from groundwiki.core.wiki.compiler import CompileCache
from helpers.wikis import page, write_wiki

NOTES = "# Queue\n\nRetries back off exponentially.\nThe limit is five.\n"
PAPER = r"""\documentclass{article}
\begin{document}
\section{Flutter}
Flutter is a \emph{self-excited}   vibration % of wings
of a lifting surface, $v > v_f$.

\subsection*{Tests}
The model was tested
% at Mach 0.7 first
at Mach 0.8.
\end{document}
"""


def zipped(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def word_document() -> bytes:
    document = docx.Document()
    document.add_heading("Deploy queue", level=1)
    document.add_paragraph("The worker restarts nightly.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def workbook() -> bytes:
    book = openpyxl.Workbook()
    book.active.title = "Costs"
    book.active.append(["disk", 12.5])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def bundle() -> bytes:
    return zipped(
        {
            "notes/a.md": NOTES.encode(),
            "notes/": b"",  # a folder entry
            "deploy.docx": word_document(),
            "costs.xlsx": workbook(),
            "paper.tex": PAPER.encode(),
            "inner.zip": zipped({"deep.txt": b"Nested evidence line.\n"}),
            "__MACOSX/._a.md": b"resource fork",
            ".DS_Store": b"\x00\x01",
        }
    )


def members_of(data: bytes) -> dict[str, object]:
    members, whole = read_archive(io.BytesIO(data), len(data))
    assert whole is None, whole
    return {m.name: m.extracted for m in members}


def whole_problem(data: bytes) -> str:
    _, whole = read_archive(io.BytesIO(data), len(data))
    assert whole is not None and whole.problem and whole.hint
    return whole.problem


def test_latex_gives_a_line_per_paragraph_and_section_titles_start_sections() -> None:
    found = extract_bytes("paper.tex", PAPER.encode())
    assert found.problem is None
    assert found.text == (
        "Flutter\n"
        "Flutter is a self-excited vibration of a lifting surface, $v > v_f$.\n"
        "Tests\n"
        "The model was tested at Mach 0.8.\n"
    )
    assert found.heading_lines == {1, 3}


def test_damaged_huge_or_deeply_nested_latex_is_one_finding(tmp_path: Path) -> None:
    nested = extract_bytes("deep.tex", b"{" * 50_000 + b"x" + b"}" * 50_000)
    assert nested.text is None and "too deeply" in (nested.problem or "")
    huge = tmp_path / "huge.tex"
    with open(huge, "wb") as stream:  # sparse: 25 MB on the page, nothing written
        stream.truncate(25_000_000)
    found = extract(huge)
    assert found.text is None and f"at most {MAX_LATEX_BYTES:,}" in (found.problem or "")
    binary = extract_bytes("b.tex", b"\x00\x01\x02")
    assert binary.text is None and binary.problem
    unbalanced = extract_bytes("u.tex", rb"\section{Open \emph{x}" + b"\n\nText } } {\n")
    assert unbalanced.problem is None and "Open x" in (unbalanced.text or "")


def test_every_member_is_read_by_its_own_format() -> None:
    found = members_of(bundle())
    assert sorted(found) == [
        "costs.xlsx",
        "deploy.docx",
        "inner.zip!/deep.txt",
        "notes/a.md",
        "paper.tex",
    ]
    texts = {name: getattr(extracted, "text", None) for name, extracted in found.items()}
    assert texts["notes/a.md"] == NOTES
    assert texts["deploy.docx"] == "Deploy queue\nThe worker restarts nightly.\n"
    assert texts["costs.xlsx"] == "# Costs\ndisk | 12.5\n"
    assert texts["inner.zip!/deep.txt"] == "Nested evidence line.\n"
    assert "Mach 0.8." in (texts["paper.tex"] or "")


def test_members_are_cited_locked_chunked_and_drift(tmp_path: Path) -> None:
    body = (
        "Retries back off.\n<!-- from: raw-sources/evidence/bundle.zip!/notes/a.md#L3-L4 -->\n\n"
        "Nested.\n<!-- from: raw-sources/evidence/bundle.zip!/inner.zip!/deep.txt#L1 -->\n"
    )
    config_file = write_wiki(tmp_path, {"p.md": page(body=body)}, {"evidence/bundle.zip": bundle()})
    wiki = compile_wiki(load_config(config_file))
    assert "evidence/bundle.zip" not in wiki.sources  # not an unsupported file
    member = wiki.sources["evidence/bundle.zip!/notes/a.md"]
    assert member.abs_path == tmp_path / "raw-sources/evidence/bundle.zip"
    assert member.in_archive and member.text == NOTES
    chunks = chunk_source(member)
    assert chunks and all(c.source == member.path for c in chunks)
    rules = {f.rule for f in run_lint(wiki).findings}
    assert not rules & {"missing-source", "invalid-citation", "source-outside-raw"}
    assert not rules & {"unreadable-source", "line-range-out-of-bounds"}, rules
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    assert "raw-sources/evidence/bundle.zip!/notes/a.md#L3-L4" in wiki.config.lock_path.read_text()
    rules = {f.rule for f in run_lint(compile_wiki(wiki.config)).findings}
    assert "drifted-source" not in rules and "unlocked-source" not in rules
    # The archive changes: the cited member's lines with it, and the inner zip is damaged.
    (tmp_path / "raw-sources/evidence/bundle.zip").write_bytes(
        zipped({"notes/a.md": NOTES.replace("five", "nine").encode(), "inner.zip": b""})
    )
    after = run_lint(compile_wiki(load_config(config_file))).findings
    assert "drifted-source" in {f.rule for f in after}
    assert any(
        f.rule == "unreadable-source"
        and f.message.startswith(
            "skipped raw source 'raw-sources/evidence/bundle.zip!/inner.zip': cannot read the "
            "inner archive"
        )
        for f in after
    )


def test_a_quote_in_a_member_is_found_and_cite_prints_its_comment(
    tmp_path: Path, capsys: object
) -> None:
    write_wiki(tmp_path, {"p.md": page()}, {"evidence/bundle.zip": bundle()})
    config = load_config(tmp_path / "mkdocs.yml")
    source = source_named(config, "evidence/bundle.zip!/notes/a.md")
    assert source is not None
    located = locate(source, "The limit is five.")
    assert located.found is not None and (located.found.start, located.found.end) == (4, 4)
    assert source_named(config, "evidence/bundle.zip!/nothing.md") is None
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = groundwiki(
            ["-q", "cite", "raw-sources/evidence/bundle.zip!/deploy.docx", "restarts nightly"]
        )
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out  # type: ignore[attr-defined]
    assert status == 0
    assert printed == "<!-- from: raw-sources/evidence/bundle.zip!/deploy.docx#L2 -->\n"


def test_a_member_that_cannot_be_read_is_its_own_finding(tmp_path: Path) -> None:
    data = zipped({"good.md": b"fine\n", "broken.docx": b"not a zip", "image.png": b"\x89PNG"})
    config_file = write_wiki(tmp_path, {"p.md": page()}, {"b.zip": data})
    findings = run_lint(compile_wiki(load_config(config_file))).findings
    unreadable = {f.message for f in findings if f.rule == "unreadable-source"}
    assert any("docx" in m for m in unreadable) and any("'.png'" in m for m in unreadable)
    assert any("'raw-sources/b.zip!/broken.docx'" in m for m in unreadable)


def test_a_zip_bomb_is_refused_before_it_is_inflated() -> None:
    # How fast, and in how much memory: bench/hostile_sources.py.
    bomb = zipped({"zeros.txt": b"\0" * 20_000_000})
    problem = whole_problem(bomb)
    assert "times its size (at most 200)" in problem


def test_a_member_larger_than_its_header_says_is_stopped_at_the_declared_size() -> None:
    honest = zipped({"a.txt": b"a" * 50_000 + b"\n", "b.md": b"ok\n"})
    # The central directory declares 10 bytes for a.txt; its data inflates to 50,001.
    lying = honest.replace((50_001).to_bytes(4, "little"), (10).to_bytes(4, "little"))
    assert lying != honest
    found = members_of(lying)
    assert getattr(found["a.txt"], "text", "") is None
    assert "cannot inflate the member" in (getattr(found["a.txt"], "problem", "") or "")
    assert getattr(found["b.md"], "text", None) == "ok\n"


def test_archives_nested_too_deep_are_a_finding() -> None:
    deepest = zipped({"c.txt": b"third level\n"})
    data = zipped({"one.zip": zipped({"two.zip": deepest, "b.txt": b"second\n"})})
    found = members_of(data)
    assert getattr(found["one.zip!/b.txt"], "text", None) == "second\n"
    problem = getattr(found["one.zip!/two.zip"], "problem", "")
    assert f"nested deeper than {MAX_DEPTH} levels" in problem


def test_member_names_leading_out_of_the_archive_are_refused() -> None:
    inner = zipped({"..\\up.md": b"x\n"})  # a backslash is a Windows zip's slash
    data = zipped(
        {"../escape.md": b"x\n", "/etc/passwd.txt": b"x\n", "ok.md": b"fine\n", "in.zip": inner}
    )
    members, whole = read_archive(io.BytesIO(data), len(data))
    assert [m.name for m in members] == ["ok.md"]
    assert whole is not None and "'../escape.md'" in (whole.problem or "")
    assert "'/etc/passwd.txt'" in (whole.problem or "")
    assert "'in.zip!/../up.md'" in (whole.problem or "")


def test_an_encrypted_member_is_a_finding() -> None:
    data = bytearray(zipped({"secret.md": b"hidden\n"}, zipfile.ZIP_STORED))
    # Set the "encrypted" flag in the local header and in the central directory entry.
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature) + offset
        data[at] |= 0x1
    found = members_of(bytes(data))
    assert "encrypted" in (getattr(found["secret.md"], "problem", "") or "")


def test_a_file_named_zip_that_is_no_zip_is_one_finding(tmp_path: Path) -> None:
    assert "cannot read the archive" in whole_problem(b"just text, not a zip\n")
    config_file = write_wiki(tmp_path, {"p.md": page()}, {"fake.zip": b"not a zip"})
    wiki = compile_wiki(load_config(config_file))
    assert list(wiki.sources) == ["fake.zip"]
    assert wiki.sources["fake.zip"].problem and "cannot read the archive" in str(
        wiki.sources["fake.zip"].problem
    )


def test_too_many_members_are_refused_as_a_whole(monkeypatch: object) -> None:
    from groundwiki.core.sources import archive

    monkeypatch.setattr(archive, "MAX_MEMBERS", 3)  # type: ignore[attr-defined]
    data = zipped({f"{n}.md": b"x\n" for n in range(4)})
    assert "4 members (at most 3)" in whole_problem(data)


def test_a_recompile_after_an_archive_changes_reads_its_members_again(tmp_path: Path) -> None:
    config_file = write_wiki(
        tmp_path, {"p.md": page()}, {"b.zip": zipped({"a.md": b"one\n", "b.md": b"two\n"})}
    )
    config = load_config(config_file)
    files = CompileCache()
    first = compile_wiki(config, files=files)
    assert sorted(first.sources) == ["b.zip!/a.md", "b.zip!/b.md"]
    again = compile_wiki(config, files=files)
    assert again.sources["b.zip!/a.md"] is first.sources["b.zip!/a.md"]  # from the cache
    archive = tmp_path / "raw-sources/b.zip"
    archive.write_bytes(zipped({"a.md": b"changed\n", "c.md": b"three\n"}))
    changed = compile_wiki(config, files=files, changed=[archive])
    assert sorted(changed.sources) == ["b.zip!/a.md", "b.zip!/c.md"]
    assert changed.sources["b.zip!/a.md"].text == "changed\n"
    archive.unlink()
    assert compile_wiki(config, files=files, changed=[archive]).sources == {}
