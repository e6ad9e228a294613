"""Reading pages on several cores gives exactly what reading them one by one gives."""

from __future__ import annotations

import threading

from conftest import page, write_wiki
from groundwiki.core import load_config
from groundwiki.core.page_reader import PARALLEL_FROM, _extra_workers, read_pages
from groundwiki.core.pages import read_page
from groundwiki.core.provenance import PathGuard
from groundwiki.core.wiki import discover_pages


def _wiki(tmp_path, count: int):
    pages = {
        f"p{number:04}.md": page(
            title=f"Page {number}",
            body=f"# Page {number}\n\nSee [[p{(number + 1) % count:04}]].\n"
            "<!-- from: raw-sources/n.md#L1 -->\n",
        )
        for number in range(count)
    }
    pages["broken.md"] = "---\ntitle: [unclosed\n---\nbody\n"
    config = load_config(write_wiki(tmp_path, pages, {"n.md": "one\ntwo\n"}))
    return config, discover_pages(config)


def test_parallel_reading_matches_sequential_reading_in_order(tmp_path):
    config, paths = _wiki(tmp_path, PARALLEL_FROM + 50)
    one_by_one = [read_page(path, config, PathGuard(config.raw_dir)) for path in paths]
    parallel = read_pages(paths, config, PathGuard(config.raw_dir), workers=2)
    assert parallel == one_by_one
    assert [p.key for p in parallel] == sorted(p.key for p in parallel)
    assert any(p.problems for p in parallel if p.key == "broken")  # a broken page is kept


def test_progress_reaches_the_total(tmp_path):
    config, paths = _wiki(tmp_path, PARALLEL_FROM + 10)
    seen: list[tuple[int, int]] = []
    read_pages(paths, config, PathGuard(config.raw_dir), lambda i, n: seen.append((i, n)), 2)
    assert seen[-1] == (len(paths), len(paths))
    assert [i for i, _ in seen] == sorted(i for i, _ in seen)


def test_small_wikis_and_threaded_callers_read_in_one_process():
    assert _extra_workers(PARALLEL_FROM - 1, 2) == 0
    assert _extra_workers(PARALLEL_FROM * 4, 1) == 0
    assert _extra_workers(PARALLEL_FROM * 4, 2) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert _extra_workers(PARALLEL_FROM * 4, 2) == 0  # forking beside a thread is unsafe
    finally:
        stop.set()
        other.join()
