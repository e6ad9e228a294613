"""Obsidian syntax a reviewer found rendered wrong, each in a real `mkdocs build`."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.render_helpers import article, build_site

DEEP = {
    "index.md": "# Hi\n\n" + ">" * 1000 + " [!tip] deep\n",
    "fine.md": "# Fine\n\nA page after the deep one.\n",
}


@pytest.fixture(scope="module")
def deep(tmp_path_factory) -> Path:
    return build_site(tmp_path_factory.mktemp("deep"), DEEP)


def test_a_callout_under_a_thousand_quotes_does_not_stop_the_build(deep):
    # build_site asserts the build succeeded; the page and its neighbour are both there.
    assert "Hi" in article(deep, ".")
    assert "A page after the deep one." in article(deep, "fine")


TAGS = {
    "tags.md": """\
        # Tags

        #seedling

        - #status/active see [[other]]

        > #quoted

        ```text
        #fenced
        ```
        """,
    "other.md": "# Other\n\nThe other page.\n",
}


@pytest.fixture(scope="module")
def tags(tmp_path_factory) -> str:
    return article(build_site(tmp_path_factory.mktemp("tags"), TAGS), "tags")


def test_a_tag_at_the_start_of_a_line_is_text_not_a_heading(tags):
    # CommonMark and Obsidian need a space after a heading's `#`; Python-Markdown does not.
    assert tags.count("<h1") == 1  # the page's own title
    assert "<p>#seedling</p>" in tags


def test_a_tag_opening_a_list_item_stays_in_the_item_with_its_link(tags):
    assert 'id="statusactive' not in tags and "gw-inline" not in tags
    assert "<li>#status/active see <a" in tags


def test_a_tag_opening_a_quote_is_text_and_one_in_a_fence_stays_code(tags):
    assert "<p>#quoted</p>" in tags
    assert "#fenced" in tags and "\\#fenced" not in tags


MARKS = {
    "marks.md": """\
        # Marks

        Text ==a `code` b== end.

        Hover <span title="a==b==c">here</span> now.

        Dot <img alt="dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw==">, then ==marked==.
        """,
}


@pytest.fixture(scope="module")
def marks(tmp_path_factory) -> str:
    return article(build_site(tmp_path_factory.mktemp("marks"), MARKS), "marks")


def test_a_highlight_spans_a_code_span(marks):
    assert "Text <mark>a <code>code</code> b</mark> end." in marks


def test_no_mark_goes_inside_an_html_attribute(marks):
    assert '<span title="a==b==c">here</span>' in marks


def test_no_mark_goes_inside_a_data_uri_and_a_highlight_after_it_is_marked(marks):
    assert 'src="data:image/gif;base64,R0lGODlhAQABAAAAACw=="' in marks
    assert ", then <mark>marked</mark>." in marks
