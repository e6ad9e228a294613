"""Site search that scales: Pagefind instead of mkdocs-material's one-file index.

Material's search plugin writes every page's text into search/search_index.json, which each
browser fetches whole, and indexes in a worker, before it shows a first result: 10.8 MB and
10.6 s on a 6,571-note vault. Pagefind splits its index into chunks by word and a fragment per
page, and the browser fetches only those a query needs (bench/site_search.py measures both).

What the site does when it uses Pagefind (`site_search`: `pagefind`, or `auto` above
`PAGEFIND_ABOVE` pages):

- a wiki page's article body is wrapped in a `data-pagefind-body` element, with its title and
  summary as Pagefind metadata (a derived summary says so). Pages without the marker are left
  out of the index: the generated pages (lint report, graph, A–Z, tags) list other pages' titles
  and would answer every query; notices of unpublished pages have nothing to find; raw-source
  pages are reached through the citations that quote them, and their thousands of numbered
  lines would bury the pages. The late slots (tags, refs, backlinks, sources, the local graph)
  stay out too, as they do of material's index;
- after the build, the Pagefind binary (the `pagefind_bin` package) indexes site_dir into
  `site_dir/pagefind/`. When it fails the build warns, naming the fix, and keeps its pages;
- material's search plugin keeps its box, its dialog and its keyboard handling, but indexes no
  page (its page handler is left out of the build) and its search_index.json holds no documents
  (rewritten after the build, its `config` kept): every page view downloads 174 bytes instead
  of the whole text, and `groundwiki/assets/site_search.js` fills the box's result list from
  Pagefind. Disabling material's plugin would take the box out of the theme's header;
- under `mkdocs serve` the index is made in a background thread after each build (Pagefind
  took 12 to 33 s on the vault, on a busy 2-core machine): the rebuild is served at once, a
  search meanwhile answers from the last index (`serve --dirty` keeps it in site_dir; a full
  rebuild cleans site_dir, and the search box says the index is being made until it is back).
  Builds that end while Pagefind runs are indexed once, after it.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from html import escape
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig

from groundwiki.core.config.site_options import PAGEFIND_ABOVE
from groundwiki.core.model.records import Page
from groundwiki.core.model.site_paths import ASSETS_DIR

log = logging.getLogger("mkdocs.plugins.groundwiki")

PAGEFIND_DIR = "pagefind"  # in site_dir: pagefind/pagefind.js and its chunks
SCRIPT = f"{ASSETS_DIR}/site_search.js"
CSS = f"{ASSETS_DIR}/site_search.css"
MATERIAL_INDEX = "search/search_index.json"
# Time enough for Pagefind on a very large site; a hung binary does not hold the build forever.
TIMEOUT = 1800
_FIRST_TAG = re.compile(r"\A(\s*<[A-Za-z][A-Za-z0-9-]*)(?=[\s/>])")
_H1 = re.compile(r"<h1[\s>]", re.IGNORECASE)


def uses_pagefind(setting: str, pages: int) -> bool:
    """Whether the site's search is Pagefind: `setting` is the `site_search` option."""
    if setting == "auto":
        return pages > PAGEFIND_ABOVE
    return setting == "pagefind"


def use_search_assets(config: MkDocsConfig) -> None:
    """The search box's script and stylesheet in every page (once, across a server's builds)."""
    if CSS not in config.extra_css:
        config.extra_css.append(CSS)
    if SCRIPT not in config.extra_javascript:
        config.extra_javascript.append(SCRIPT)


def marked_body(content: str, page: Page, title: str) -> str:
    """A wiki page's article HTML as Pagefind indexes it: in a `data-pagefind-body` element,
    with its title and summary as metadata (attribute values, escaped here, are read as text
    by Pagefind and shown as text by the search box). When the page's HTML has no `<h1>` (the
    theme prints the title outside the article), the title goes in as hidden, heading-weighted
    text, so a search for a page's name finds it."""
    metas = [f'<meta data-pagefind-meta="title[content]" content="{escape(title)}">']
    if page.summary:
        metas.append(
            f'<meta data-pagefind-meta="summary[content]" content="{escape(page.summary)}">'
        )
        if page.summary_derived:
            metas.append('<meta data-pagefind-meta="derived[content]" content="1">')
    if not _H1.search(content):
        metas.append(f'<span hidden data-pagefind-weight="7">{escape(title)}</span>')
    return f"<div data-pagefind-body>{''.join(metas)}{content}</div>"


def unindexed(slots: Mapping[str, str]) -> dict[str, str]:
    """Late slots marked for Pagefind to skip (`data-pagefind-ignore="all"` on the slot's
    element; a slot that does not start with one is wrapped in a div that has it)."""
    marked = {}
    for key, html in slots.items():
        if _FIRST_TAG.match(html):
            marked[key] = _FIRST_TAG.sub(r'\1 data-pagefind-ignore="all"', html, count=1)
        else:
            marked[key] = f'<div data-pagefind-ignore="all">{html}</div>'
    return marked


