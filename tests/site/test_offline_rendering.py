"""Diagrams, math and fenced code in callouts in a real `mkdocs build`: mermaid and KaTeX served
from the site's own files when (and only when) pages use them; code blocks that stay blocks,
with block ids and citation markers after them, outside and inside callouts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.render_helpers import article, build_site, outside_code

NOTES = "".join(f"Evidence line {n}.\n" for n in range(1, 11))

PAGES = {
    "diagram.md": """\
        # Diagram

        ```mermaid
        graph LR
          A[Start] --> B[End]
        ```
        """,
    "math.md": """\
        # Math

        Euler: $e^{i\\pi} + 1 = 0$, and a sum:

        $$
        \\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}
        $$
        """,
    "code.md": """\
        # Code

        ```python
        x = 1
        ```
        ^top-code

        ```text
        cited
        ```
        <!-- from: raw-sources/notes.md#L2 -->

        > [!note] Code in a callout
        > ```python
        > print("in a callout")
        > ```
        > ^in-callout

        > [!tip]- Folded, cited
        > Before the code:
        > ```bash
        > echo cited
        > ```
        > <!-- from: raw-sources/notes.md#L3 -->

        Links: [[#^top-code]], [[#^in-callout]].
        """,
    "plain.md": "# Plain\n\nCosts $5 and $6, or `$x$` in code.\n",
}

CDN = re.compile(r"unpkg|jsdelivr|cdnjs|\bcdn\b|googleapis", re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("offline")
    return build_site(
        root, PAGES, sources={"notes.md": NOTES}, theme={"name": "material", "font": False}
    )


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    """A site whose pages use neither diagrams nor math."""
    pages = {"code.md": PAGES["code.md"], "plain.md": PAGES["plain.md"]}
    root = tmp_path_factory.mktemp("bare")
    return build_site(
        root, pages, sources={"notes.md": NOTES}, theme={"name": "material", "font": False}
    )


VENDORED = (
    "groundwiki/assets/mermaid.js",
    "groundwiki/assets/vendor/mermaid.min.js",
    "groundwiki/assets/vendor/mermaid.LICENSE.txt",
    "groundwiki/assets/vendor/mermaid.THIRD-PARTY.txt",
    "groundwiki/assets/math.js",
    "groundwiki/assets/vendor/katex/katex.min.js",
    "groundwiki/assets/vendor/katex/katex.min.css",
    "groundwiki/assets/vendor/katex/LICENSE.txt",
    "groundwiki/assets/vendor/katex/fonts/KaTeX_Main-Regular.woff2",
)


def test_the_vendored_libraries_are_in_the_site_and_pages_load_them_from_it(site):
    for path in VENDORED:
        assert (site / path).is_file(), path
    # KaTeX's stylesheet names its fonts relative to itself: each woff2 it names is there.
    css = (site / "groundwiki/assets/vendor/katex/katex.min.css").read_text()
    for font in set(re.findall(r"url\((fonts/[^)]+\.woff2)\)", css)):
        assert (site / "groundwiki/assets/vendor/katex" / font).is_file(), font
    # Every page has the two small loaders; each fetches its library, beside it, on a page
    # that shows a diagram or a formula.
    for name in ("diagram", "plain"):
        page = (site / name / "index.html").read_text()
        assert '<script src="../groundwiki/assets/mermaid.js"></script>' in page
        assert '<script src="../groundwiki/assets/math.js"></script>' in page
        # material draws the diagram with the global `mermaid`, defined after its bundle
        assert page.index("assets/javascripts/bundle.") < page.index("assets/mermaid.js")
    loader = (site / "groundwiki/assets/mermaid.js").read_text()
    assert "'vendor/mermaid.min.js'" in loader
    assert "'vendor/katex/'" in (site / "groundwiki/assets/math.js").read_text()


def test_no_page_refers_to_a_cdn(site):
    built = list(site.rglob("*.html"))
    assert len(built) > 4
    for path in built:
        assert not CDN.search(path.read_text()), path


def test_a_mermaid_fence_is_materials_diagram_block(site):
    html = article(site, "diagram")
    assert '<pre class="mermaid"><code>graph LR\n  A[Start] --&gt; B[End]</code></pre>' in html


def test_math_is_marked_for_katex(site):
    html = article(site, "math")
    assert '<span class="arithmatex">\\(e^{i\\pi} + 1 = 0\\)</span>' in html
    assert '<div class="arithmatex">\\[\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n\\]</div>' in html
    # dollars that are no formula (`$5 and $6`), and code, stay text
    plain = article(site, "plain")
    assert "arithmatex" not in plain and "Costs $5 and $6" in plain


def test_a_site_without_diagrams_or_math_loads_and_ships_neither(bare):
    page = (bare / "code/index.html").read_text()
    assert "mermaid" not in page and "katex" not in page and "math.js" not in page
    for gone in ("mermaid.js", "math.js", "vendor/mermaid.min.js", "vendor/katex"):
        assert not (bare / "groundwiki/assets" / gone).exists(), gone
    assert (
        bare / "groundwiki/assets/vendor/force-graph.min.js"
    ).is_file()  # the graph's, as before
    assert "arithmatex" not in article(bare, "plain")


def test_code_in_a_callout_is_a_code_block(site):
    html = article(site, "code")
    callout = html[html.index('<div class="admonition note">') :]
    callout = callout[: callout.index("</div>\n<details")]
    assert '<pre class="highlight"><code class="language-python">' in callout
    assert "in a callout" in callout and "```" not in callout
    folded = html[html.index('<details class="tip">') :].split("</details>", 1)[0]
    assert "<p>Before the code:</p>" in folded
    assert "echo" in folded and "```" not in folded


def test_no_code_block_is_put_in_a_paragraph(site):
    # A <p> cannot hold a <pre> or a <div>: a browser would end it there, and what the writer put after
    # the code (a block id's anchor, a citation) would land after an empty paragraph.
    for name in ("code", "diagram", "math"):
        html = article(site, name)
        assert not re.search(r"<p>(?:(?!</p>).)*<(?:div|pre)", html, re.DOTALL), name


def test_a_block_id_after_code_anchors_the_code_outside_and_inside_a_callout(site):
    html = article(site, "code")
    after = '</code></pre>\n<span class="gw-block-anchor gw-block-after" id="^{}"></span>'
    assert after.format("top-code") in html
    assert after.format("in-callout") in html
    assert '<a href="#^top-code">' in html and '<a href="#^in-callout">' in html
    assert "^" not in re.sub(r"<[^>]*>", "", outside_code(html))


def test_a_citation_after_code_marks_it_outside_and_inside_a_callout(site):
    html = article(site, "code")
    code_blocks = re.findall(r"<pre.*?</pre>", html, re.DOTALL)
    assert code_blocks and not any("gw-cite" in block for block in code_blocks)
    top = html[html.index("cited</code></pre>") :]
    assert top.index(">[1]<") < top.index('<div class="admonition note">')
    folded = html[html.index('<details class="tip">') :].split("</details>", 1)[0]
    assert folded.index("echo") < folded.index(">[2]<")
    assert 'href="../raw-sources/notes.md/#L3"' in folded
