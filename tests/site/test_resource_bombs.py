"""Hostile content that is small on disk but huge to process: one finding each, bounded cost.

The bombs run in a child process under a 1 GiB address-space limit, so a regression fails the
test (MemoryError, a crash) instead of eating the machine.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from groundwiki.core import run_lint
from groundwiki.core.read.markdown import parse_body
from groundwiki.core.render.page import render_page
from groundwiki.core.sources.chunking import chunk_text
from groundwiki.core.sources.extract import Extracted
from groundwiki.core.wiki.graph import build_graph
from groundwiki.core.wiki.transclusion import MAX_TRANSCLUSIONS
from helpers.pdfs import minimal_pdf
from helpers.wikis import page, write_wiki

BIN = Path(sys.executable).parent
MEMORY_LIMIT = 1 << 30
FINDING = re.compile(r"^(\S+):(\d+):(\d+): (error|warning|info) ([a-z-]+): (.+)$", re.M)


def run_limited(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, timeout=120, preexec_fn=limit,
        env=env,
    )  # fmt: skip


def lint_findings(root: Path) -> list[tuple[str, ...]]:
    result = run_limited(str(BIN / "groundwiki"), "lint", cwd=root)
    assert result.returncode in {0, 1}, result.stderr[-2000:]
    return FINDING.findall(result.stdout)


def billion_laughs(levels: int = 9) -> str:
    """The classic: each anchor repeats the one before nine times, in a few hundred bytes."""
    lines = ["  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"  - &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]")
    return "---\nsummary: A page.\ntags:\n" + "\n".join(lines) + "\n---\nBody.\n"


# --- YAML frontmatter --------------------------------------------------------------------------


def test_a_yaml_alias_bomb_in_tags_is_one_finding_in_bounded_memory(tmp_path):
    bomb = billion_laughs()
    assert len(bomb.encode()) < 600
    write_wiki(tmp_path, {"bomb.md": bomb, "ok.md": page(body="[[bomb]]\n")})
    errors = [f for f in lint_findings(tmp_path) if f[3] == "error"]
    assert len(errors) == 1, errors
    path, line, _, _, rule, message = errors[0]
    assert (path, rule) == ("wiki/bomb.md", "invalid-frontmatter")
    assert "aliases" in message and int(line) > 3  # the alias where expansion passes the bound


def test_a_yaml_alias_used_inside_its_own_anchor_is_a_finding(make_wiki):
    wiki = make_wiki({"loop.md": "---\nsummary: s\ntags: &t [a, *t]\n---\n"})
    (found,) = [f for f in run_lint(wiki).findings if f.rule == "invalid-frontmatter"]
    assert (found.line, "own anchor" in found.message) == (3, True)
    assert "&name / *name" in found.hint


@pytest.mark.parametrize(
    "nested",
    ["tags:\n  " + "- " * 100_000 + "deep", "tags: " + "[" * 20_000 + "]" * 20_000],
    ids=["block", "flow"],
)
def test_deeply_nested_frontmatter_is_one_finding(tmp_path, nested):
    write_wiki(tmp_path, {"deep.md": f"---\nsummary: s\n{nested}\n---\n"})
    errors = [f for f in lint_findings(tmp_path) if f[3] == "error"]
    assert [(f[0], f[4]) for f in errors] == [("wiki/deep.md", "invalid-frontmatter")]
    assert "levels deep" in errors[0][5]


def test_a_megabyte_summary_line_followed_by_a_newline_is_checked_in_one_pass(tmp_path):
    # The schema's one-line pattern backtracked quadratically in Python's re: hours for 1 MB.
    summary = "x" * (1 << 20) + "\\nsecond line"
    write_wiki(tmp_path, {"long.md": f'---\nsummary: "{summary}"\n---\n'})
    errors = [f for f in lint_findings(tmp_path) if f[3] == "error"]
    assert [(f[0], f[4]) for f in errors] == [("wiki/long.md", "schema-violation")]
    assert "single line" in errors[0][5]


def test_duplicate_tags_are_still_found(make_wiki):
    wiki = make_wiki({"a.md": page(tags=["x", "y", "x"])})
    (found,) = [f for f in run_lint(wiki).findings if f.rule == "schema-violation"]
    assert "non-unique" in found.message and found.detail == "tags"


def test_a_long_frontmatter_value_is_shortened_in_its_message(make_wiki):
    # A mapping where a list belongs (a single string is a list of one, as in Obsidian).
    wiki = make_wiki({"long.md": page(tags={"k": "x" * 100_000})})
    (found,) = [f for f in run_lint(wiki).findings if f.rule == "schema-violation"]
    assert len(found.message) < 300
    assert "100,009 characters" in found.message and "not of type 'array'" in found.message


def test_a_long_wikilink_is_shortened_in_its_message(make_wiki):
    wiki = make_wiki({"a.md": page(body=f"[[{'y' * 50_000}]]\n")})
    (found,) = [f for f in run_lint(wiki).findings if f.rule == "broken-link"]
    assert len(found.message) < 300 and "50,004 characters" in found.message
    assert len(found.detail) < 300


# --- PDF ----------------------------------------------------------------------------------------


def zeros_pdf(size: int) -> bytes:
    """One page whose content stream inflates to `size` bytes of zeros (about 1,000:1)."""
    deflate = zlib.compressobj(9)
    block = b"\0" * (1 << 20)
    stream = b"".join(deflate.compress(block) for _ in range(size >> 20)) + deflate.flush()
    font = (
        b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] " + font + b" /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def source_finding(make_wiki, name: str, data: bytes):
    wiki = make_wiki({"a.md": page()}, {name: data, "fine.txt": "Readable evidence.\n"})
    found = [f for f in run_lint(wiki).findings if f.rule == "unreadable-source"]
    assert wiki.sources["fine.txt"].text is not None  # the others are still read
    assert [f.path for f in found] == [f"raw-sources/{name}"]
    return found[0]


def test_a_pdf_decompression_bomb_is_an_unreadable_source(make_wiki):
    bomb = zeros_pdf(100 << 20)  # past pypdf's 75 MB FlateDecode limit
    assert len(bomb) < 150_000
    found = source_finding(make_wiki, "bomb.pdf", bomb)
    assert "safety limits" in found.message and ".txt" in found.hint


@pytest.mark.parametrize(
    "damaged",
    [
        # pypdf 7.1 raises AttributeError on a trailer that is not a dictionary ...
        re.sub(rb"trailer\n<<.*?>>", b"trailer\n/Oops", minimal_pdf(["Some text."])),
        # ... and AssertionError on an object reference inside a content stream.
        minimal_pdf(["Some text.) Tj 5 0 R (x"]),
    ],
    ids=["trailer-not-a-dictionary", "reference-in-content-stream"],
)
def test_any_error_from_a_damaged_pdf_is_an_unreadable_source(make_wiki, damaged):
    found = source_finding(make_wiki, "damaged.pdf", damaged)
    assert "cannot read the PDF" in found.message and "re-export" in found.hint


def test_a_pdf_bomb_does_not_stop_mkdocs_build(tmp_path):
    config = write_wiki(tmp_path, {"index.md": page()}, {"bomb.pdf": zeros_pdf(100 << 20)})
    mkdocs = str(BIN / "mkdocs")
    result = run_limited(mkdocs, "build", "-f", str(config), "-d", "site", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "raw-sources/bomb.pdf:1:1: unreadable-source:" in result.stderr
    assert "safety limits" in result.stderr


# --- Chunking ------------------------------------------------------------------------------------


class CountingText(str):
    """Text that counts the characters copied out of it by slicing."""

    copied = 0

    def __getitem__(self, key):  # type: ignore[override]
        piece = super().__getitem__(key)
        CountingText.copied += len(piece)
        return piece


def test_chunking_copies_a_long_paragraph_a_bounded_number_of_times():
    # One paragraph of 2,000 sentences: slicing off the rest of it per sentence copied it
    # about 1,000 times over, which made a 20 MB file without blank lines take past 10 minutes.
    text = CountingText("".join(f"Sentence number {n} is here. " for n in range(2_000)))
    CountingText.copied = 0
    chunks = chunk_text("long.txt", Extracted("text", text))
    assert chunks and CountingText.copied < 10 * len(text)


# --- Many links on one page ----------------------------------------------------------------------


class CountingBody(str):
    """A page body that counts the characters its `find` calls scan."""

    scanned = 0

    def find(self, needle, start=0, end=None):  # type: ignore[override]
        at = super().find(needle, start, end if end is not None else len(self))
        CountingBody.scanned += (at if at >= 0 else len(self)) - start
        return at


def test_locating_reference_links_scans_the_page_a_bounded_number_of_times():
    # `[text][label]` has no `](`: the search for one from each link ran to the end of the page.
    links = " ".join(f"[link {n}][p{n % 10}]" for n in range(2_000))
    definitions = "".join(f"\n[p{n}]: p{n}.md" for n in range(10))
    body = CountingBody(f"{links}\n{definitions}\n")
    CountingBody.scanned = 0
    found = parse_body(body, "wiki/hub.md", 1)
    assert len(found.links) == 2_000
    assert CountingBody.scanned < 5 * len(body)


# --- Transclusion fan-out and deep lists ----------------------------------------------------------


def fan_out(pages: int = 7, embeds: int = 10) -> dict[str, str]:
    """Each page embeds the next `embeds` times: under 1 KB in all, `embeds ** depth` deep."""
    wiki = {
        f"p{n}.md": page(body=f"Page {n}.\n\n" + f"![[p{n + 1}]]\n\n" * embeds)
        for n in range(pages - 1)
    }
    wiki[f"p{pages - 1}.md"] = page(body="The last page.\n")
    return wiki


def test_a_transclusion_fan_out_is_cut_at_the_pages_budget_and_says_so(make_wiki):
    # Uncapped, p0 showed 111,110 transclusions: 26 MB of Markdown in 38 s.
    wiki = make_wiki(fan_out())
    assert sum(len(text) for text in fan_out().values()) < 1_500
    rendered = render_page(wiki, wiki.pages["p0"], wiki.layout, build_graph(wiki).backlinks())
    html = rendered.markdown + "".join(rendered.slots.values())
    shown = html.count("Page ") + html.count("The last page.")  # each transcluded body's text
    assert MAX_TRANSCLUSIONS <= shown <= MAX_TRANSCLUSIONS + 1  # and p0's own
    assert "gw-transclusion-capped" in html
    assert f"already shows {MAX_TRANSCLUSIONS:,} transclusions" in html
    assert len(html) < 2_000_000


def test_lint_names_each_page_whose_transclusions_are_capped(make_wiki):
    wiki = make_wiki(fan_out())
    found = [f for f in run_lint(wiki).findings if f.rule == "transclusion-capped"]
    # p3 shows 1,110 (three levels of ten); p4 shows 110, under the budget.
    assert [f.path for f in found] == [f"wiki/p{n}.md" for n in range(4)]
    assert (found[0].line, found[0].severity) == (6, "warning")
    assert "![[p1]]" in found[0].message and "transclusions" in found[0].message


def nested_list(levels: int) -> str:
    return "".join("    " * level + f"- level {level}\n" for level in range(levels))


def test_a_500_level_nested_list_builds_and_lint_names_it(tmp_path):
    # Python-Markdown reads each level with a recursive call: RecursionError, in plain MkDocs
    # too. The site shows the items past 20 levels at the 20th.
    config = write_wiki(tmp_path, {"index.md": page(body=nested_list(500))})
    mkdocs = str(BIN / "mkdocs")
    result = run_limited(mkdocs, "build", "-f", str(config), "-d", "site", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "RecursionError" not in result.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "level 499" in html and "level 0" in html
    assert "wiki/index.md:25:1: deep-list:" in result.stderr


def test_a_list_20_levels_deep_keeps_its_nesting(make_wiki):
    wiki = make_wiki({"a.md": page(body=nested_list(21))})
    assert not [f for f in run_lint(wiki).findings if f.rule == "deep-list"]


def test_a_long_comment_blanked_out_is_not_a_deep_list(make_wiki):
    # `%% … %%` is blanked to spaces before parsing: a line of 120 spaces is blank, not nested
    # (6,247 false deep-list findings on the obsidian-hub vault's notes).
    body = "Text.\n\n%% " + "a note to the editors " * 6 + "%%\n"
    wiki = make_wiki({"index.md": page("Home.", body)})
    assert not [f for f in run_lint(wiki).findings if f.rule == "deep-list"]
