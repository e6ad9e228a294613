"""Markdown links to notes as Obsidian writes them (`[a](Note.md)`), in lint and in the site.

Obsidian writes them, when "Use [[Wikilinks]]" is off, as the shortest path when possible, as
the absolute path in the vault, or relative to the file, and resolves all three. MkDocs reads
only the last, so the others are found as Obsidian finds them and written as relative paths for
MkDocs to build.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.wikis import page
from groundwiki.core import run_lint
from helpers.render_helpers import article, build_site

FROM = """\
    # From

    Shortest [a](Target%20Note.md), absolute [b](Notes/Target%20Note.md), relative
    [c](../Notes/Target%20Note.md), and to a heading [e](Notes/Target%20Note.md#Heading).

    Titled [f](<Target Note.md> "The target") and missing [d](Nowhere.md).

    Kept: [web](https://example.com/Target%20Note.md), [here](#from) and [near](Near.md).
    """

TARGET = "Notes/Target Note.md"
PAGES = {
    "Sub/from.md": FROM,
    "Sub/Near.md": "# Near\n",
    TARGET: "# Target Note\n\n## Heading\n\nText.\n",
    "host.md": "# Host\n\n![[from]]\n",
}


def broken(wiki) -> list[str]:
    found = run_lint(wiki).findings
    return sorted(f.message for f in found if f.rule in {"broken-link", "broken-anchor"})


def targets(wiki, key: str) -> dict[str, str | None]:
    """Each Markdown link of the page, as written, and the file of the page it lands on."""
    source = wiki.pages[key]
    links = [link for link in source.links if link.kind == "link"]
    return {
        link.raw: (wiki.pages[r.key].doc_path if (r := wiki.resolve(link, source)) else None)
        for link in links
    }


@pytest.fixture
def wiki(make_wiki):
    return make_wiki({name: page(body=text) for name, text in PAGES.items()})


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_site(tmp_path_factory.mktemp("mdlinks"), PAGES)


def test_a_markdown_link_by_shortest_path_resolves_as_in_obsidian(wiki):
    assert targets(wiki, "from")["Target Note.md"] == TARGET


def test_a_markdown_link_by_path_from_the_vault_root_resolves(wiki):
    found = targets(wiki, "from")
    assert found["Notes/Target Note.md"] == TARGET
    assert found["Notes/Target Note.md#Heading"] == TARGET


def test_a_markdown_link_relative_to_the_page_still_resolves_by_path(wiki):
    source = wiki.pages["from"]
    (link,) = [x for x in source.links if x.raw == "../Notes/Target Note.md"]
    resolution = wiki.resolve(link, source)
    assert resolution is not None and resolution.via == "path"
    assert wiki.pages[resolution.key].doc_path == TARGET


def test_only_a_missing_markdown_link_is_a_lint_finding(wiki):
    (message,) = broken(wiki)
    assert "Nowhere.md" in message


def test_obsidian_markdown_links_are_working_links_in_the_site(site):
    html = article(site, "Sub/from")
    for label in ("a", "b", "c"):
        assert f'<a href="../../Notes/Target%20Note/">{label}</a>' in html
    assert (site / "Notes/Target Note/index.html").exists()


def test_a_markdown_link_to_a_heading_lands_on_its_id(site):
    assert '<a href="../../Notes/Target%20Note/#heading">e</a>' in article(site, "Sub/from")


def test_a_markdown_link_keeps_its_title(site):
    assert 'href="../../Notes/Target%20Note/" title="The target">f</a>' in article(site, "Sub/from")


def test_external_in_page_and_relative_markdown_links_are_left_as_written(site):
    html = article(site, "Sub/from")
    assert '<a href="https://example.com/Target%20Note.md">web</a>' in html
    assert '<a href="#from">here</a>' in html
    assert '<a href="../Near/">near</a>' in html
    assert 'href="Nowhere.md">d</a>' in html  # MkDocs warns about it; lint reports it


def test_an_embedded_note_s_obsidian_markdown_links_land_from_the_host(site):
    whole = article(site, "host").split('<div class="gw-transclusion">')[1]
    assert '<a href="../Notes/Target%20Note/">a</a>' in whole
    assert '<a href="../Notes/Target%20Note/#heading">e</a>' in whole


def test_a_reference_link_before_an_obsidian_link_leaves_it_written_once(tmp_path):
    pages = {
        "Sub/ref.md": "# Ref\n\n[r][t] then [a](Target%20Note.md)\n\n[t]: Target%20Note.md\n",
        TARGET: "# Target Note\n",
    }
    html = article(build_site(tmp_path, pages), "Sub/ref")
    assert 'then <a href="../../Notes/Target%20Note/">a</a>' in html


def test_a_percent_encoded_heading_lands_on_its_id(tmp_path):
    pages = {
        "Sub/enc.md": "# Enc\n\n[g](Notes/Target%20Note.md#My%20Heading)\n",
        TARGET: "# Target Note\n\n## My Heading\n",
    }
    html = article(build_site(tmp_path, pages), "Sub/enc")
    assert '<a href="../../Notes/Target%20Note/#my-heading">g</a>' in html


def test_a_markdown_link_from_the_wiki_root_is_a_working_link(tmp_path):
    """Lint resolves `/Notes/Target Note.md` from the root; MkDocs leaves such a path as it is,
    so the site made it a dead link until its destination was rewritten."""
    pages = {"Sub/abs.md": "# Abs\n\n[h](/Notes/Target%20Note.md)\n", TARGET: "# Target Note\n"}
    html = article(build_site(tmp_path, pages), "Sub/abs")
    assert '<a href="../../Notes/Target%20Note/">h</a>' in html
