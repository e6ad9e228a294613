"""Provenance: citations parse, and never leave the raw-sources folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from groundwiki.core.model.records import Citation, Location, Problem
from groundwiki.core.read.provenance import PathGuard, comment_spec, parse_citation
from helpers.wikis import page

AT = Location("wiki/p.md", 3, 1)


def cite(spec: str, raw_dir: Path) -> Citation | Problem:
    return parse_citation(spec, AT, "inline", "raw-sources", PathGuard(raw_dir))


def test_comment_spec_reads_only_from_comments():
    assert comment_spec(" from: raw-sources/a.md#L1-L2 ") == "raw-sources/a.md#L1-L2"
    assert comment_spec(" TODO: later ") is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("raw-sources/a.md", ("a.md", None, None)),
        ("raw-sources/dir/b.txt#L10-L24", ("dir/b.txt", 10, 24)),
        ("raw-sources/dir/b.txt#L7", ("dir/b.txt", 7, 7)),
        ("raw-sources/dir/b.txt#L7-9", ("dir/b.txt", 7, 9)),
    ],
)
def test_valid_citations(tmp_path, spec, expected):
    citation = cite(spec, tmp_path / "raw-sources")
    assert isinstance(citation, Citation)
    assert (citation.source, citation.start, citation.end) == expected


@pytest.mark.parametrize(
    "spec",
    ["raw-sources/../secrets.txt", "/etc/passwd", "../raw-sources/a.md", "raw-sources/a/../../b"],
)
def test_paths_that_escape_are_refused(tmp_path, spec):
    problem = cite(spec, tmp_path / "raw-sources")
    assert isinstance(problem, Problem)
    assert problem.rule == "source-outside-raw"


def test_a_symlink_out_of_raw_sources_is_refused(tmp_path):
    raw = tmp_path / "raw-sources"
    raw.mkdir()
    (tmp_path / "secret.txt").write_text("x")
    os.symlink(tmp_path / "secret.txt", raw / "inside.txt")
    problem = cite("raw-sources/inside.txt", raw)
    assert isinstance(problem, Problem) and problem.rule == "source-outside-raw"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("raw-sources/a.md#lines", "#L10-L24"),
        ("raw-sources/a.md#L9-L3", "first line"),
        ("a.md", "raw-sources/a.md"),
    ],
)
def test_malformed_citations_say_how_to_write_them(tmp_path, spec, fragment):
    problem = cite(spec, tmp_path / "raw-sources")
    assert isinstance(problem, Problem) and problem.rule == "invalid-citation"
    assert fragment in problem.hint


def test_inline_and_frontmatter_citations_are_collected_in_order(make_wiki):
    body = "Claim. <!-- from: raw-sources/a.md#L2-L3 -->\n\n<!-- from: raw-sources/b.md -->\n\n<!-- just a note -->\n"
    wiki = make_wiki(
        {"p.md": page(body=body, sources=["raw-sources/c.md"])},
        {"a.md": "1\n2\n3\n", "b.md": "b\n", "c.md": "c\n"},
    )
    citations = wiki.pages["p"].citations
    assert [(c.source, c.origin, c.at.line) for c in citations] == [
        ("c.md", "frontmatter", 2),
        ("a.md", "inline", 6),  # after 4 frontmatter lines and the fence
        ("b.md", "inline", 8),
    ]


def test_frontmatter_sources_accept_the_same_range_forms_as_comments(make_wiki):
    sources = ["raw-sources/a.md#L1-2", "raw-sources/a.md#L2", "raw-sources/a.md#L1-L3"]
    wiki = make_wiki({"p.md": page(sources=sources)}, {"a.md": "1\n2\n3\n"})
    assert wiki.pages["p"].problems == ()
    assert [(c.start, c.end) for c in wiki.pages["p"].citations] == [(1, 2), (2, 2), (1, 3)]


def test_provenance_comments_in_code_are_not_citations(make_wiki):
    body = "```html\n<!-- from: raw-sources/a.md -->\n```\n\n`<!-- from: raw-sources/a.md -->`\n"
    wiki = make_wiki({"p.md": page(body=body)}, {"a.md": "a\n"})
    assert wiki.pages["p"].citations == ()


def test_a_huge_line_number_is_an_invalid_citation_with_a_bounded_message(tmp_path):
    spec = "raw-sources/a.md#L1-L" + "9" * 4301  # past Python's int digit limit
    problem = cite(spec, tmp_path / "raw-sources")
    assert isinstance(problem, Problem) and problem.rule == "invalid-citation"
    assert len(problem.message) < 300 and len(problem.detail) < 300
    assert "9" * 100 not in problem.message


def test_a_huge_line_number_does_not_stop_the_compile(make_wiki):
    body = "Claim. <!-- from: raw-sources/a.md#L1-L" + "9" * 4301 + " -->\n"
    wiki = make_wiki({"p.md": page(body=body), "q.md": page(title="Q")}, {"a.md": "a\n"})
    assert [p.rule for p in wiki.pages["p"].problems] == ["invalid-citation"]
    assert "q" in wiki.pages
