"""Reading pages on several cores gives exactly what reading them one by one gives."""

from __future__ import annotations

import threading

import pytest
from groundwiki.core import load_config
from groundwiki.core.files import forking
from groundwiki.core.read import page_reader
from groundwiki.core.read.page_reader import PARALLEL_FROM, _extra_workers, read_pages
from groundwiki.core.read.pages import read_page
from groundwiki.core.read.provenance import PathGuard
from groundwiki.core.wiki.compiler import discover_pages
from helpers.wikis import page, write_wiki


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


@pytest.fixture(autouse=True)
def no_native_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about a process with no native thread pool: one that ran a sidecar test
    module before (its embedding model's pool) has forking off for good (forking.py)."""
    monkeypatch.setattr(forking, "_native_pools", [])


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> int:
    """Forking from 20 pages on: the same slices and workers as a wiki of hundreds, in a tenth of
    the time."""
    monkeypatch.setattr(page_reader, "PARALLEL_FROM", 20)
    return 20


def test_parallel_reading_matches_sequential_reading_in_order(tmp_path, small_threshold):
    config, paths = _wiki(tmp_path, small_threshold + 50)
    assert _extra_workers(len(paths), 2) == 1  # read by this process and a forked worker
    one_by_one = [read_page(path, config, PathGuard(config.raw_dir)) for path in paths]
    parallel = read_pages(paths, config, PathGuard(config.raw_dir), workers=2)
    assert parallel == one_by_one
    assert [p.key for p in parallel] == sorted(p.key for p in parallel)
    assert any(p.problems for p in parallel if p.key == "broken")  # a broken page is kept


def test_progress_reaches_the_total(tmp_path, small_threshold):
    config, paths = _wiki(tmp_path, small_threshold + 10)
    assert _extra_workers(len(paths), 2) == 1
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


# A bug in the reader for one file is simulated by making a real parser step raise for that
# file only (no such bug is known once it is fixed, and the net must still hold).


def test_a_reader_bug_on_one_page_is_a_finding_for_that_page(tmp_path, monkeypatch):
    import groundwiki.core.read.pages as pages_module
    from groundwiki.core import compile_wiki

    config = load_config(write_wiki(tmp_path, {"a.md": page(title="A"), "b.md": page(title="B")}))
    real = pages_module.parse_body

    def parse_body(text, rel_path, line):
        if rel_path.endswith("b.md"):
            raise ValueError("boom " + "x" * 10_000)
        return real(text, rel_path, line)

    monkeypatch.setattr(pages_module, "parse_body", parse_body)
    wiki = compile_wiki(config)
    assert wiki.pages["a"].title == "A"
    (problem,) = wiki.pages["b"].problems
    assert problem.rule == "unreadable-page" and problem.at.path == "wiki/b.md"
    assert "ValueError: boom" in problem.message and "bug in groundwiki" in problem.hint
    assert len(problem.message) < 300


def test_a_reader_bug_on_one_source_is_a_finding_for_that_source(tmp_path, monkeypatch):
    import groundwiki.core.sources.raw_sources as sources_module
    from groundwiki.core import compile_wiki

    sources = {"good.md": "fine\n", "bad.md": "trips the reader\n"}
    config = load_config(write_wiki(tmp_path, {"a.md": page(title="A")}, sources))
    real = sources_module.extract

    def extract(path, *rest):
        if path.name == "bad.md":
            raise KeyError("boom")
        return real(path, *rest)

    monkeypatch.setattr(sources_module, "extract", extract)
    wiki = compile_wiki(config)
    assert wiki.sources["good.md"].text == "fine\n"
    bad = wiki.sources["bad.md"]
    assert bad.text is None and "KeyError" in (bad.problem or "")
    assert "bug in groundwiki" in (bad.hint or "")
