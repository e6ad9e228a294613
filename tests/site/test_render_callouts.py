"""Obsidian callouts, highlights, math and diagrams in a real `mkdocs build`."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.render_helpers import article, build_site, outside_code

PAGES = {
    "callouts.md": """\
        # Callouts

        > [!tip] Read this first
        > Some **advice** with a list:
        >
        > - one
        > - two

        > [!faq]
        > Why?

        > [!warning]- Folded away
        > Hidden until opened.

        > [!note]+ Open to start
        > Shown, but it folds.

        > [!example] Outer
        > Outer text.
        > > [!bug] Inner
        > > Inner text.

        > [!my-kind] Custom
        > Custom text.

        > [!quote] Title with <b>tags</b> & "quotes"
        > Quoted.

        > A plain quote.
        > [!note] is text inside it.

        ```markdown
        > [!danger] In a fence
        ```
        """,
    "marks.md": """\
        # Marks

        Some ==highlighted **words**== here, `==code==` there, a == b == c.

        ```text
        ==fenced==
        ```
        """,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_site(tmp_path_factory.mktemp("callouts"), PAGES)


def test_a_callout_is_an_admonition_of_its_type_with_its_title_and_markdown_content(site):
    html = article(site, "callouts")
    assert '<div class="admonition tip">\n<p class="admonition-title">Read this first</p>' in html
    assert "<strong>advice</strong>" in html
    assert "<li>one</li>" in html


def test_a_callout_without_a_title_takes_its_type_capitalised(site):
    html = article(site, "callouts")
    assert '<div class="admonition faq">\n<p class="admonition-title">Faq</p>' in html


def test_a_minus_callout_is_folded_and_a_plus_one_is_open_and_both_fold(site):
    html = article(site, "callouts")
    assert '<details class="warning">\n<summary>Folded away</summary>' in html
    assert '<details class="note" open="open">\n<summary>Open to start</summary>' in html


def test_a_callout_nests_in_a_callout(site):
    html = article(site, "callouts")
    outer = html.index('<div class="admonition example">')
    inner = html.index('<div class="admonition bug">')
    assert outer < inner < html.index("Inner text.")
    assert "&gt; [!bug]" not in html and "[!bug]" not in html


def test_an_unknown_type_looks_like_a_note_and_keeps_its_name(site):
    html = article(site, "callouts")
    assert '<div class="admonition note my-kind">\n<p class="admonition-title">Custom</p>' in html


def test_a_title_is_text_its_tags_and_quotes_escaped(site):
    html = article(site, "callouts")
    assert "<b>tags</b>" not in html
    assert "Title with &lt;b&gt;tags&lt;/b&gt; &amp; &quot;quotes&quot;" in html


def test_a_plain_quote_stays_a_quote(site):
    html = article(site, "callouts")
    assert "<blockquote>\n<p>A plain quote.\n[!note] is text inside it.</p>\n</blockquote>" in html


def test_a_callout_in_a_fence_stays_code(site):
    html = article(site, "callouts")
    assert "danger" not in outside_code(html)
    assert "[!danger] In a fence" in html


def test_no_callout_marker_is_left_as_text(site):
    text = outside_code(article(site, "callouts"))
    assert text.count("[!") == 1  # the plain quote's, which Obsidian shows as text too


def test_highlights_become_marks_outside_code(site):
    html = article(site, "marks")
    assert "<mark>highlighted <strong>words</strong></mark>" in html
    assert "<code>==code==</code>" in html
    assert "a == b == c" in html
    assert "==fenced==" in html and "<mark>fenced</mark>" not in html


MATH = {
    "math.md": """\
        # Math

        Inline $e^{i\\pi} + 1 = 0$ and a block ^not-a-block:

        $$
        x ^2 = y_1 * z_2 ==> w
        $$

        > [!info] Diagram
        > ```python
        > print("> [!note] not a callout")
        > ```
        >
        > ```mermaid
        > graph TD
        >   A[[Start]] ==> B
        > ```

        ```mermaid
        graph LR
          A --> B
        ```
        """,
}


# The configuration the README gives for math (MathJax) and mermaid diagrams.
EXTENSIONS = """
markdown_extensions:
  - pymdownx.arithmatex:
      generic: true
  - pymdownx.superfences:
      custom_fences:
        - name: mermaid
          class: mermaid
          format: !!python/name:pymdownx.superfences.fence_code_format
"""


@pytest.fixture(scope="module")
def math(tmp_path_factory) -> str:
    return article(build_site(tmp_path_factory.mktemp("math"), MATH, yaml_tail=EXTENSIONS), "math")


def test_math_and_mermaid_reach_their_extensions_intact(math):
    html = math
    assert '<span class="arithmatex">\\(e^{i\\pi} + 1 = 0\\)</span>' in html
    assert '<div class="arithmatex">\\[\nx ^2 = y_1 * z_2 ==&gt; w\n\\]</div>' in html
    assert html.count('<pre class="mermaid"><code>') == 2
    assert "A[[Start]] ==&gt; B" in html  # the diagram's own syntax, untouched


def test_a_fence_inside_a_callout_stays_code(math):
    # Python-Markdown reads fences inside an admonition only with superfences (material's advice).
    html = math
    assert '<div class="admonition info">' in html
    assert "not a callout" in html
    assert "[!note]" not in outside_code(html)


LISTS = {
    "lists.md": """\
        # Lists

        - two-space item
          > [!info] Two
          > body two

        1. numbered
           > [!tip]- Three
           > body three
        2. after
        """,
}


@pytest.fixture(scope="module")
def lists(tmp_path_factory) -> str:
    return article(build_site(tmp_path_factory.mktemp("lists"), LISTS), "lists")


def test_a_callout_in_a_list_item_indented_under_four_spaces_stays_in_the_item(lists):
    # Obsidian indents an item's content by its marker's width; Python-Markdown wants 4.
    assert "!!!" not in lists and "???" not in lists
    item = lists.index("two-space item")
    assert lists.index('<div class="admonition info">', item) < lists.index("</li>", item)
    assert "<p>body two</p>" in lists


def test_a_folded_callout_in_a_numbered_item_stays_in_the_item(lists):
    item = lists.index("numbered")
    assert lists.index('<details class="tip">', item) < lists.index("</li>", item)
    assert "<p>body three</p>" in lists and "<p>after</p>" in lists
