"""The handbook's screenshot set, taken in headless Chromium from a real build of the tour vault
(tests/fixtures/tour: a small Obsidian-style vault with folders, a callout holding code, a
citation and a few lint findings), served on 127.0.0.1: a note, a callout with code, the folder
explorer, a site search, a page's local graph and the lint report.

The test takes every shot and checks what it shows before taking it (the element is there and
drawn), so a change that breaks one of those views fails here. Run as a script, it writes the
set into wiki/assets/screenshots/, where "Reading the site" shows them:

    .venv/bin/python tests/browser/test_screenshots.py
"""

from __future__ import annotations

import shutil
import struct
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))  # helpers, when run as a script

from helpers.browsing import served  # noqa: E402
from helpers.site_builds import build  # noqa: E402

TOUR = ROOT / "tests/fixtures/tour"
SHOTS = ROOT / "wiki/assets/screenshots"
VIEWPORT = {"width": 1280, "height": 800}


def _note(tab: Any, base: str) -> Any:
    tab.goto(base + "Beans/Kenya%20AA/", wait_until="load")
    tab.wait_for_selector(".gw-explorer[data-gw-state='ready']")
    assert tab.locator("article h1").inner_text() == "Kenya AA"
    assert tab.locator("article sup.gw-cite").count() >= 1  # the citation marker
    return None  # the whole viewport


def _callout(tab: Any, base: str) -> Any:
    tab.goto(base + "Roasting/Roast%20profiles/", wait_until="load")
    callout = tab.locator("article .admonition.tip, article details.tip").first
    code = callout.locator("pre code")
    assert "artisan --export csv" in code.inner_text()  # code, not text, inside the callout
    return callout


def _explorer(tab: Any, base: str) -> Any:
    tab.goto(base + "Roasting/Cupping/", wait_until="load")
    tab.wait_for_selector(".gw-explorer[data-gw-state='ready']")
    explorer = tab.locator(".gw-explorer")
    assert explorer.locator("a", has_text="Cupping").count() == 1
    box = explorer.bounding_box()
    return {"x": 0, "y": 0, "width": box["x"] + box["width"] + 24, "height": VIEWPORT["height"]}


def _search(tab: Any, base: str) -> Any:
    tab.goto(base, wait_until="load")
    tab.locator("label.md-search__icon, .md-search__input").first.click()
    tab.keyboard.type("humidity")
    first = tab.locator(".md-search-result__item").first
    first.wait_for()
    assert "Green bean storage" in first.inner_text()
    assert first.locator(".gw-search__summary").count() == 1  # Pagefind's, with the summary
    assert first.locator("mark").count() >= 1  # and the matched passage
    return None


def _local_graph(tab: Any, base: str) -> Any:
    tab.goto(base + "Roasting/Roast%20profiles/", wait_until="load")
    tab.locator(".gw-local-graph").scroll_into_view_if_needed()
    graph = tab.locator(".gw-local-graph[data-gw-state='ready']")
    graph.wait_for()
    graph.scroll_into_view_if_needed()
    tab.wait_for_timeout(1500)  # the layout settles
    assert graph.locator("canvas").count() >= 1
    return graph


def _lint_report(tab: Any, base: str) -> Any:
    tab.goto(base + "groundwiki/lint/", wait_until="load")
    text = tab.locator("article").inner_text()
    assert "broken-link" in text and "Maintenance checklist" in text
    return None


SHOTS_TAKEN: dict[str, Callable[[Any, str], Any]] = {
    "note": _note,
    "callout-with-code": _callout,
    "explorer": _explorer,
    "search": _search,
    "local-graph": _local_graph,
    "lint-report": _lint_report,
}


@contextmanager
def tour_site(root: Path) -> Iterator[str]:
    """The tour vault copied under `root`, built, and served: its URL."""
    shutil.copytree(TOUR, root / "tour")
    config = root / "tour/mkdocs.yml"
    result = build(config)
    assert result.returncode == 0, result.stderr
    with served(root / "tour/site") as base:
        yield base


def take(browser: Any, base: str, into: Path) -> dict[str, Path]:
    """Every shot of the set, as PNG files in `into`."""
    into.mkdir(parents=True, exist_ok=True)
    taken: dict[str, Path] = {}
    for name, show in SHOTS_TAKEN.items():
        tab = browser.new_page(viewport=VIEWPORT, color_scheme="light")
        try:
            shown = show(tab, base)  # an element, a region of the viewport, or all of it
            path = into / f"{name}.png"
            if isinstance(shown, dict):
                tab.screenshot(path=str(path), clip=shown, animations="disabled")
            else:
                (shown or tab).screenshot(path=str(path), animations="disabled")
            taken[name] = path
        finally:
            tab.close()
    return taken


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_screenshot_set_is_taken_and_each_view_shows_what_it_should(browser, tmp_path):
    with tour_site(tmp_path) as base:
        taken = take(browser, base, tmp_path / "shots")
    assert sorted(taken) == sorted(SHOTS_TAKEN)
    for name, path in taken.items():
        width, height = png_size(path)
        assert width >= 200 and height >= 100, (name, width, height)
        # A blank or single-colour image compresses to almost nothing.
        assert path.stat().st_size > 5_000, (name, path.stat().st_size)


def test_the_handbook_holds_the_whole_set():
    held = sorted(path.stem for path in SHOTS.glob("*.png"))
    assert held == sorted(SHOTS_TAKEN), (
        "run `.venv/bin/python tests/browser/test_screenshots.py` to take the set again"
    )
    page = (ROOT / "wiki/guide/reading-the-site.md").read_text(encoding="utf-8")
    for name in SHOTS_TAKEN:
        assert f"assets/screenshots/{name}.png" in page, name


if __name__ == "__main__":
    import tempfile

    from browser.conftest import CHROMIUM, FLAGS
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        with tour_site(Path(scratch)) as base:
            for path in take(chromium, base, SHOTS).values():
                print(f"{path.relative_to(ROOT)}: {png_size(path)[0]}x{png_size(path)[1]}")
        chromium.close()
