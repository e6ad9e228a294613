"""Pages written from plain text by the core's writer read back as that text: no wiki syntax
comes out of it, and the frontmatter holds the fields given."""

from __future__ import annotations

import pytest
from conftest import write_wiki
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.writer import write_page


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
