"""Pages written from plain text by the core's writer read back as that text: no wiki syntax
comes out of it, and the frontmatter holds the fields given."""

from __future__ import annotations

import re
from html import unescape

import pytest
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.edit.writer import write_page
from groundwiki.core.render.body.convert import MarkdownConverter
from groundwiki.core.render.page import render_page
from groundwiki.core.wiki.graph import build_graph
from helpers.wikis import write_wiki


def written(tmp_path, text, **fields):
    config_file = write_wiki(tmp_path, {})
    write_page(tmp_path / "wiki" / "doc.md", {"title": "Doc", "summary": "S.", **fields}, text)
    return compile_wiki(load_config(config_file)).pages["doc"]


@pytest.mark.parametrize(
    "text",
    ["see [[other]]", "see [[[other]]]", "an embed ![[image.png]]", "a [[[[deep]]]] one"],
)
def test_brackets_in_the_text_make_no_link(tmp_path, text):
    assert written(tmp_path, text).links == ()


def test_a_comment_opener_in_the_text_is_text(tmp_path):
    page = written(tmp_path, "before <!-- from: a.md --> after")
    assert page.citations == () and page.problems == ()


@pytest.mark.parametrize("text", ["before %%hidden%% after", "a %%% run, hidden %%"])
def test_percent_signs_in_the_text_hide_nothing(tmp_path, text):
    assert "hidden" in written(tmp_path, text).body


def test_a_hash_opening_a_line_makes_no_heading_or_tag(tmp_path):
    page = written(tmp_path, "# not a heading\n  #nor-a-tag here")
    assert page.headings == () and page.tags == ()


def test_the_fields_are_the_frontmatter(tmp_path):
    page = written(tmp_path, "Text.", title="A: title — with ünïcode", summary="One line.")
    assert (page.title, page.summary) == ("A: title — with ünïcode", "One line.")


# --- what the site shows: the document's text, nothing made of it ------------------------------


def shown(tmp_path, text):
    """The written page compiled, and the text its rendered body shows (Python-Markdown with the
    extensions a site renders callouts with), spaces collapsed. Slots are left empty: the page's
    own parts (title, footer) live there, and a body that needed one was read as wiki syntax."""
    config_file = write_wiki(tmp_path, {})
    write_page(tmp_path / "wiki" / "doc.md", {"title": "Doc", "summary": "S."}, text)
    wiki = compile_wiki(load_config(config_file))
    page = wiki.pages["doc"]
    rendered = render_page(wiki, page, wiki.layout, build_graph(wiki).backlinks())
    html = MarkdownConverter()(rendered.markdown)
    html = re.sub(r'<div class="gw-slot" id="gw-slot-\d+"></div>', "", html)
    return page, " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def plain(text):
    return " ".join(text.split())


@pytest.mark.parametrize(
    "text",
    [
        "see #hashtag",
        "a (#paren) and [#bracket",
        "after a break\r#crtag",
        "after a line separator\u2028#lstag",
        "after code `x`#code and an escape \\!#bang",
    ],
)
def test_a_hash_inside_a_line_makes_no_tag(tmp_path, text):
    page, seen = shown(tmp_path, text)
    assert page.tags == ()
    assert seen == plain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Results\n=======\nmore text",
        "Second\n---\nx",
        "a line\n  -\nb",
        "> # quoted\n- # listed\n1. # numbered",
    ],
)
def test_no_line_makes_a_heading(tmp_path, text):
    page, seen = shown(tmp_path, text)
    assert page.headings == ()
    assert "<h" not in seen and plain(seen) == plain(text)


@pytest.mark.parametrize(
    "text",
    [
        "see [other page](other.md) and [src](../raw-sources/s.md)",
        "a [reference][r] link\n\n[r]: other.md",
        "an image ![shown](other.md)",
    ],
)
def test_a_markdown_link_in_the_text_is_text(tmp_path, text):
    page, seen = shown(tmp_path, text)
    assert page.links == ()
    assert plain(seen) == plain(text)


def test_a_callout_in_the_text_is_text(tmp_path):
    text = "> [!danger] Boo\n> text"
    assert shown(tmp_path, text)[1] == plain(text)


@pytest.mark.parametrize(
    "text",
    [
        "end of para ^abc123\nnext",
        "a table | ^abc123 | cell\n-|-|-",
        "|^abc123\n:-",
        "a control character ^abc123\x02",
    ],
)
def test_a_block_id_in_the_text_is_text(tmp_path, text):
    page, seen = shown(tmp_path, text)
    assert page.blocks == () and seen == plain(text.replace("\x02", " "))


def test_a_highlight_in_the_text_is_text(tmp_path):
    assert shown(tmp_path, "==marked== and a===b")[1] == "==marked== and a===b"


@pytest.mark.parametrize("text", ["before %%hidden%% after", "a %%% run, hidden %%"])
def test_percent_signs_show_as_written(tmp_path, text):
    assert shown(tmp_path, text)[1] == text


@pytest.mark.parametrize(
    "text",
    [
        "<b>bold</b> and <script>x()</script> and <!-- kept -->",
        "an entity &amp; a number &#37; stay as written",
        "a backslash \\[[x]] and \\# and a \\ alone and one at the end \\",
        "    indented [[four]]\n\n\tand a tab",
        "~~~\nfenced?\n~~~\n```\nticks\n```",
        '!!! note "Title"\n??? tip',
    ],
)
def test_html_entities_escapes_code_and_admonitions_are_text(tmp_path, text):
    page, seen = shown(tmp_path, text)
    assert (page.links, page.citations, page.problems) == ((), (), ())
    assert seen == plain(text)
