"""Site search in a real browser: Pagefind against mkdocs-material's own search, from a cold cache.

Builds the wiki twice (`site_search: pagefind` and `site_search: material`), or takes two
built sites, serves each on 127.0.0.1 and drives Debian's /usr/bin/chromium with Playwright
(never a downloaded browser). For each query, in a fresh browser context (an empty cache): a
page is loaded (`--when load`: typing at its load event, its own fetches still running; `idle`:
once its network is idle and a second more), the search box focused and the query put in it at
once (one input and one keyup event, which both searches read). Printed: the ms from then to
the first result shown, and the bytes the server sent: for search (material's
search_index.json and worker; Pagefind's pagefind/ files and the box's script), after the
query, and for the whole visit. Then Pagefind's ratio against material, in the same run.

Target (issue 31): on the 6,571-note vault, the first result within 300 ms of typing and under
1 MB transferred for it.

    .venv/bin/python bench/site_search.py --vault /work/shared/vaults/obsidian-hub
    .venv/bin/python bench/site_search.py --pagefind-site /tmp/pf --material-site /tmp/mat
    .venv/bin/python bench/site_search.py --wiki mkdocs.yml     # the handbook
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import yaml
from harness import RESULTS, machine_facts, write_results

BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
QUERIES = ("plugin", "daily notes", "graph view", "templater", "dataview", "canvas")
TARGET_MS = 300
TARGET_BYTES = 1_000_000
# The first result each search shows, in its own list.
FIRST = {
    "pagefind": ".gw-search__list > .md-search-result__item",
    "material": ".md-search-result__list:not(.gw-search__list) > .md-search-result__item",
}
SEARCH_PARTS = ("/search/", "/pagefind/", "/workers/search", "site_search.js")


class _Counting(http.server.SimpleHTTPRequestHandler):
    """A quiet static handler that notes each file it sends and its size: dedicated workers'
    fetches (Pagefind's chunks, material's index) are counted too, which the page's own
    network events do not show."""

    sent: ClassVar[list[tuple[float, str, int]]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def copyfile(self, source: Any, outputfile: Any) -> None:
        began = source.tell()
        super().copyfile(source, outputfile)
        self.sent.append((time.perf_counter(), self.path, source.tell() - began))


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """A static server of `folder` on 127.0.0.1 (Python's, as a plain host would serve it)."""
    handler = functools.partial(_Counting, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def build(config: dict[str, Any], home: Path, work: Path, kind: str) -> tuple[Path, float]:
    """`mkdocs build` of the config with `site_search: kind`, written for the build beside the
    wiki's own (`home`: relative paths start there) and removed after; the site and seconds."""
    data = {**config, "plugins": []}
    for plugin in config.get("plugins", []):
        if isinstance(plugin, dict) and "groundwiki" in plugin:
            plugin = {"groundwiki": {**(plugin["groundwiki"] or {}), "site_search": kind}}
        elif plugin == "groundwiki":
            plugin = {"groundwiki": {"site_search": kind}}
        data["plugins"].append(plugin)
    written = home / f".site-search-bench-{kind}.yml"
    written.write_text(yaml.safe_dump(data, sort_keys=False))
    site = work / f"site-{kind}"
    began = time.perf_counter()
    try:
        subprocess.run(
            [str(BIN / "mkdocs"), "build", "-q", "-f", str(written), "-d", str(site)],
            check=True,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
    finally:
        written.unlink()
    return site, time.perf_counter() - began


def wiki_config(wiki: Path | None, vault: Path | None) -> tuple[dict[str, Any], Path]:
    """The config to build, and the folder it is written in for the build."""
    if vault is not None:
        config = {
            "site_name": vault.name,
            "docs_dir": str(vault.resolve()),
            "theme": {"name": "material", "features": ["navigation.instant", "search.highlight"]},
            "plugins": ["search", "groundwiki"],
        }
        return config, Path(tempfile.mkdtemp(prefix="site-search-"))
    assert wiki is not None
    config = yaml.load(wiki.read_text(), Loader=yaml.SafeLoader)  # the handbook's: no tags
    return config, wiki.resolve().parent


def first_search(browser: Any, url: str, kind: str, query: str, idle: bool) -> dict[str, Any]:
    """One query in a fresh context (an empty cache): ms from the first key to the first
    result, and the bytes the server sent (the whole visit; search's files; after the first
    key)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    _Counting.sent.clear()
    tab.goto(url, wait_until="networkidle" if idle else "load")
    if idle:
        tab.wait_for_timeout(1000)  # the page's own scripts done (the local graph's layout)
    selector = FIRST[kind]
    tab.evaluate(
        """selector => {
          window.__first = null;
          const observer = new MutationObserver(() => {
            if (window.__first === null && document.querySelector(selector)) {
              window.__first = performance.now();
              observer.disconnect();
            }
          });
          observer.observe(document.body, { childList: true, subtree: true });
        }""",
        selector,
    )
    typed = time.perf_counter()
    tab.focus(".md-search__input")
    # The whole query in one go, right after the focus (as a paste would): both searches read
    # it at once (material on `keyup`, groundwiki's on `input`), and the time is the search's,
    # not that of a driver typing letter by letter on a busy machine.
    tab.evaluate(
        """query => {
          const input = document.querySelector(".md-search__input");
          window.__t0 = performance.now();
          input.value = query;
          input.dispatchEvent(new Event("input", { bubbles: true }));
          input.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true, key: "Unidentified" }));
        }""",
        query,
    )
    tab.wait_for_function("() => window.__first !== null", timeout=120_000, polling=10)
    ms = tab.evaluate("() => window.__first - window.__t0")
    shown = time.perf_counter()
    title = tab.locator(selector).first.locator("h1").inner_text()
    time.sleep(0.3)  # what the first results still fetch (their fragments) is counted
    sent = list(_Counting.sent)
    context.close()
    search = [(at, path, size) for at, path, size in sent if any(p in path for p in SEARCH_PARTS)]
    return {
        "query": query,
        "ms": round(ms, 1),
        "search_bytes": sum(size for _, _, size in search),
        "search_files": len(search),
        "search_bytes_to_first_result": sum(size for at, _, size in search if at <= shown),
        "bytes_after_typing": sum(size for at, _, size in sent if at >= typed),
        "visit_bytes": sum(size for _, _, size in sent),
        "first": title,
    }


def folder_bytes(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wiki", type=Path, help="a mkdocs.yml to build (the handbook's)")
    parser.add_argument("--vault", type=Path, help="a folder of notes to build as docs_dir")
    parser.add_argument(
        "--pagefind-site", type=Path, help="a site built with site_search: pagefind"
    )
    parser.add_argument(
        "--material-site", type=Path, help="a site built with site_search: material"
    )
    parser.add_argument("--queries", default=",".join(QUERIES), help="comma-separated")
    parser.add_argument("--page", default="", help="the page searched from, a URL path")
    parser.add_argument(
        "--when",
        choices=("load", "idle", "both"),
        default="both",
        help="type at the page's load event (the worst case: the page's own fetches and "
        "scripts still running), or once the network is idle and a second more (a reader who "
        "looked at the page first)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "site_search.json")
    args = parser.parse_args()
    queries = [q for q in args.queries.split(",") if q]
    sites: dict[str, Path] = {}
    builds: dict[str, float] = {}
    if args.pagefind_site and args.material_site:
        sites = {"pagefind": args.pagefind_site, "material": args.material_site}
    else:
        if not (args.wiki or args.vault):
            parser.error("give --wiki, --vault, or both --pagefind-site and --material-site")
        config, home = wiki_config(args.wiki, args.vault)
        work = Path(tempfile.mkdtemp(prefix="site-search-"))
        for kind in ("pagefind", "material"):
            sites[kind], builds[kind] = build(config, home, work, kind)
            print(f"built {kind:9} in {builds[kind]:7.1f} s: {sites[kind]}")

    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {"machine": machine_facts(), "queries": queries, "builds_s": builds}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        whens = ("load", "idle") if args.when == "both" else (args.when,)
        for when in whens:
            for kind, site in sites.items():
                runs = []
                with served(site) as url:
                    for query in queries:
                        runs.append(
                            first_search(browser, url + args.page, kind, query, when == "idle")
                        )
                        run = runs[-1]
                        print(
                            f"{when:4} {kind:9} {query!r:14} first result {run['ms']:8.1f} ms, "
                            f"search {run['search_bytes'] / 1e3:8.1f} KB in {run['search_files']:3} "
                            f"files, after typing {run['bytes_after_typing'] / 1e3:8.1f} KB, visit "
                            f"{run['visit_bytes'] / 1e3:8.1f} KB  ({run['first'][:36]})"
                        )
                index = site / ("pagefind" if kind == "pagefind" else "search")
                count, size = folder_bytes(index)
                results[f"{kind}_{when}"] = {
                    "runs": runs,
                    "median_ms": statistics.median(r["ms"] for r in runs),
                    "max_ms": max(r["ms"] for r in runs),
                    "median_search_bytes": statistics.median(r["search_bytes"] for r in runs),
                    "max_search_bytes": max(r["search_bytes"] for r in runs),
                    "index_files": count,
                    "index_bytes": size,
                }
        browser.close()
    print()
    met = True
    for when in whens:
        pf, mat = results[f"pagefind_{when}"], results[f"material_{when}"]
        for kind, r in (("pagefind", pf), ("material", mat)):
            print(
                f"{when:4} {kind:9} median {r['median_ms']:8.1f} ms (max {r['max_ms']:.1f}), "
                f"search bytes median {r['median_search_bytes'] / 1e3:.1f} KB (max "
                f"{r['max_search_bytes'] / 1e3:.1f}), index on disk {r['index_bytes'] / 1e6:.1f} MB "
                f"in {r['index_files']} files"
            )
        print(
            f"{when:4} pagefind / material: {pf['median_ms'] / mat['median_ms']:.3f}x time, "
            f"{pf['median_search_bytes'] / max(1, mat['median_search_bytes']):.3f}x bytes"
        )
        met = met and pf["max_ms"] <= TARGET_MS and pf["max_search_bytes"] < TARGET_BYTES
    print(f"target (every query <= {TARGET_MS} ms and < 1 MB): {'met' if met else 'NOT met'}")
    results["target_met"] = met
    results["load_average"] = os.getloadavg()
    write_results(args.out, results)


if __name__ == "__main__":
    main()