def skip_material_indexing(config: MkDocsConfig) -> None:
    """Material's search plugin reads every page in `on_page_context` to build the index that
    `empty_material_index` would then throw away (12 s of a 200 s build of the vault): its
    handler of that event is taken out of this build's list (MkDocs makes the list again for
    each build). A list that is not what MkDocs 1.6 keeps changes nothing: the index is still
    emptied after the build."""
    events = getattr(config.plugins, "events", {}).get("page_context")
    if not isinstance(events, list):
        return
    for name in ("material/search", "search"):
        plugin = config.plugins.get(name)
        if plugin is not None and type(plugin).__module__.startswith("material."):
            events[:] = [e for e in events if getattr(e, "__self__", None) is not plugin]


def empty_material_index(site_dir: Path) -> None:
    """Material's search_index.json with no documents: its worker still starts (the search box
    and its keyboard handling are material's), and fetches a few hundred bytes."""
    path = site_dir / MATERIAL_INDEX
    try:
        written = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return  # no material search plugin in this site
    except (OSError, ValueError) as exc:
        log.warning(f"groundwiki: could not read {path} to empty it for Pagefind: {exc}")
        return
    index = {"config": written.get("config", {}), "docs": []}
    path.write_text(json.dumps(index, separators=(",", ":")), "utf-8")


def pagefind_binary() -> Path | None:
    """The Pagefind executable: $PAGEFIND_BINARY_PATH, else the `pagefind_bin` package's, else
    one on PATH."""
    given = os.environ.get("PAGEFIND_BINARY_PATH")
    if given:
        return Path(given)
    try:
        import pagefind_bin

        return Path(pagefind_bin.get_executable())
    except (ImportError, FileNotFoundError):
        found = shutil.which("pagefind")
        return Path(found) if found else None


class PagefindIndexer:
    """Runs Pagefind over site_dir: at once in a build, in a background thread under serve."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: Path | None = None  # a site_dir built since the running index began
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.last_seconds: float | None = None
        # The pages' files when every page is a folder's index.html (MkDocs'
        # use_directory_urls): a raw-source page of `notes.html` is the folder `notes.html/`,
        # which Pagefind's default `**/*.html` would try to read as a file, and warn.
        self.glob: str | None = None
        atexit.register(self._stop)

    def index(self, site_dir: Path) -> bool:
        """Index site_dir now; False (warned) when Pagefind failed."""
        return self._run(site_dir)

    def index_later(self, site_dir: Path) -> None:
        """Index site_dir in a background thread; a build that ends while one runs is indexed
        after it, once."""
        with self._lock:
            self._pending = site_dir
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(
                target=self._work, name="groundwiki-pagefind", daemon=True
            )
            self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the background index is written (tests, the benchmark)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _work(self) -> None:
        while True:
            with self._lock:
                site_dir, self._pending = self._pending, None
                if site_dir is None:
                    self._thread = None
                    return
            self._run(site_dir)

    def _run(self, site_dir: Path) -> bool:
        binary = pagefind_binary()
        if binary is None:
            log.warning(
                "groundwiki: site search: the Pagefind binary was not found, so the site has no "
                "search index; install it (pip install pagefind-bin), or set site_search: "
                "material in mkdocs.yml's groundwiki block"
            )
            return False
        # Written beside the live index, then swapped in: a search meanwhile uses the old one.
        staging = site_dir / f"{PAGEFIND_DIR}.new"
        shutil.rmtree(staging, ignore_errors=True)
        command = [
            str(binary), "--site", str(site_dir), "--output-path", str(staging), "--quiet",
            # The headings' permalinks (¶) are no words of the page.
            "--exclude-selectors", ".headerlink",
            *(("--glob", self.glob) if self.glob else ()),
        ]  # fmt: skip
        began = time.perf_counter()
        try:
            with subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            ) as process:
                self._process = process
                output, _ = process.communicate(timeout=TIMEOUT)
                code = process.returncode
        except subprocess.TimeoutExpired:
            output, code = f"no answer in {TIMEOUT} s".encode(), -1
        except OSError as exc:
            output, code = str(exc).encode(), -1
        finally:
            self._process = None
        said = output.decode("utf-8", "replace").strip()
        if code != 0 or not (staging / "pagefind.js").is_file():
            shutil.rmtree(staging, ignore_errors=True)
            log.warning(
                f"groundwiki: site search: Pagefind ({binary}) failed on {site_dir} (exit "
                f"{code}), so the search box has no index; the pages are built. It said: "
                f"{said[-2000:] or 'nothing'}. Run `{binary} --site {site_dir}` to see why, or "
                "set site_search: material in mkdocs.yml's groundwiki block"
            )
            return False
        if said:
            log.info(f"groundwiki: site search: Pagefind said: {said[-2000:]}")
        live, old = site_dir / PAGEFIND_DIR, site_dir / f"{PAGEFIND_DIR}.old"
        try:
            shutil.rmtree(old, ignore_errors=True)
            if live.exists():
                live.rename(old)
            staging.rename(live)
        except OSError as exc:  # a rebuild cleaned site_dir meanwhile: the next run writes it
            log.info(f"groundwiki: site search: the index was not swapped in ({exc})")
            return False
        shutil.rmtree(old, ignore_errors=True)
        self.last_seconds = time.perf_counter() - began
        log.info(f"groundwiki: site search: Pagefind indexed the site in {self.last_seconds:.1f} s")
        return True

    def _stop(self) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
