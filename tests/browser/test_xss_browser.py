"""A wiki written by an attacker, built into a real site and read in headless Chromium.

Every field a writer controls carries a script: page and raw-source file names, folder names,
title, summary, tags, aliases, refs, headings, link labels, citation specs, unknown frontmatter
fields and their keys, raw-source text. Each payload calls `alert(N)` with its own number, so a
failure names the field. The test loads every HTML page of the site, searches it for the payload
words, and opens every node of the graph the way a click does; any dialog fails it.

Raw HTML written in a Markdown body is HTML by Markdown's rules (MkDocs renders it as written),
so the body's payloads stand where Markdown makes them text: code, link labels, wikilinks,
citation comments.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from helpers.browsing import served
from helpers.site_builds import build
from helpers.wikis import page, write_wiki

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)


def img(n: int) -> str:
    return f"<img src=x onerror=alert({n})>"


def script(n: int) -> str:
    return f'"><script>alert({n})</script>'


def hostile_pages() -> dict[str, str]:
    return {
        "index.md": page(
            title="Home",
            summary="The way in.",
            body="""\
            # Home

            [[evil]] [[javascript:alert(30)]] [[inner]] [[plain]]
            """,
        ),
        "evil.md": page(
            title=f"{img(1)} {script(2)}",
            summary=f"{img(3)} {script(4)}",
            tags=[img(5), script(6), "javascript:alert(7)"],
            aliases=[img(8), "javascript:alert(9)", script(10)],
            refs=[img(11), "index", "javascript:alert(12)"],
            description=script(13),
            subtitle=img(14),
            status=script(15),
            **{"x-custom": img(16), img(17): "a key with markup"},
            body=f"""\
            ## A heading with `{img(18)}` in code

            A wikilink [[index|{img(19)}]], a broken one [[{img(20)}]], an anchor [[#{img(21)}]].

            A Markdown link [`{img(22)}`](index.md) and code `{script(23)}`.

            Evidence.
            <!-- from: raw-sources/{img(24)}.md#L1-L2 -->

            Missing evidence. <!-- from: raw-sources/{script(25)}.md -->

            ```
            {script(26)}
            ```
            """,
        ),
        # Titles made from file names: no frontmatter title, no heading.
        f"{img(31)}.md": page(summary="A page named with markup.", body="Text.\n"),
        "javascript:alert(30).md": page(summary="A page named like a URL.", body="Text.\n"),
        f"{img(32)}/inner.md": page(summary="In a folder named with markup.", body="Text.\n"),
        "plain.md": page(
            title="Plain",
            kind=img(33),  # breaks the contract: the lint report quotes it
            body="Cites a source named like a URL. <!-- from: raw-sources/javascript:alert(34).txt -->\n",
        ),
    }


def hostile_sources() -> dict[str, str]:
    return {
        f"{img(24)}.md": f"# {img(35)}\n{script(36)}\n",
        "javascript:alert(34).txt": f"{script(37)}\n",
    }


@dataclass(frozen=True)
class Site:
    folder: Path
    base: str
    directory_urls: bool

    def url(self, file: Path) -> str:
        return self.base + quote(file.relative_to(self.folder).as_posix())

    @property
    def graph(self) -> str:
        return self.base + ("groundwiki/graph/" if self.directory_urls else "groundwiki/graph.html")


@pytest.fixture(scope="module", params=[True, False], ids=["directory-urls", "html-urls"])
def site(request, tmp_path_factory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("hostile")
    config = write_wiki(root, hostile_pages(), hostile_sources())
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material", "font": False, "features": ["navigation.instant"]}
    data["plugins"] = ["search", *data["plugins"]]
    data["use_directory_urls"] = request.param
    config.write_text(yaml.safe_dump(data))
    result = build(config)
    assert result.returncode == 0, result.stderr
    folder = root / "site"
    with served(folder) as base:
        yield Site(folder, base, request.param)


def ran(seen: list[str]) -> str:
    """The scripts that ran, one line each with the first page it ran on."""
    first: dict[str, str] = {}
    for entry in seen:
        message, _, where = entry.partition(" on ")
        first.setdefault(message, where)
    return "\n".join(f"{message} on {where}" for message, where in sorted(first.items()))


def test_no_page_of_the_site_runs_a_writers_script(site, dialog_tab):
    browser_tab, seen = dialog_tab
    pages = sorted(site.folder.rglob("*.html"))
    assert len(pages) >= 12
    for file in pages:
        browser_tab.goto(site.url(file), wait_until="load")
        browser_tab.wait_for_timeout(100)  # a broken image's onerror runs after load
    assert not seen, ran(seen)


def test_a_hostile_title_reads_as_the_characters_typed(site, dialog_tab):
    browser_tab, seen = dialog_tab
    title = f"{img(1)} {script(2)}"
    browser_tab.goto(site.base + ("evil/" if site.directory_urls else "evil.html"))
    assert browser_tab.locator("article h1").first.inner_text() == title
    assert browser_tab.title().startswith(title)
    assert title in browser_tab.locator("nav.md-nav--primary").first.inner_text()
    assert not seen, ran(seen)


def test_site_search_shows_payloads_as_text(site, dialog_tab):
    browser_tab, seen = dialog_tab
    browser_tab.goto(site.base)
    box = browser_tab.locator("input.md-search__input")
    box.click()
    # Words the payloads hold: the hits show the hostile titles, tags, summaries and headings.
    for word in ("src", "javascript", "wikilink", "heading", "tags"):
        box.fill("")
        box.press_sequentially(word, delay=20)  # material searches on key presses
        browser_tab.locator(".md-search-result__item").first.wait_for(timeout=10000)
        for more in browser_tab.locator("details.md-search-result__more").all():
            more.evaluate("details => { details.open = true; }")
        browser_tab.wait_for_timeout(200)
    assert not seen, ran(seen)


def test_opening_any_graph_node_stays_on_the_site(site, dialog_tab):
    browser_tab, seen = dialog_tab
    opened: list[str] = []
    count = index = 0
    while index == 0 or index < count:
        browser_tab.goto(site.graph, wait_until="load")
        browser_tab.locator('div.gw-graph[data-gw-state="ready"]').wait_for(timeout=15000)
        count = browser_tab.evaluate("groundwiki.graphs()[0].graphData().nodes.length")
        # What a click on the node runs: force-graph's click handler, given that node. The
        # navigation it starts is waited for: on a busy machine one still under way was cut
        # short by the next node's `goto`.
        with browser_tab.expect_navigation(wait_until="load"):
            browser_tab.evaluate(
                "(i) => { const g = groundwiki.graphs()[0];"
                " g.onNodeClick()(g.graphData().nodes[i], {}); }",
                index,
            )
        browser_tab.wait_for_timeout(300)  # for a script on the opened page to run, if any
        opened.append(browser_tab.url)
        index += 1
    assert count >= 8
    assert not seen, ran(seen)
    assert all(url.startswith(site.base) for url in opened), opened


@pytest.mark.parametrize(
    "url", ["javascript:alert(99)", "//evil.example/x", "https://evil.example/", "\\\\evil.example"]
)
def test_the_graph_reads_a_node_url_only_as_a_path_on_the_site(site, dialog_tab, url):
    """Even a graph.json written by something else: the click handler joins the URL to the
    site root as a path."""
    browser_tab, seen = dialog_tab
    browser_tab.goto(site.graph, wait_until="load")
    browser_tab.locator('div.gw-graph[data-gw-state="ready"]').wait_for(timeout=15000)
    browser_tab.evaluate(
        "(url) => groundwiki.graphs()[0].onNodeClick()({id: 'x', type: 'page', url}, {})", url
    )
    browser_tab.wait_for_timeout(300)
    assert not seen, ran(seen)
    assert browser_tab.url.startswith(site.base)
