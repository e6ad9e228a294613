"""Properties on arbitrary input: the frontmatter reader and the chunker never crash; text the
core's writer writes stays text, to the compiler and on the site."""

from __future__ import annotations

import re
from html import unescape

import pytest
import yaml
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.edit.writer import write_page
from groundwiki.core.read.frontmatter import check_contract, split_page
from groundwiki.core.read.markdown import parse_body
from groundwiki.core.read.pages import read_page
from groundwiki.core.render.body.convert import MarkdownConverter
from groundwiki.core.render.page import render_page
from groundwiki.core.sources.chunking import chunk_text
from groundwiki.core.sources.extract import Extracted, _extract_html, _markdown_heading_lines
from groundwiki.core.sources.tokens import load_tokenizer
from helpers.wikis import write_wiki
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Text that is likely to hit the interesting paths: fences, colons, brackets, newlines.
PIECES = [
    "---",
    "\n",
    ": ",
    "[",
    "]",
    "[[",
    "]]",
    "#",
    "- ",
    "`",
    "```",
    "<!--",
    "-->",
    "|",
    "'",
    '"',
    " ",
]
page_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=60).map(
    "".join
)
SETTINGS = settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)


@SETTINGS
@given(page_text)
def test_any_page_text_gives_data_or_a_finding(text):
    split = split_page(text, "wiki/x.md")
    data, problems = check_contract(split.data, split.field_lines, "wiki/x.md")
    assert isinstance(data, dict)
    for problem in (*split.problems, *problems):
        assert problem.at.path == "wiki/x.md" and problem.at.line >= 1 and problem.hint
    structure = parse_body(split.body, "wiki/x.md", split.body_line)
    for link in structure.links:
        assert link.at.line >= 1


one_line = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=40
).filter(lambda s: s.strip() == s and s)
valid_frontmatter = st.fixed_dictionaries(
    {"summary": one_line},
    optional={
        "title": one_line,
        "tags": st.lists(one_line, unique=True, max_size=4),
        "refs": st.lists(one_line, max_size=4),
        "aliases": st.lists(one_line, max_size=3),
        "usage_mode": st.sampled_from(["always", "auto", "never"]),
        "kind": st.sampled_from(["page", "overview"]),
        "owner": one_line,
    },
)


@SETTINGS
@given(valid_frontmatter)
def test_valid_frontmatter_round_trips_without_findings(fields):
    text = "---\n" + yaml.safe_dump(fields, allow_unicode=True) + "---\nbody\n"
    split = split_page(text, "wiki/x.md")
    data, problems = check_contract(split.data, split.field_lines, "wiki/x.md")
    assert (split.problems, problems) == ((), ())
    assert data == fields


def extracted(fmt: str, text: str) -> Extracted:
    if fmt == "html":
        return _extract_html(text)
    if fmt == "markdown":
        return Extracted(fmt, text, frozenset(_markdown_heading_lines(text)))
    return Extracted(fmt, text)


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["\n", "# ", "## H\n", "<h2>", "</h2>", ". ", "<p>"]),
            st.text(max_size=80),
        ),
        max_size=60,
    ).map("".join),
    st.sampled_from(["text", "markdown", "csv", "html"]),
)
def test_any_text_chunks_within_budget_and_deterministically(text, fmt):
    source = extracted(fmt, text)
    chunks = chunk_text("x.txt", source)
    tokenizer = load_tokenizer()
    lines = (source.text or "").split("\n")
    for chunk in chunks:
        measured = len(tokenizer.encode(chunk.text).ids)
        assert measured == chunk.tokens <= 256
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.text.strip()
    if (source.text or "").strip():
        assert chunks
    assert len({c.id for c in chunks}) == len(chunks)
    assert chunks == chunk_text("x.txt", extracted(fmt, text))


# --- the core's writer: plain text stays plain text --------------------------------------------

# Every mark the wiki reads, and what sits around one: brackets, hashes, line starts, breaks
# Markdown and Python see differently, backslashes that could undo an escape.
WIKI_PIECES = [
    *("[[", "]]", "![[", "[", "](", "x.md", ")", "]: ", "[!note]", "[^1]", "|"),
    *("#", "#tag", " #", "(#", "##", "# ", "\\", "\\#", "`", "```", "~~~", "$$"),
    *("<!--", "-->", "<b>", "</b>", "<a href='x.md'>", "&amp;", "&#35;", "%%", "%", "=="),
    *("=", "===", "---", "-", "- ", "* ", "+ ", "1. ", "2) ", "> ", ">", "!!! ", "??? "),
    *("^id", " ^block-1", "^", "from: x.md#L1", "    ", "\t", " ", "\n", "\r", "\r\n"),
    *("\u2028", "\u2029", "\x85", "\x0c", "\u00a0", "é", "_", "*", ":", "\x02", "\ue000"),
]
prose = st.lists(st.one_of(st.sampled_from(WIKI_PIECES), st.text(max_size=6)), max_size=40).map(
    "".join
)


@pytest.fixture(scope="module")
def one_page_wiki(tmp_path_factory):
    root = tmp_path_factory.mktemp("written")
    (root / "wiki").mkdir()
    config = load_config(write_wiki(root, {}))
    return config, root / "wiki" / "doc.md"


@SETTINGS
@given(text=prose)
def test_written_text_compiles_to_a_page_with_no_wiki_syntax(one_page_wiki, text):
    config, path = one_page_wiki
    write_page(path, {"title": "Doc", "summary": "S."}, text)
    page = read_page(path, config)
    assert (page.title, page.summary, page.tags) == ("Doc", "S.", ())
    assert (page.links, page.headings, page.blocks) == ((), (), ())
    assert (page.citations, page.problems) == ((), ())
    assert page.body_map is not None and page.body_map.comments == ()
    # No `%%` comment blanked any of it.
    assert page.body == split_page(path.read_text(encoding="utf-8"), "doc.md").body


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


@SETTINGS
@given(text=prose)
def test_written_text_shows_its_words_on_the_site(one_page_wiki, text):
    """The rendered body (Python-Markdown, as the site converts it; slots left empty, so a word
    turned into a link or an anchor is missing) shows the text's words in their order."""
    config, path = one_page_wiki
    write_page(path, {"title": "Doc", "summary": "S."}, text)
    wiki = compile_wiki(config)
    rendered = render_page(wiki, wiki.pages["doc"], wiki.layout, {})
    html = MarkdownConverter()(rendered.markdown)
    html = re.sub(r'<div class="gw-slot" id="gw-slot-\d+"></div>', "", html)
    assert _words(unescape(re.sub(r"<[^>]+>", " ", html))) == _words(text)
