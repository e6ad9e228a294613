"""A recompile with a CompileCache reads only the files that changed, and sees every change."""

from __future__ import annotations

import os

from groundwiki.core import compile_wiki, load_config
from groundwiki.core.wiki.compiler import CompileCache
from helpers.wikis import page, write_wiki


def _bump(path, text):
    path.write_text(text, encoding="utf-8")
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))  # clocks can be coarse


def test_unchanged_files_are_reused_and_changed_ones_reread(tmp_path):
    config = load_config(
        write_wiki(
            tmp_path,
            {"a.md": page(title="A", body="See [[b]].\n"), "b.md": page(title="B")},
            {"n.md": "one\ntwo\n"},
        )
    )
    cache = CompileCache()
    first = compile_wiki(config, files=cache)
    _bump(tmp_path / "wiki/b.md", page(title="B two"))
    _bump(tmp_path / "raw-sources/n.md", "one\nthree\n")
    second = compile_wiki(config, files=cache)
    assert second.pages["a"] is first.pages["a"]  # not parsed again
    assert second.pages["b"].title == "B two"
    assert second.sources["n.md"].text == "one\nthree\n"


def test_deleted_and_new_files_are_noticed(tmp_path):
    config = load_config(write_wiki(tmp_path, {"a.md": page(), "b.md": page()}, {"n.md": "x\n"}))
    cache = CompileCache()
    compile_wiki(config, files=cache)
    (tmp_path / "wiki/b.md").unlink()
    (tmp_path / "wiki/c.md").write_text(page(title="C"), encoding="utf-8")
    (tmp_path / "raw-sources/n.md").unlink()
    wiki = compile_wiki(config, files=cache)
    assert sorted(wiki.pages) == ["a", "c"]
    assert wiki.sources == {}
    assert len(cache.pages.entries) == 2
