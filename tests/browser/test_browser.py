"""The bundled wiki in headless Chromium, served over HTTP on 127.0.0.1, clicked like a reader."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest
from helpers.commands import mkdocs
from helpers.wikis import ROOT
from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

ARTIFACTS = ROOT / "test-artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site_url(tmp_path_factory) -> Iterator[str]:
    site = tmp_path_factory.mktemp("bundled") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = mkdocs("build", "-q", "-d", str(site), cwd=ROOT, env=env)
    assert built.returncode == 0, built.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    yield page
    page.close()


def test_following_a_wikilink_opens_the_target_page(tab, site_url):
    tab.goto(site_url)
    tab.locator("article a", has_text="Writing pages").first.click()
    tab.wait_for_url("**/guide/writing-pages/")
    assert tab.locator("h1").first.inner_text().startswith("Writing pages")


def test_a_citation_marker_lands_on_the_cited_lines(tab, site_url):
    tab.goto(site_url + "guide/linting/")
    marker = tab.locator("sup.gw-cite a").first
    href = marker.get_attribute("href")
    assert href and "#L" in href
    first = int(href.split("#L", 1)[1].split("-", 1)[0])
    marker.click()
    tab.wait_for_url("**/raw-sources/**")
    line = tab.locator(f"#L{first}")
    line.wait_for()
    assert line.is_visible()
    assert "gw-hl" in (line.get_attribute("class") or "")
    assert tab.evaluate(f"document.getElementById('L{first}').getBoundingClientRect().top") < 900


def test_an_alias_url_redirects_to_the_page(tab, site_url):
    tab.goto(site_url + "guide/quickstart/")
    tab.wait_for_url("**/guide/getting-started/")
    assert "Getting started" in tab.locator("h1").first.inner_text()


def test_the_graph_page_draws_the_nodes(tab, site_url):
    tab.goto(site_url + "groundwiki/graph/")
    graph = tab.locator('div.gw-graph[data-gw-state="ready"], div.gw-graph[data-gw-state="error"]')
    graph.wait_for(timeout=15000)
    assert graph.get_attribute("data-gw-state") == "ready", graph.get_attribute("data-gw-error")
    tab.locator("div.gw-graph[data-rendered]").wait_for(timeout=15000)
    assert int(graph.get_attribute("data-rendered") or 0) >= 16
    assert tab.locator("div.gw-graph canvas").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    tab.wait_for_timeout(1500)  # let the layout settle for the picture
    tab.screenshot(path=str(ARTIFACTS / "graph.png"), full_page=True)


def test_a_page_shows_its_local_graph(tab, site_url):
    fetched: list[str] = []
    tab.on("request", lambda request: fetched.append(request.url))
    tab.goto(site_url + "design/chunking/", wait_until="load")
    tab.wait_for_timeout(300)
    # The page's shard of the graph is read when the reader nears the graph, at the end of the
    # page; the whole graph never is.
    assert not [url for url in fetched if url.endswith(".json") and "graph" in url]
    tab.locator("div.gw-local-graph").scroll_into_view_if_needed()
    local = tab.locator("div.gw-local-graph[data-rendered]")
    local.wait_for(timeout=15000)
    assert int(local.get_attribute("data-rendered") or 0) >= 2
    graphs = [url for url in fetched if url.endswith(".json") and "graph" in url]
    assert len(graphs) == 1 and "/groundwiki/local-graphs/" in graphs[0], graphs
    tab.screenshot(path=str(ARTIFACTS / "page.png"), full_page=True)
