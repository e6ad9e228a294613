"""Fenced code as a block of its own (superfences puts code where its lines were), and what the
pages need of the browser: mermaid for ```mermaid fences, KaTeX for `$` formulas."""

from __future__ import annotations

import re

import pytest
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.render.body.code import has_math
from groundwiki.core.render.body.convert import (
    HIGHLIGHT,
    MERMAID_FENCE,
    SUPERFENCES,
    MarkdownConverter,
    site_extensions,
)
from groundwiki.core.render.body.fences import separate_fences
from groundwiki.core.render.body.slots import fill_slots
from groundwiki.core.render.needs import MATH, MERMAID, WikiNeeds, page_needs
from groundwiki.core.render.page import render_page
from groundwiki.core.wiki.graph import build_graph
from helpers.wikis import write_wiki

NOTES = "".join(f"Evidence line {n}.\n" for n in range(1, 6))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # text right after the closing fence, and right before the opening one
        ("```\ncode\n```\n^id", "```\ncode\n```\n\n^id"),
        ("Text:\n~~~py\ncode\n~~~\n", "Text:\n\n~~~py\ncode\n~~~\n"),
        # in a quote (a callout's content): the blank line is quoted
        ("> [!note]\n> ```\n> code\n> ```\n> ^id", "> [!note]\n>\n> ```\n> code\n> ```\n>\n> ^id"),
        ("> > ```\n> > x\n> > ```\n> > after", "> > ```\n> > x\n> > ```\n> >\n> > after"),
        # the quote ends at the fence: the line after it is outside, so the blank one is too
        ("> ```\n> x\n> ```\nafter", "> ```\n> x\n> ```\n\nafter"),
        # a longer closing fence closes; a shorter one is code
        ("````\n```\n````\nafter", "````\n```\n````\n\nafter"),
        # a `$$` formula: arithmatex reads it only as a block of its own, as Obsidian does
        ("Text\n$$\nx^2\n$$\n^id", "Text\n\n$$\nx^2\n$$\n\n^id"),
        ("> Sum:\n> $$x$$\n> after", "> Sum:\n>\n> $$x$$\n>\n> after"),
    ],
)
def test_a_fence_is_separated_from_the_text_around_it(text, expected):
    assert separate_fences(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "no fence here\n^id",
        "```\ncode\n```\n\nafter",  # separated already
        "- item\n  ```\n  code\n  ```\n  more",  # in a list item: left to the list
        "```\nnever closed\ntext",
        "`` ```not a fence``` ``\ntext",
    ],
)
def test_what_needs_no_separating_is_left_as_it_is(text):
    assert separate_fences(text) is text


def rendered_html(tmp_path, body: str) -> str:
    """The page's body as the site shows it: rendered, converted with the default extensions
    (superfences among them), its slots filled."""
    config_file = write_wiki(tmp_path, {"doc.md": body}, {"notes.md": NOTES})
    wiki = compile_wiki(load_config(config_file))
    page = wiki.pages["doc"]
    rendered = render_page(wiki, page, wiki.layout, build_graph(wiki).backlinks())
    html = MarkdownConverter()(rendered.markdown)
    return fill_slots(fill_slots(html, rendered.slots), rendered.late_slots)


def test_code_in_a_callout_renders_as_code_with_its_block_id_after_it(tmp_path):
    html = rendered_html(
        tmp_path,
        "# Doc\n\n> [!note] Title\n> ```python\n> print(1)\n> ```\n> ^in-callout\n\n"
        "```text\ncode\n```\n^top\n",
    )
    callout = html[html.index('<div class="admonition note">') :]
    assert '<code class="language-python">print(1)</code>' in callout and "```" not in html
    after = '</code></pre>\n<span class="gw-block-anchor gw-block-after" id="^{}"></span>'
    assert after.format("in-callout") in html and after.format("top") in html
    assert not re.search(r"<p>(?:(?!</p>).)*<(?:div|pre)", html, re.DOTALL)


def test_a_citation_right_after_code_in_a_callout_marks_it_outside_the_code(tmp_path):
    html = rendered_html(
        tmp_path,
        "# Doc\n\n> [!tip] Cited\n> ```\n> code\n> ```\n> <!-- from: raw-sources/notes.md#L2 -->\n",
    )
    code = html[html.index("<pre") : html.index("</pre>")]
    assert "gw-cite" not in code
    assert html.index("</pre>") < html.index(">[1]<")
    assert not re.search(r"<p>(?:(?!</p>).)*<(?:div|pre)", html, re.DOTALL)


