"""Diagrams and math drawn offline: a site with a ```mermaid fence and `$` formulas, read in
headless Chromium with every request that leaves 127.0.0.1 refused. mkdocs-material fetches
mermaid from unpkg.com unless the page defined it first; the site's own copy must be that, and
KaTeX (with its fonts) must come from the site too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers.browsing import served
from helpers.render_helpers import build_site
from playwright.sync_api import Browser, Page

PAGES = {
    "index.md": "# Home\n\nSee [[diagram]] and [[math]].\n",
    "diagram.md": """\
        # Diagram

        ```mermaid
        graph LR
          Start --> Finish
        ```

        > [!note] Code in a callout
        > ```python
        > print("still code")
        > ```
        """,
    "math.md": """\
        # Math

        Euler: $e^{i\\pi} + 1 = 0$.

        $$
        \\int_0^1 x^2 \\, dx = \\frac{1}{3}
        $$
        """,
}

# mkdocs-material draws a diagram into a closed shadow root; opened here so the test can look.
OPEN_SHADOWS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (options) {
  return attach.call(this, Object.assign({}, options, { mode: 'open' }));
};
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("offline-browser")
    theme = {"name": "material", "font": False, "features": ["navigation.instant"]}
    folder = build_site(root, PAGES, theme=theme)
    with served(folder) as base:
        yield base


class Offline:
    """A tab that refuses every request not to 127.0.0.1, and remembers them; and every
    response that failed."""

    def __init__(self, browser: Browser) -> None:
        self.refused: list[str] = []
        self.failed: list[str] = []
        self.loaded: list[str] = []
        self.tab: Page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.tab.add_init_script(OPEN_SHADOWS)
        self.tab.route("**/*", self._route)
        self.tab.on("response", self._response)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()

    def _response(self, response: Any) -> None:
        self.loaded.append(response.url)
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")


@pytest.fixture
def offline(browser: Browser) -> Iterator[Offline]:
    made = Offline(browser)
    yield made
    made.tab.close()


DRAWN = """() => {
  const box = document.querySelector('article div.mermaid');
  return !!(box && box.shadowRoot && box.shadowRoot.querySelector('svg'));
}"""


def test_a_mermaid_diagram_is_drawn_from_the_sites_own_copy(site, offline):
    tab = offline.tab
    tab.goto(site + "diagram/", wait_until="load")
    tab.wait_for_function(DRAWN, timeout=20_000)
    labels = tab.evaluate(
        "() => document.querySelector('article div.mermaid').shadowRoot.textContent"
    )
    assert "Start" in labels and "Finish" in labels
    assert tab.locator("article pre.mermaid").count() == 0
    assert offline.refused == [] and offline.failed == []
    assert any(url.endswith("/groundwiki/assets/vendor/mermaid.min.js") for url in offline.loaded)
    # superfences' code block in the callout, not the fence as text
    callout = tab.locator("article .admonition.note")
    assert callout.locator("pre code").inner_text().strip() == 'print("still code")'


def test_math_is_typeset_by_katex_with_its_fonts_from_the_site(site, offline):
    tab = offline.tab
    tab.goto(site + "math/", wait_until="load")
    tab.wait_for_function("() => document.querySelectorAll('article .katex').length >= 2")
    assert tab.locator("article .katex-display").count() == 1
    assert tab.locator("article .katex-error").count() == 0
    tab.evaluate("() => document.fonts.ready")
    fonts = [url for url in offline.loaded if url.endswith(".woff2")]
    assert fonts and all("/groundwiki/assets/vendor/katex/fonts/" in url for url in fonts)
    assert offline.refused == [] and offline.failed == []


def test_a_diagram_and_math_are_drawn_after_instant_navigation(site, offline):
    tab = offline.tab
    tab.goto(site, wait_until="load")
    # instant navigation makes the links absolute: found by their text
    tab.locator("article p a", has_text="diagram").click()
    tab.wait_for_function(DRAWN, timeout=20_000)
    tab.go_back()
    tab.locator("article p a", has_text="math").click()
    tab.wait_for_function("() => document.querySelectorAll('article .katex').length >= 2")
    assert offline.refused == [] and offline.failed == []


def test_a_page_without_diagrams_or_math_loads_neither_library(site, offline):
    tab = offline.tab
    tab.goto(site, wait_until="load")
    tab.wait_for_timeout(500)
    assert any(url.endswith("/groundwiki/assets/mermaid.js") for url in offline.loaded)
    assert not [url for url in offline.loaded if "mermaid.min.js" in url or "/katex/" in url]
    assert offline.refused == [] and offline.failed == []
