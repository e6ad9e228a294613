"""Transclusions that must leave valid HTML and ids of their own, in a real `mkdocs build`."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers.render_helpers import article, build_site

PAGES = {
    "headed.md": "# Headed\n\n## Section with ![[Other]] inside\n\nText.\n",
    "Other.md": "# Other\n\nOther body text.\n",
    "inline.md": "# Inline\n\nA embeds B: ![[Other]]\n",
    "quoted.md": "# Quoted\n\n> [!note] Two\n> ![[Other]]\n> ![[Other#Other]]\n",
    "broken.md": "# Broken\n\n![[Other#nosuch]]\n",
    "noted.md": "# Noted\n\nHost claim.[^1]\n\n![[Footed]]\n\n[^1]: The host's note.\n",
    "Footed.md": "# Footed\n\nEmbedded claim.[^1]\n\n[^1]: The embedded note.\n",
    "jumper.md": "# Jumper\n\n![[folder/Parted]]\n",
    "folder/Parted.md": "# Parted\n\nSee [the part](#part).\n\n## Part\n\nHere.\n",
    "Many.md": "# Many\n\n" + "".join(f"## S{i}\n\ntext {i} ^b{i}\n\n" for i in range(12)),
    "gather.md": "# Gather\n\n![[Many#^b1]]\n\n![[Many#^b10]]\n\n![[Many#S11]]\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("transclusion-fixes")
    return build_site(root, PAGES, markdown_extensions=["footnotes"])


class _Nesting(HTMLParser):
    """Block elements opened while a <p> or a heading is open: what a browser breaks apart."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.misnested: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in {"div", "p", "ul", "ol", "blockquote", "details", "h1", "h2", "h3"}:
            holders = [t for t in self.open if t in {"p", "h1", "h2", "h3", "h4", "h5", "h6"}]
            if holders:
                self.misnested.append(f"<{tag}> in <{holders[-1]}>")
        if tag not in {"img", "br", "hr", "input", "meta", "link", "wbr", "source"}:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag) :]


def misnested(html: str) -> list[str]:
    parser = _Nesting()
    parser.feed(html)
    return parser.misnested


def test_a_note_embed_in_a_heading_is_a_link_in_it(site):
    html = article(site, "headed")
    heading = html.split("<h2", 1)[1].split("</h2>", 1)[0]
    assert "gw-transclusion" not in heading and "Other body text" not in heading
    assert '<a class="gw-embed gw-embed-note" href="../Other/">Other</a>' in heading
    assert misnested(html) == []


def test_a_note_embed_after_text_on_its_line_leaves_no_block_in_a_paragraph(site):
    html = article(site, "inline")
    assert misnested(html) == []
    assert "<p>A embeds B: </p>" in html and "Other body text." in html


def test_two_note_embeds_on_quoted_lines_of_a_callout_leave_no_block_in_a_paragraph(site):
    html = article(site, "quoted")
    assert misnested(html) == []
    assert html.count('<div class="gw-transclusion">') == 2


def test_a_broken_section_embed_sits_in_a_paragraph(site):
    html = article(site, "broken")
    assert '<p><span class="gw-broken" title="No section &#x27;nosuch&#x27;' in html


def test_footnotes_inside_a_transclusion_get_ids_of_their_own(site):
    html = (site / "noted/index.html").read_text()  # the host's footnotes close the page
    body = html.split('<div class="gw-transclusion-body">')[1].split('<div class="gw-local')[0]
    assert 'id="fn:1"' not in body and 'id="fnref:1"' not in body
    assert 'href="#fn:1"' not in body
    assert html.count('id="fn:1"') == 1 and html.count('id="fnref:1"') == 1
    ids = [part.split('"')[0] for part in body.split(' id="')[1:]]
    assert any(i.endswith("fn:1") for i in ids) and any(i.endswith("fnref:1") for i in ids)
    for i in ids:  # every link to a footnote in the embed lands in the embed
        assert html.count(f'id="{i}"') == 1


def test_an_anchor_link_inside_a_transclusion_lands_on_the_embedded_page(site):
    body = article(site, "jumper").split('<div class="gw-transclusion-body">')[1]
    assert '<a href="../folder/Parted/#part">the part</a>' in body


def test_embeds_of_one_note_read_once_still_show_each_its_own_block_or_section(site):
    """One pattern finds every block id and a page's facts are kept for the render: `^b1` must
    not match `^b10`, and each embed reads its own span (this passed before too; the scaling is
    in bench/transclusion_scale.py)."""
    bodies = article(site, "gather").split('<div class="gw-transclusion-body">')[1:]
    assert "<p>text 1</p>" in bodies[0] and "text 10" not in bodies[0]
    assert "<p>text 10</p>" in bodies[1] and "text 1<" not in bodies[1]
    assert "<h2>S11</h2>" in bodies[2] and "<p>text 11</p>" in bodies[2]
    assert " ^b" not in "".join(bodies)  # no marker left as text (links say "#^b1")
