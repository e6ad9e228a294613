"""Fixtures: small wikis written to disk, compiled by the real core."""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from groundwiki.core import Wiki, compile_wiki, load_config

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def write_wiki(
    root: Path,
    pages: dict[str, str],
    sources: dict[str, str | bytes] | None = None,
    options: dict[str, Any] | None = None,
) -> Path:
    """Write mkdocs.yml, wiki/<name> pages and raw-sources/<name> files; return mkdocs.yml."""
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "site_name": "fixture",
        "docs_dir": "wiki",
        "plugins": [{"groundwiki": options or {}}],
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for name, text in pages.items():
        path = root / "wiki" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    (root / "raw-sources").mkdir(exist_ok=True)
    for name, content in (sources or {}).items():
        path = root / "raw-sources" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root / "mkdocs.yml"


def page(summary: str | None = "A page.", body: str = "", **fields: Any) -> str:
    """A page file: frontmatter from keyword arguments, then the body."""
    data = dict(fields)
    if summary is not None:
        data["summary"] = summary
    front = yaml.safe_dump(data, sort_keys=False) if data else ""
    return f"---\n{front}---\n{textwrap.dedent(body).lstrip(chr(10))}"


MakeWiki = Callable[..., Wiki]


# --- markers (registered in pyproject.toml) -----------------------------------------------------
# `pytest -m "not sidecar and not browser and not slow"` is the fast loop over the core. A test
# is marked by its module (what the module starts) or by the fixtures it uses.

# Modules that start a sidecar: a process, or its indexes in-process (Whoosh, Chroma, watchdog,
# the embedding model). Every `test_sidecar_*` module is one too.
SIDECAR_MODULES = frozenset(
    {
        "test_bm25f",
        "test_embeddings",
        "test_evaluation",
        "test_hostile_site",
        "test_lanes",
        "test_operations",
        "test_serve",
        "test_status_cli",
        "test_summary_marking",
    }
)
BROWSER_MODULES = frozenset({"test_browser", "test_obsidian_browser", "test_xss_browser"})
BROWSER_FIXTURES = frozenset({"browser"})
# Modules whose tests take seconds each: real `mkdocs build` runs, child processes, property
# tests.
SLOW_MODULES = frozenset(
    {
        "test_big_sources",
        "test_cli",
        "test_compact_nav_home",
        "test_file_name_title",
        "test_home_page",
        "test_hostile_site",
        "test_linear_parsing",
        "test_mkdocs_build",
        "test_obsidian_markdown_links",
        "test_packaging",
        "test_properties",
        "test_render_callouts",
        "test_render_embeds",
        "test_render_obsidian_fixes",
        "test_render_transclusion_fixes",
        "test_resource_bombs",
        "test_settings_spec",
        "test_site",
        "test_sidecar_scope_statistics",
        "test_site_scope_privacy",
        "test_writer_safety",
        "test_sidecar_token_revocation",
        "test_templates_site",
    }
)


def markers_for(module: str, fixtures: set[str] | frozenset[str]) -> set[str]:
    found: set[str] = set()
    if module.startswith("test_sidecar_") or module in SIDECAR_MODULES:
        found.add("sidecar")
    if module in BROWSER_MODULES or fixtures & BROWSER_FIXTURES:
        found.add("browser")
    if module in SLOW_MODULES:
        found.add("slow")
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = frozenset(getattr(item, "fixturenames", ()))
        for name in sorted(markers_for(item.path.stem, fixtures)):
            item.add_marker(getattr(pytest.mark, name))


@pytest.fixture
def make_wiki(tmp_path: Path) -> MakeWiki:
    def build(
        pages: dict[str, str],
        sources: dict[str, str | bytes] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Wiki:
        config_file = write_wiki(tmp_path, pages, sources, options)
        return compile_wiki(load_config(config_file))

    return build


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


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


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


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """A built site served over HTTP on 127.0.0.1, as a reader's browser loads it: its URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
