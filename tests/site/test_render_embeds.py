"""Obsidian embeds, transclusions and block ids in a real `mkdocs build`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from groundwiki.core.model.site_paths import SiteLayout
from groundwiki.core.render.body.embeds import relocated_url
from helpers.render_helpers import article, build_site, outside_code

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16

PAGES = {
    "notes/media.md": """\
        # Media

        ![[diagram.png]]

        ![[diagram.png|400]] and ![[diagram.png|A diagram|400x300]]

        ![[song.mp3]] ![[clip.mp4|320]] ![[paper.pdf]] ![[table.csv]]

        ![[nowhere.png]] and ![[Nobody]]

        ![[interview.txt]]
        """,
    "assets/diagram.png": PNG,
    "assets/song.mp3": b"ID3",
    "assets/clip.mp4": b"\0\0\0\x18ftyp",
    "assets/paper.pdf": b"%PDF-1.4",
    "assets/table.csv": "a,b\n",
    "host.md": """\
        # Host

        ![[Guide]]

        ![[Guide#Install]]

        ![[Guide#^key-claim]]

        ![[Guide#^quoted]]
        """,
    "docs/Guide.md": """\
        ---
        secret_field: not for the page
        ---
        # Guide

        Intro with %% a private note %% and a link to [[Other]].

        ## Install

        Run the installer. ==Really.==

        ### Details

        Inside install.

        ## Use

        Use it.

        A key claim here. ^key-claim

        > Quoted wisdom.

        ^quoted
        """,
    "docs/deep/Other.md": "# Other\n\nOther page.\n",
    "a.md": "# A\n\nA says ![[b]]\n",
    "b.md": "# B\n\nB says ![[a]]\n",
    "blocks.md": """\
        # Blocks

        First paragraph
        on two lines. ^para

        - item one ^item
        - item two

        | a | b |
        |---|---|
        | 1 | 2 |

        ^table

        ```text
        code line
        ```
        ^code

        Go to [[#^para]], [[blocks#^item]] and [[#Nowhere]].

        ![[diagram.png]]^figure

        See [[#^figure]].
        """,
    "shelf/reader.md": """\
        # Reader

        ## Install

        The reader's own install.

        ![[Linker]]
        """,
    "library/deep/Linker.md": """\
        # Linker

        ## Install

        See [the sibling](Sibling.md), [a part](../Top.md#part), [home](../../host.md)
        and [a file](pic.png?v=1#x): ![a picture](pic.png)

        Kept: [web](https://example.com/a.md), [here](#install), [root](/abs/page.md),
        [mail](mailto:a@example.com), <mail@example.com> and `[code](Sibling.md)`.
        """,
    "library/deep/Sibling.md": "# Sibling\n",
    "library/Top.md": "# Top\n\n## Part\n",
    "library/deep/pic.png": PNG,
    "headed.md": """\
        # Headed

        ## Setup ^setup-block

        Text.

        See [[#Setup]].
        """,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("embeds")
    return build_site(root, PAGES, sources={"interview.txt": "What was said.\n"})


def test_an_image_embed_is_an_image_relative_to_the_page(site):
    html = article(site, "notes/media")
    assert (
        '<img class="gw-embed gw-embed-image" src="../../assets/diagram.png" alt="diagram.png">'
        in html
    )


def test_an_image_embed_takes_a_width_or_a_size_and_alt_text(site):
    html = article(site, "notes/media")
    assert 'src="../../assets/diagram.png" alt="diagram.png" width="400">' in html
    assert 'alt="A diagram" width="400" height="300">' in html


def test_audio_video_and_pdf_embeds_get_players_and_other_files_a_link(site):
    html = article(site, "notes/media")
    assert '<audio class="gw-embed gw-embed-audio" controls src="../../assets/song.mp3">' in html
    assert (
        '<video class="gw-embed gw-embed-video" controls src="../../assets/clip.mp4" width="320">'
        in html
    )
    assert (
        '<object class="gw-embed gw-embed-pdf" data="../../assets/paper.pdf" type="application/pdf">'
        in html
    )
    assert '<a href="../../assets/paper.pdf">paper.pdf</a></object>' in html
    assert '<a class="gw-embed gw-embed-file" href="../../assets/table.csv">table.csv</a>' in html


def test_a_broken_embed_is_marked_broken_and_leaves_no_exclamation_mark(site):
    html = article(site, "notes/media")
    assert '<span class="gw-broken" title="No file or page named &#x27;nowhere.png&#x27;' in html
    assert ">Nobody</span>" in html
    assert "!" not in outside_code(html).split("<h1", 1)[1]


def test_a_note_embed_shows_the_body_in_a_box_without_frontmatter_or_comments(site):
    html = article(site, "host")
    whole = html.split('<div class="gw-transclusion">')[1]
    assert '<a class="gw-transclusion-link" href="../docs/Guide/">Guide</a>' in whole
    assert "Intro with" in whole and "Use it." in whole
    assert "secret_field" not in html and "private note" not in html


def test_a_section_embed_shows_that_section_down_to_the_next_heading_of_its_level(site):
    section = article(site, "host").split('<div class="gw-transclusion">')[2]
    assert "Guide › Install" in section
    assert "Run the installer." in section and "Inside install." in section
    assert "Use it." not in section and "Intro with" not in section


def test_a_block_embed_shows_that_block_only(site):
    block = article(site, "host").split('<div class="gw-transclusion">')[3]
    assert "<p>A key claim here.</p>" in block
    assert "Use it." not in block and "^key-claim" not in block.split("gw-transclusion-body")[1]


def test_a_transclusion_renders_its_syntax_and_its_links_land_from_the_embedding_page(site):
    whole = article(site, "host").split('<div class="gw-transclusion">')[1]
    assert '<a href="../docs/deep/Other/">Other</a>' in whole  # host is at the site root
    assert "<mark>Really.</mark>" in whole


def test_embeds_that_embed_each_other_stop(site):
    a = article(site, "a")
    assert a.count('<div class="gw-transclusion">') == 2  # A shows B, B's embed of A says why
    assert "Not shown here: it embeds itself." in a


def test_a_block_id_leaves_the_text_and_anchors_its_paragraph(site):
    html = article(site, "blocks")
    assert (
        '<p><span class="gw-block-anchor" id="^para"></span>First paragraph\non two lines.</p>'
        in html
    )
    assert '<li><span class="gw-block-anchor" id="^item"></span>item one</li>' in html
    assert '</table>\n<span class="gw-block-anchor gw-block-after" id="^table"></span>' in html
    assert "^" not in re.sub(r"<[^>]*>", "", outside_code(html))  # in no text, only in ids


def test_a_block_id_right_after_an_embed_anchors_it_and_leaves_the_text(site):
    """Obsidian takes `![[image.png]]^id` (no space) as the embed's block id."""
    html = article(site, "blocks")
    assert '<span class="gw-block-anchor" id="^figure"></span><img' in html
    assert '<a href="#^figure">' in html
    assert "^figure" not in re.sub(r"<[^>]*>", "", outside_code(html))


def test_links_to_block_ids_land_on_their_anchor(site):
    html = article(site, "blocks")
    assert '<a href="#^para">para</a>' in html
    # Its text as written, as Obsidian shows it; a block id's caret is syntax, not text.
    assert '<a href="./#^item">blocks &gt; item</a>' in html


def test_a_broken_same_page_heading_link_shows_its_text(site):
    html = article(site, "blocks")
    assert '<span class="gw-broken" title="No heading &#x27;Nowhere&#x27; on this page' in html
    assert ">Nowhere</span>" in html


def test_an_embed_of_a_raw_source_links_to_its_page(site):
    html = article(site, "notes/media")
    href = "../../raw-sources/interview.txt/"
    assert f'<a class="gw-embed gw-embed-file" href="{href}">interview.txt</a>' in html


def test_a_block_embed_of_a_marker_under_a_quote_shows_the_quote(site):
    block = article(site, "host").split('<div class="gw-transclusion">')[4]
    assert "<blockquote>\n<p>Quoted wisdom.</p>\n</blockquote>" in block
    assert "A key claim" not in block


def test_a_block_id_right_under_code_anchors_after_it_not_inside_it(site):
    html = article(site, "blocks")
    code = '<pre class="highlight"><code class="language-text">code line</code></pre>'
    assert code + '\n<span class="gw-block-anchor gw-block-after" id="^code"></span>' in html


def test_hostile_file_names_titles_and_callout_titles_stay_text(tmp_path):
    pages = {
        "host.md": (
            '# Host\n\n![[x"><i>y.png]]\n\n![[javascript:alert(1).png]]\n\n![[evil]]\n\n'
            '> [!note] <img src=x onerror="alert(1)">\n> text\n'
        ),
        'x"><i>y.png': PNG,
        "javascript:alert(1).png": PNG,
        "evil.md": '---\ntitle: "<script>alert(1)</script>"\n---\nBody.\n',
    }
    html = article(build_site(tmp_path, pages), "host")
    assert "<i>" not in html and "<script>alert" not in html and "<img src=x" not in html
    assert 'src="../x%22%3E%3Ci%3Ey.png" alt="x&quot;&gt;&lt;i&gt;y.png"' in html
    assert 'src="../javascript%3Aalert%281%29.png"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;</a>" in html


def test_markdown_links_inside_a_transclusion_land_where_they_do_from_the_embedded_page(site):
    body = article(site, "shelf/reader").split('<div class="gw-transclusion-body">')[1]
    assert '<a href="../../library/deep/Sibling/">the sibling</a>' in body
    assert '<a href="../../library/Top/#part">a part</a>' in body
    assert '<a href="../../host/">home</a>' in body
    assert '<a href="../../library/deep/pic.png?v=1#x">a file</a>' in body


def test_images_inside_a_transclusion_load_from_the_embedded_pages_folder(site):
    body = article(site, "shelf/reader").split('<div class="gw-transclusion-body">')[1]
    assert '<img alt="a picture" src="../../library/deep/pic.png" />' in body


def test_urls_absolute_paths_and_code_inside_a_transclusion_stay_as_written(site):
    body = article(site, "shelf/reader").split('<div class="gw-transclusion-body">')[1]
    assert '<a href="https://example.com/a.md">web</a>' in body
    # An anchor alone is the embedded page's: the reader's own `#install` is another heading.
    assert '<a href="../../library/deep/Linker/#install">here</a>' in body
    assert '<a href="/abs/page.md">root</a>' in body
    assert '<a href="mailto:a@example.com">mail</a>' in body
    assert '<a href="&#109;&#97;&#105;&#108;&#116;&#111;&#58;&#109;' in body  # <mail@...>
    assert "<code>[code](Sibling.md)</code>" in body


def test_transcluded_headings_have_no_ids_and_stay_out_of_the_table_of_contents(site):
    page = (site / "shelf/reader/index.html").read_text()
    assert page.count('id="install"') == 1  # the reader's own heading
    body = article(site, "shelf/reader").split('<div class="gw-transclusion-body">')[1]
    assert "<h1>Linker</h1>" in body and "<h2>Install</h2>" in body
    toc = page.split('aria-label="Table of contents"')[1].split("</nav>")[0]
    assert toc.count('href="#install"') == 1 and "Linker" not in toc


def test_a_transcluded_heading_has_no_permalink_to_the_embedding_pages_heading(tmp_path):
    pages = {"host.md": "# Host\n\n## Use\n\n![[Other]]\n", "Other.md": "# Other\n\n## Use\n"}
    site = build_site(tmp_path, pages, markdown_extensions=[{"toc": {"permalink": True}}])
    html = article(site, "host")
    assert html.count('class="headerlink"') == 2  # the host's own two headings
    assert "<h2>Use</h2>" in html.split('<div class="gw-transclusion-body">')[1]


def test_a_heading_closed_by_a_block_id_keeps_its_id_and_links_to_it_land(site):
    html = article(site, "headed")
    assert (
        '<h2 id="setup">Setup<span class="gw-block-anchor" id="^setup-block"></span></h2>' in html
    )
    assert '<a href="#setup">Setup</a>' in html


def test_a_transcluded_link_without_an_extension_is_read_from_the_embedded_pages_url():
    """MkDocs leaves `[x](../Top)` as written, so the browser reads it from the page's URL."""
    url = relocated_url("../Top", "library/deep/Linker.md", "shelf/reader.md", SiteLayout())
    assert url == "../../library/deep/Top"


def test_a_transcluded_page_link_follows_the_sites_url_style():
    layout = SiteLayout(use_directory_urls=False)
    url = relocated_url("Sibling.md#h", "library/deep/Linker.md", "shelf/reader.md", layout)
    assert url == "../library/deep/Sibling.html#h"
