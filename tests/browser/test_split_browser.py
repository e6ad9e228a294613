"""A large wiki's overview pages in headless Chromium: the global graph draws its most-linked
nodes (`graph_nodes`), its filter reaches every node and "Show all" draws them all; the lint
report's parts hide the findings below the severity the reader picks (`page_bytes` small, so a
small wiki splits)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.browsing import served
from helpers.render_helpers import build_site
from helpers.wikis import page

LIMIT = 8
NOTES = 30


def pages() -> dict[str, str]:
    found = {"index.md": page("The way in.", "# Home\n\nStart at [[hub]].\n")}
    found["hub.md"] = page("Everything meets here.", "# Hub\n\nBack [[index]].\n")
    for n in range(NOTES):
        # Each note links to the hub and the next one; every fifth also to a page that is not
        # there (an error on the lint report), and none has a summary (an info each).
        body = f"# Note {n}\n\nSee [[hub]] and [[note{(n + 1) % NOTES:02d}]].\n"
        body += "And [[nowhere]].\n" if n % 5 == 0 else ""
        found[f"notes/note{n:02d}.md"] = page(None, body, title=f"Note {n:02d}")
    # Linked from nowhere, linking nowhere: never among the most linked (titled by its file name).
    found["zebra.md"] = page("A lonely page.", "# Lonely zebra\n\nNothing here.\n")
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("split-browser")
    options = {"graph_nodes": LIMIT, "page_bytes": 6000}
    built = build_site(root, pages(), plugins=["search", {"groundwiki": options}])
    with served(built) as url:
        yield url, built


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    opened = browser.new_page(viewport={"width": 1280, "height": 900})
    yield opened
    opened.close()


def drawn_titles(tab: Any) -> list[str]:
    return tab.evaluate(
        "groundwiki.graphs()[0].graphData().nodes.map((n) => n.title)"
    )  # titles as data, not read from the page's HTML


def test_the_global_graph_draws_the_most_linked_nodes_and_reaches_the_others(tab, site):
    url, built = site
    total = len(json.loads((built / "groundwiki/graph.json").read_text())["nodes"])
    assert total > LIMIT
    tab.goto(url + "groundwiki/graph/")
    graph = tab.locator('div.gw-graph[data-gw-state="ready"], div.gw-graph[data-gw-state="error"]')
    graph.wait_for(timeout=15000)
    assert graph.get_attribute("data-gw-state") == "ready", graph.get_attribute("data-gw-error")
    tab.locator("div.gw-graph[data-rendered]").wait_for(timeout=15000)
    assert graph.get_attribute("data-rendered") == str(LIMIT)
    assert graph.get_attribute("data-drawn") == str(LIMIT)
    titles = drawn_titles(tab)
    assert "Hub" in titles and "zebra" not in titles  # the most linked first
    assert f"{LIMIT} drawn" in tab.locator(".gw-graph-stats").inner_text()

    # The filter searches every node, and draws the matches beside the most linked.
    tab.locator("input.gw-graph-filter").fill("zebra")
    tab.wait_for_function(f"document.querySelector('div.gw-graph').dataset.drawn === '{LIMIT + 1}'")
    assert "zebra" in drawn_titles(tab)
    assert "1 matching" in tab.locator(".gw-graph-stats").inner_text()
    tab.locator("input.gw-graph-filter").fill("")
    tab.wait_for_function(f"document.querySelector('div.gw-graph').dataset.drawn === '{LIMIT}'")

    # "Show all" draws every node, and back.
    button = tab.locator("button.gw-graph-all")
    assert button.inner_text() == f"Show all {total} nodes"
    button.click()
    tab.wait_for_function(f"document.querySelector('div.gw-graph').dataset.drawn === '{total}'")
    assert len(drawn_titles(tab)) == total
    assert button.get_attribute("aria-pressed") == "true"
    button.click()
    tab.wait_for_function(f"document.querySelector('div.gw-graph').dataset.drawn === '{LIMIT}'")


def test_a_pages_local_graph_is_not_limited(tab, site):
    url, _ = site
    tab.goto(url + "hub/")
    tab.locator("div.gw-local-graph").scroll_into_view_if_needed()
    local = tab.locator("div.gw-local-graph[data-rendered]")
    local.wait_for(timeout=15000)
    assert int(local.get_attribute("data-rendered") or 0) > LIMIT  # the hub and every note
    assert tab.locator("button.gw-graph-all").count() == 0


def test_the_lint_reports_severity_filter_hides_what_is_below_it(tab, site):
    url, _ = site
    tab.goto(url + "groundwiki/lint/")
    folder = tab.locator("table.gw-lint-parts a", has_text="notes").first
    folder.click()
    tab.wait_for_url("**/groundwiki/lint/folder-notes/")
    infos = tab.locator("li.gw-finding.gw-info")
    errors = tab.locator("li.gw-finding.gw-error")
    assert infos.count() and errors.count()
    assert infos.first.is_visible() and errors.first.is_visible()
    tab.locator("label", has_text="error").locator("input").check()
    assert not infos.first.is_visible()
    assert errors.first.is_visible()
    # a file whose findings are all below the filter is hidden with them
    hidden = tab.locator("div.gw-lint-file.gw-max-info")
    assert hidden.count() and not hidden.first.is_visible()
    tab.locator("label", has_text="info").locator("input").check()
    assert infos.first.is_visible()


def test_the_lint_summary_filter_hides_the_folders_and_rules_below_it(tab, site):
    url, _ = site
    tab.goto(url + "groundwiki/lint/")
    rows = tab.locator("table.gw-lint-rules tr.gw-max-info")
    assert rows.count() and rows.first.is_visible()
    tab.locator("label", has_text="warning").locator("input").check()
    assert not rows.first.is_visible()
    assert tab.locator("table.gw-lint-rules tr.gw-max-error").first.is_visible()
