"""An Obsidian vault built into a real site and read in headless Chromium: what an Obsidian user
sees in their notes is what the site shows (tests/fixtures/obsidian-vault, copied and built
with MkDocs, mkdocs-material and the groundwiki plugin)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.browsing import served
from helpers.site_builds import build
from helpers.wikis import ROOT
from playwright.sync_api import Browser, Page

FIXTURE = ROOT / "tests" / "fixtures" / "obsidian-vault"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """The fixture vault built once, served on 127.0.0.1: (base URL, site folder)."""
    root = tmp_path_factory.mktemp("obsidian") / "vault-root"
    shutil.copytree(FIXTURE, root)
    result = build(root / "mkdocs.yml")
    assert result.returncode == 0, result.stderr
    folder = root / "site"
    with served(folder) as base:
        yield base, folder


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page(viewport={"width": 1280, "height": 900})
    yield opened
    opened.close()


def test_an_image_embed_shows_the_image(site, tab):
    base, _ = site
    tab.goto(base + "Gallery/", wait_until="load")
    images = tab.locator("article img[src*='pixel.png']")
    assert images.count() >= 1, tab.locator("article").inner_html()
    assert images.first.evaluate("img => img.complete && img.naturalWidth") == 4


def test_an_image_embed_takes_the_width_it_is_given(site, tab):
    base, _ = site
    tab.goto(base + "Gallery/", wait_until="load")
    widths = tab.locator("article img[src*='pixel.png']").evaluate_all(
        "imgs => imgs.map(img => img.getBoundingClientRect().width)"
    )
    assert 40 in [round(w) for w in widths], widths


def test_a_folded_callout_is_an_admonition_that_opens_on_click(site, tab):
    base, _ = site
    tab.goto(base + "Callouts/", wait_until="load")
    callout = tab.locator("article details.tip")
    assert callout.count() == 1, tab.locator("article").inner_html()
    summary = callout.locator("summary")
    assert summary.inner_text().strip() == "Folded tip"
    body = callout.get_by_text("The fold hides this sentence")
    assert callout.evaluate("d => d.open") is False
    assert not body.is_visible()
    summary.click()
    assert callout.evaluate("d => d.open") is True
    assert body.is_visible()


def test_a_callout_that_does_not_fold_is_an_open_admonition(site, tab):
    base, _ = site
    tab.goto(base + "Callouts/", wait_until="load")
    callout = tab.locator("article .admonition.note")
    assert callout.count() == 1, tab.locator("article").inner_html()
    assert callout.locator(".admonition-title").inner_text().strip() == "Open note"
    assert callout.get_by_text("This one is always open.").is_visible()
    assert "[!note]" not in tab.locator("article").inner_text()


def test_a_section_embed_shows_that_section_and_only_it(site, tab):
    base, _ = site
    tab.goto(base + "Reader/", wait_until="load")
    article = tab.locator("article")
    assert article.get_by_text("The transcluded sentence lives under Section.").first.is_visible()
    assert "stays out of the embed" not in article.inner_text()
    assert "![[" not in article.inner_text()


def test_a_comment_is_absent_from_the_page(site, tab):
    base, _ = site
    tab.goto(base + "Reader/", wait_until="load")
    html = tab.content()
    assert "A thought for later." in html
    assert "secret comment" not in html
    assert "secret block comment" not in html
    assert "%%" not in tab.locator("article").inner_text()


def test_a_comment_is_absent_from_the_site_search_index(site):
    _, folder = site
    index = (folder / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "A thought for later." in index
    assert "secret" not in index


@pytest.mark.parametrize(
    ("folder", "own", "other"),
    [("A", "Links to A", "Links to B"), ("B", "Links to B", "Links to A")],
)
def test_each_same_name_note_shows_its_own_backlinks(site, tab, folder, own, other):
    base, _ = site
    tab.goto(base + f"{folder}/Same/", wait_until="load")
    assert tab.get_by_text(f"The note called Same in folder {folder}.").first.is_visible()
    backlinks = tab.locator("article ul.gw-backlinks")
    assert backlinks.count() == 1, tab.locator("article").inner_html()
    listed = backlinks.inner_text()
    assert own in listed
    assert other not in listed