def test_a_formula_right_under_text_is_display_math(tmp_path):
    from groundwiki.core.render.body.convert import DEFAULT_EXTENSIONS

    converter = MarkdownConverter(
        [*DEFAULT_EXTENSIONS, "pymdownx.arithmatex"], {"pymdownx.arithmatex": {"generic": True}}
    )
    html = converter(separate_fences("Text\n$$\nx^2\n$$\nafter\n"))
    assert html == '<p>Text</p>\n<div class="arithmatex">\\[\nx^2\n\\]</div>\n<p>after</p>'


def test_a_mermaid_fence_is_a_diagram_block_by_default():
    html = MarkdownConverter()("```mermaid\ngraph LR\n  A --> B\n```\n")
    assert html == '<pre class="mermaid"><code>graph LR\n  A --&gt; B</code></pre>'


def test_the_site_gets_superfences_with_a_mermaid_fence_unless_it_names_one():
    extensions: list = ["toc", "admonition"]
    configs: dict = {}
    site_extensions(extensions, configs)
    assert extensions == ["toc", "admonition", HIGHLIGHT, "pymdownx.details", SUPERFENCES]
    assert configs[SUPERFENCES] == {"custom_fences": [MERMAID_FENCE]}
    # code uncoloured, as under fenced_code, unless the site configures highlighting
    assert configs[HIGHLIGHT] == {"use_pygments": False}
    for own in ([HIGHLIGHT], ["codehilite"], ["markdown.extensions.codehilite"]):
        configs = {}
        site_extensions(own, configs)
        assert HIGHLIGHT not in configs and own.count(HIGHLIGHT) <= 1
    own = {"name": "mermaid", "class": "diagram", "format": print}
    configs = {SUPERFENCES: {"custom_fences": [own], "preserve_tabs": True}}
    site_extensions([SUPERFENCES], configs)
    assert configs[SUPERFENCES] == {"custom_fences": [own], "preserve_tabs": True}


def test_a_configured_function_keeps_the_render_cache(tmp_path):
    from pymdownx.superfences import fence_code_format

    fence = {"name": "mermaid", "class": "mermaid", "format": fence_code_format}
    converter = MarkdownConverter(
        ["pymdownx.superfences"], {SUPERFENCES: {"custom_fences": [fence]}}
    )
    described = converter.fingerprint()
    assert described is not None and "pymdownx.superfences.fence_code_format" in described
    assert MarkdownConverter([object()]).fingerprint() is None  # an object at an address


@pytest.mark.parametrize(
    ("body", "needs"),
    [
        ("```mermaid\ngraph LR\n```\n", {MERMAID}),
        ("> [!info]\n> ~~~ {.mermaid}\n> graph\n> ~~~\n", {MERMAID}),
        ("The mermaid is a fish.\n```mermaidx\n```\n", set()),
        ("Euler $e^{i\\pi}$.\n", {MATH}),
        ("Text\n\n$$\nx^2\n$$\n", {MATH}),
        ("Inline $$x$$ too.\n", {MATH}),
        ("Costs $5 and $6.\n", set()),
        ("In code `$x$` and\n```sh\necho $HOME/$USER\n```\n", set()),
        ("A `$` then $5.\n", set()),
        ("", set()),
    ],
)
def test_what_a_page_needs(body, needs):
    assert page_needs(body) == needs
    assert has_math(body) == (MATH in needs)


def test_a_page_is_asked_again_only_when_the_compile_read_it_again(tmp_path, monkeypatch):
    config_file = write_wiki(tmp_path, {"a.md": "# A\n\n$x^2$\n", "b.md": "# B\n\nText.\n"})
    wiki = compile_wiki(load_config(config_file))
    asked: list[str] = []
    import groundwiki.core.render.needs as needs_module

    def counted(body: str) -> frozenset[str]:
        asked.append(body)
        return page_needs(body)

    monkeypatch.setattr(needs_module, "page_needs", counted)
    needs = WikiNeeds()
    assert needs.of(wiki.pages.values()) == {MATH}
    assert len(asked) == 2
    assert needs.of(wiki.pages.values()) == {MATH}
    assert len(asked) == 2  # the same page objects: nothing asked
    b = wiki.pages["b"]
    assert needs.of([b]) == set() and len(asked) == 2
