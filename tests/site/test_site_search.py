"""Site search with Pagefind (issue 31): real `mkdocs build` runs of a small wiki with
`site_search: pagefind` write the Pagefind bundle in site/pagefind/, index the wiki's pages only
(their article body marked, title and summary as metadata, the late lists left out), empty
material's search_index.json and add the search box's script; `material` (and `auto` on a small
wiki) leaves material's search as it was; a Pagefind that fails warns and keeps the pages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from helpers.commands import mkdocs
from helpers.render_helpers import build_site
from helpers.wikis import page

PAGES = {
    "index.md": page("The home page.", "# Home\n\nStart at [[quokka]].\n"),
    "quokka.md": page(
        "Small marsupials of Rottnest Island.",
        "# Quokka\n\nThe quokka lives on islands off Western Australia.\n",
        tags=["animals"],
    ),
    "derived.md": page(None, "# Derived\n\nWombats dig burrows. They are nocturnal.\n"),
}


def entry(site: Path) -> dict:
    return json.loads((site / "pagefind/pagefind-entry.json").read_text())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(
        tmp_path_factory.mktemp("pagefind"),
        PAGES,
        plugins=["search", {"groundwiki": {"site_search": "pagefind"}}],
    )


def test_the_pagefind_bundle_indexes_the_wiki_pages_only(site):
    assert (site / "pagefind/pagefind.js").is_file()
    assert not (site / "pagefind.new").exists()
    # Three wiki pages; the lint report, graph, A–Z and tags pages are not indexed.
    assert entry(site)["languages"]["en"]["page_count"] == 3


def test_a_wiki_page_marks_its_body_title_and_summary(site):
    html = (site / "quokka/index.html").read_text()
    assert html.count("data-pagefind-body") == 1
    assert '<meta data-pagefind-meta="title[content]" content="Quokka">' in html
    assert 'data-pagefind-meta="summary[content]" content="Small marsupials' in html
    # The tags chips (a late slot) are in the page, out of the index.
    assert 'data-pagefind-ignore="all"' in html
    derived = (site / "derived/index.html").read_text()
    assert 'data-pagefind-meta="derived[content]" content="1"' in derived


def test_generated_pages_are_not_marked(site):
    for url in ("groundwiki/lint", "groundwiki/a-z", "groundwiki/tags"):
        assert "data-pagefind-body" not in (site / url / "index.html").read_text()


def test_material_gets_an_empty_index_and_the_page_the_search_script(site):
    index = json.loads((site / "search/search_index.json").read_text())
    assert index["docs"] == [] and index["config"]["lang"]
    html = (site / "index.html").read_text()
    assert "groundwiki/assets/site_search.js" in html
    assert (site / "groundwiki/assets/site_search.js").is_file()


def test_a_small_wiki_on_auto_keeps_material_search(tmp_path):
    site = build_site(tmp_path, PAGES)
    assert not (site / "pagefind").exists()
    assert "data-pagefind-body" not in (site / "quokka/index.html").read_text()
    assert "site_search.js" not in (site / "index.html").read_text()
    docs = json.loads((site / "search/search_index.json").read_text())["docs"]
    assert any(doc["title"] == "Quokka" for doc in docs)


def test_a_failing_pagefind_warns_and_keeps_the_site(tmp_path):
    build_site(tmp_path, {"index.md": PAGES["index.md"]})  # writes the wiki
    config = tmp_path / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["plugins"] = ["search", {"groundwiki": {"site_search": "pagefind"}}]
    config.write_text(yaml.safe_dump(data))
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PAGEFIND_BINARY_PATH": "/bin/false"}
    site = tmp_path / "built"
    result = mkdocs("build", "-f", str(config), "-d", str(site), env=env)
    assert result.returncode == 0, result.stderr
    assert "Pagefind (/bin/false) failed" in result.stderr
    assert "site_search: material" in result.stderr  # the way out, named
    assert (site / "index.html").is_file()
    assert not (site / "pagefind").exists()


def test_under_serve_the_index_is_made_in_the_background_and_swapped_in(tmp_path):
    from groundwiki.mkdocs_plugin.site_search import PagefindIndexer

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><body><div data-pagefind-body><h1>Quokka</h1><p>Islands.</p></div></body></html>"
    )
    (site / "pagefind").mkdir()
    (site / "pagefind/stale.txt").write_text("the last index")
    indexer = PagefindIndexer()
    indexer.index_later(site)
    indexer.index_later(site)  # a rebuild while it runs: indexed once more, after it
    indexer.wait(60)
    assert (site / "pagefind/pagefind.js").is_file()
    assert not (site / "pagefind/stale.txt").exists()
    assert sorted(p.name for p in site.iterdir()) == ["index.html", "pagefind"]
    assert [lang["page_count"] for lang in entry(site)["languages"].values()] == [1]
