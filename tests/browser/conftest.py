"""Browser tests: headless Debian chromium (driven by playwright) against built sites. Every test
in this folder is marked `browser`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by playwright (never a downloaded browser); `make test`
    installs it, and without it the browser tests fail rather than skip."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "chromium is missing: run `make test`, which installs it"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def dialog_tab(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A browser tab that records every dialog (and dismisses it) instead of blocking on it: a
    page that runs a writer's script shows up in the list."""
    seen: list[str] = []
    tab = browser.new_page(viewport={"width": 1280, "height": 900})

    def record(dialog: Any) -> None:
        seen.append(f"{dialog.type} {dialog.message!r} on {tab.url}")
        dialog.dismiss()

    tab.on("dialog", record)
    yield tab, seen
    tab.close()
