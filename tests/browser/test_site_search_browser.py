"""Site search with Pagefind in headless Chromium (issue 31): a wiki built with
`site_search: pagefind`, served over HTTP; typing in material's search box shows the right page
with its summary and the matched passage highlighted, the keyboard reaches the results, and a
page whose title and summary carry markup shows it as text and runs nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.browsing import served
from helpers.site_builds import build
from helpers.wikis import page, write_wiki
from playwright.sync_api import TimeoutError as PlaywrightTimeout

HOSTILE = "<img src=x onerror=alert(1)>"
RESULT = ".gw-search__list .md-search-result__item"
PAGES = {
    "index.md": page("The way in.", "# Home\n\nSee [[quokka]] and [[evil]].\n"),
    "quokka.md": page(
        "Small marsupials of Rottnest Island.",
        "# Quokka\n\nThe quokka lives on islands off Western Australia and smiles.\n",
    ),
    "wombat.md": page("Burrowing marsupials.", "# Wombat\n\nWombats dig long burrows.\n"),
    "evil.md": page(
        f"{HOSTILE} zebrafish summary <script>alert(2)</script>",
        "# Evil\n\nThe zebrafish swims in `<img src=x onerror=alert(3)>` water.\n",
        title=f"{HOSTILE} zebrafish",
    ),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("pagefind-browser")
    config = write_wiki(root, PAGES)
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material", "font": False, "features": ["navigation.instant"]}
    data["plugins"] = ["search", {"groundwiki": {"site_search": "pagefind"}}]
    config.write_text(yaml.safe_dump(data))
    result = build(config)
    assert result.returncode == 0, result.stderr
    folder: Path = root / "site"
    assert (folder / "pagefind/pagefind.js").is_file()
    with served(folder) as url:
        yield url


def search(tab, base: str, query: str):
    tab.goto(base, wait_until="load")
    box = tab.locator("input.md-search__input")
    box.click()
    box.press_sequentially(query, delay=10)
    first = tab.locator(RESULT).first
    first.wait_for(timeout=10000)
    return first


def test_typing_shows_the_page_its_summary_and_the_highlighted_passage(base, dialog_tab):
    tab, seen = dialog_tab
    first = search(tab, base, "rottnest")
    assert first.locator("h1").inner_text() == "Quokka"
    assert first.locator(".gw-search__summary").inner_text() == (
        "Small marsupials of Rottnest Island."
    )
    first = search(tab, base, "australia")
    assert first.locator("h1").inner_text() == "Quokka"
    assert first.locator(".gw-search__excerpt mark").all_inner_texts() == ["Australia"]
    assert "lives on islands off Western" in first.locator(".gw-search__excerpt").inner_text()
    # Material's own result list is empty and hidden: its index has no documents.
    assert tab.locator(".md-search-result__list:not(.gw-search__list) li").count() == 0
    assert not seen


def test_the_keyboard_reaches_the_results(base, dialog_tab):
    tab, _ = dialog_tab
    search(tab, base, "burrows")
    in_list = "() => document.activeElement?.closest('.gw-search__list') != null"
    # Typing searches as each letter lands: a list re-rendered for the last letters after the
    # first result showed takes the focus with it, so the key is pressed again then (at most
    # three times); a keyboard that never reaches the results still fails.
    for _ in range(3):
        tab.keyboard.press("ArrowDown")
        try:
            tab.wait_for_function(in_list, timeout=2000)
            break
        except PlaywrightTimeout:
            continue
    assert tab.evaluate(in_list)
    tab.keyboard.press("Enter")
    tab.wait_for_url("**/wombat/")


def test_a_hostile_title_and_summary_read_as_text_and_run_nothing(base, dialog_tab):
    tab, seen = dialog_tab
    first = search(tab, base, "zebrafish")
    assert first.locator("h1").inner_text() == f"{HOSTILE} zebrafish"
    assert first.locator(".gw-search__summary").inner_text().startswith(HOSTILE)
    assert "onerror=alert(3)" in first.locator(".gw-search__excerpt").inner_text()
    assert first.locator("img, script").count() == 0
    tab.wait_for_timeout(200)  # a broken image's onerror would run by now
    assert not seen, seen
