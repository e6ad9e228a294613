"""The folder explorer in headless Chromium (issue 31): a small wiki with nested folders built
with mkdocs-material (instant navigation on) and a compact navigation, served on 127.0.0.1. The
tree appears in the primary sidebar, opens the current page's folders and marks it, folders are
buttons that toggle (by mouse and by keyboard), the filter narrows the tree, a title made of
HTML shows as text, and the tree file is fetched once while the reader moves through the site."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.browsing import served
from helpers.render_helpers import build_site
from helpers.wikis import page

HOSTILE = "<img src=x onerror=alert(1)>"
PAGES = {
    "index.md": page("The home page.", "# Home\n\nStart at [[alpha]].\n"),
    "Apple.md": page("At the top.", "# Apple\n"),
    "guide/alpha.md": page("Alpha.", "# Alpha\n", title="Alpha"),
    "guide/beta.md": page("Beta.", "# Beta\n", title="Beta"),
    "guide/deep/nested/leaf.md": page("A leaf.", "# Leaf\n", title="Quokka leaf"),
    "apps/tool.md": page("A tool.", "# Tool\n", title="Tool"),
    "apps/quokka-kit.md": page("A kit.", "# Kit\n", title="quokka kit"),
    "notes/hostile.md": page("Hostile.", "# Hostile\n", title=HOSTILE),
    "notes/C# 100% tips?.md": page("Sharp.", "# Sharp\n", title="C# tips"),
    **{
        f"many/p{i:02}.md": page("One of many.", "# Many\n", title=f"Many {i:02}")
        for i in range(12)
    },
}
READY = ".gw-explorer[data-gw-state='ready']"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("explorer-browser")
    (root / "site").mkdir()
    with served(root / "site") as base:
        # Material's instant navigation takes the links its sitemap lists, whose URLs need
        # the site's own address, port included.
        build_site(
            root,
            PAGES,
            site_url=base,
            theme={"name": "material", "features": ["navigation.instant"]},
            plugins=["search", {"groundwiki": {"navigation": "compact"}}],
        )
        yield base


def opened(tab: Any, url: str) -> Any:
    tab.goto(url, wait_until="load")
    tab.wait_for_selector(READY)
    return tab.locator(".gw-explorer")


def folder(explorer: Any, name: str) -> Any:
    return explorer.locator("button.gw-explorer__toggle", has_text=name)


def wait_current(tab: Any, title: str) -> None:
    """Until the explorer marks the page titled `title` as the current one (under instant
    navigation the address changes first, then the page and its explorer)."""
    tab.wait_for_function(
        "t => { const a = document.querySelector("
        "\".gw-explorer[data-gw-state='ready'] a[aria-current='page']\");"
        " return a && a.textContent.trim() === t; }",
        arg=title,
    )


def test_the_tree_appears_in_the_sidebar_folders_first(site, dialog_tab):
    tab, dialogs = dialog_tab
    explorer = opened(tab, site)
    assert explorer.locator("xpath=ancestor::*[contains(@class,'md-sidebar--primary')]").count()
    top = explorer.locator(".gw-explorer__tree > li")
    names = [text.strip() for text in top.all_inner_texts()]
    assert names == ["apps", "guide", "many", "notes", "Apple", "index"], names
    # Closed folders: their pages are not drawn yet, nor shown.
    assert folder(explorer, "guide").get_attribute("aria-expanded") == "false"
    assert not explorer.get_by_text("Quokka leaf").count()
    assert dialogs == []


def test_the_current_pages_folders_are_open_and_it_is_marked(site, dialog_tab):
    tab, _ = dialog_tab
    explorer = opened(tab, site + "guide/deep/nested/leaf/")
    for name in ("guide", "deep", "nested"):
        assert folder(explorer, name).get_attribute("aria-expanded") == "true", name
    for name in ("apps", "many", "notes"):
        assert folder(explorer, name).get_attribute("aria-expanded") == "false", name
    current = explorer.locator("a[aria-current='page']")
    assert current.count() == 1
    assert current.inner_text().strip() == "Quokka leaf"
    assert "md-nav__link--active" in (current.get_attribute("class") or "")
    assert current.is_visible()
    assert explorer.get_by_text("Beta", exact=True).is_visible()  # its folder's pages too


def test_a_folder_toggles_by_click_and_by_keyboard(site, dialog_tab):
    tab, _ = dialog_tab
    explorer = opened(tab, site)
    apps = folder(explorer, "apps")
    tool = explorer.get_by_role("link", name="Tool")
    apps.click()
    assert apps.get_attribute("aria-expanded") == "true"
    assert tool.is_visible()
    controlled = apps.get_attribute("aria-controls")
    assert controlled and explorer.locator(f"#{controlled}").is_visible()
    apps.click()
    assert apps.get_attribute("aria-expanded") == "false"
    assert not tool.is_visible()
    apps.focus()
    tab.keyboard.press("Enter")
    assert apps.get_attribute("aria-expanded") == "true"
    tab.keyboard.press("Space")
    assert apps.get_attribute("aria-expanded") == "false"
    # The link of a page opens it.
    apps.click()
    tool.click()
    tab.wait_for_url("**/apps/tool/")
    wait_current(tab, "Tool")


def test_the_filter_narrows_the_tree_to_matching_titles_and_their_folders(site, dialog_tab):
    tab, _ = dialog_tab
    explorer = opened(tab, site)
    box = explorer.locator("input.gw-explorer__filter")
    box.fill("QUOKKA")  # any case
    tab.wait_for_function(
        "() => document.querySelector('.gw-explorer__status').textContent === '2 pages'"
    )
    pages = explorer.locator(".gw-explorer__tree .gw-explorer__page")
    assert [t.strip() for t in pages.all_inner_texts()] == ["quokka kit", "Quokka leaf"]
    assert all(pages.nth(i).is_visible() for i in range(2))
    folders = explorer.locator(".gw-explorer__tree button.gw-explorer__toggle")
    shown = [t.strip() for t in folders.all_inner_texts()]
    assert shown == ["apps", "guide", "deep", "nested"], shown  # no notes/, no Apple
    box.fill("no such title")
    tab.wait_for_function("() => !document.querySelector('.gw-explorer__tree').children.length")
    box.press("Escape")  # back to the whole tree
    tab.wait_for_function("() => document.querySelectorAll('.gw-explorer__tree > li').length === 6")


def test_a_title_made_of_html_shows_as_text(site, dialog_tab):
    tab, dialogs = dialog_tab
    explorer = opened(tab, site)
    folder(explorer, "notes").click()
    hostile = explorer.get_by_text(HOSTILE, exact=True)
    assert hostile.is_visible()
    assert explorer.locator("img").count() == 0
    explorer.locator("input.gw-explorer__filter").fill("onerror")
    tab.wait_for_function(
        "() => document.querySelector('.gw-explorer__status').textContent === '1 page'"
    )
    assert explorer.get_by_text(HOSTILE, exact=True).is_visible()
    assert explorer.locator("img").count() == 0
    tab.wait_for_timeout(200)  # an onerror would have fired by now
    assert dialogs == []


def test_the_tree_is_fetched_once_while_the_reader_moves_on(site, browser):
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    fetched: list[str] = []
    tab.on("request", lambda r: fetched.append(r.url) if "explorer.json" in r.url else None)
    try:
        explorer = opened(tab, site)
        folder(explorer, "guide").click()
        for title, url in (("Alpha", "guide/alpha/"), ("Beta", "guide/beta/")):
            tab.locator(".gw-explorer").get_by_role("link", name=title).click()
            tab.wait_for_url(f"**/{url}")
            wait_current(tab, title)
        # Instant navigation: the page changed without a load, the tree came from memory.
        assert tab.evaluate("() => !!window.groundwikiExplorer.tree()")
        assert len(fetched) == 1, fetched
        # The opened folder stays open on the next page.
        assert folder(tab.locator(".gw-explorer"), "guide").get_attribute("aria-expanded") == "true"
    finally:
        tab.close()


def test_a_full_load_draws_the_tree_from_the_session_copy(site, dialog_tab):
    tab, _ = dialog_tab
    opened(tab, site)
    # A second load of another page: the copy in sessionStorage draws the tree, though the
    # file cannot be fetched again.
    tab.route("**/explorer.json", lambda route: route.abort())
    try:
        explorer = opened(tab, site + "apps/tool/")
        assert folder(explorer, "apps").get_attribute("aria-expanded") == "true"
    finally:
        tab.unroute("**/explorer.json")


def test_a_site_without_its_tree_file_says_so(tmp_path, dialog_tab):
    # No explorer.json at all (a site copied without it): the sidebar says so, nothing breaks.
    folder_ = build_site(
        tmp_path,
        {"index.md": PAGES["index.md"], "a/b.md": page("B.", "# B\n")},
        plugins=["search", {"groundwiki": {"navigation": "compact"}}],
    )
    (folder_ / "groundwiki/explorer.json").unlink()
    tab, dialogs = dialog_tab
    with served(folder_) as base:
        tab.goto(base, wait_until="load")
        tab.wait_for_selector(".gw-explorer[data-gw-state='error']")
        assert "could not be loaded" in tab.locator(".gw-explorer__status").inner_text()
    assert dialogs == []


def test_a_big_folder_is_drawn_a_chunk_at_a_time_around_the_current_page(site, dialog_tab):
    tab, _ = dialog_tab
    opened(tab, site + "many/p09/")
    # 200 pages at a time on a site; three here, so that twelve pages make a big folder.
    tab.evaluate("() => { window.groundwikiExplorer.chunk = 3; window.groundwikiExplorer.init(); }")
    tab.wait_for_selector(READY)
    many = tab.locator(".gw-explorer__folder[data-path='many'] > .gw-explorer__children > li")

    def drawn() -> list[str]:
        return [text.strip() for text in many.all_inner_texts()]

    # The first three, then the current page with one on either side.
    assert drawn() == [
        "Many 00",
        "Many 01",
        "Many 02",
        "5 more pages…",
        "Many 08",
        "Many 09",
        "Many 10",
        "1 more page…",
    ]
    assert tab.locator(".gw-explorer a[aria-current='page']").inner_text().strip() == "Many 09"
    tab.get_by_role("button", name="5 more pages…").click()
    assert drawn()[3:8] == ["Many 03", "Many 04", "Many 05", "2 more pages…", "Many 08"]
    focused = tab.evaluate("() => document.activeElement.textContent.trim()")
    assert focused == "Many 03"  # the keyboard goes on from where the button was
    tab.keyboard.press("Tab")
    tab.keyboard.press("Tab")
    tab.keyboard.press("Tab")
    tab.keyboard.press("Enter")  # on "2 more pages…"
    tab.get_by_role("button", name="1 more page…").click()
    assert drawn() == [f"Many {i:02}" for i in range(12)]


def test_a_file_name_with_url_characters_is_linked_and_found_as_the_current_page(site, dialog_tab):
    tab, _ = dialog_tab
    explorer = opened(tab, site)
    folder(explorer, "notes").click()
    explorer.get_by_role("link", name="C# tips").click()  # `#`, `%`, `?`: the file's name
    tab.wait_for_url("**/notes/C%23%20100%25%20tips%3F/")
    wait_current(tab, "C# tips")
    assert "Sharp" in tab.locator("article h1").inner_text()
