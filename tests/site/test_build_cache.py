"""The build cache on disk: a hit reuses a page only while its bytes are the same, a changed file
is read again, and a corrupt or foreign cache is ignored with one log line, never unpickled (the
cache is JSON: tests/site/test_cache_format.py shows crafted files never run)."""

from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
from pathlib import Path

import yaml
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.wiki.compiler import CompileCache
from groundwiki.mkdocs_plugin.build_cache import (
    CACHE_FILE,
    header,
    load_build_cache,
    save_build_cache,
)
from helpers.commands import mkdocs
from helpers.wikis import page, write_wiki

SOURCE = "# Notes\n\nOne line.\nTwo lines.\n"


def _wiki(root: Path) -> Path:
    pages = {
        "index.md": page(kind="overview", body="# Home\n\nSee [[alpha]].\n"),
        "alpha.md": page(title="Alpha", body="Alpha text.\n<!-- from: raw-sources/n.md#L3 -->\n"),
        "beta.md": page(title="Beta", body="Beta text.\n"),
    }
    return write_wiki(root, pages, {"n.md": SOURCE})


def _saved(root: Path) -> tuple[Path, CompileCache]:
    config = load_config(_wiki(root))
    cache = CompileCache()
    wiki = compile_wiki(config, files=cache)
    wiki.chunks_of(wiki.sources["n.md"])
    folder = root / ".groundwiki/build"
    save_build_cache(folder, config, cache)
    return folder, cache


def test_a_hit_restores_every_unchanged_file_with_a_fresh_stamp(tmp_path):
    folder, _ = _saved(tmp_path / "one")
    # Another checkout at the same path: same bytes, new times and inodes.
    shutil.copytree(tmp_path / "one", tmp_path / "two")
    shutil.rmtree(tmp_path / "one")
    os.rename(tmp_path / "two", tmp_path / "one")
    config = load_config(tmp_path / "one/mkdocs.yml")
    cache = load_build_cache(folder, config)
    assert len(cache.pages.entries) == 3 and len(cache.sources.entries) == 1
    assert cache.chunks  # the source's chunks need not be cut again
    wiki = compile_wiki(config, files=cache)
    fresh = compile_wiki(config)
    assert wiki.pages == fresh.pages and wiki.sources == fresh.sources
    assert wiki.chunks_of(wiki.sources["n.md"]) == fresh.chunks_of(fresh.sources["n.md"])


def test_a_changed_file_is_read_again(tmp_path):
    folder, _ = _saved(tmp_path)
    (tmp_path / "wiki/beta.md").write_text(page(title="Beta two"), encoding="utf-8")
    (tmp_path / "raw-sources/n.md").write_text(SOURCE + "Three.\n", encoding="utf-8")
    config = load_config(tmp_path / "mkdocs.yml")
    cache = load_build_cache(folder, config)
    assert sorted(p.name for p in cache.pages.entries) == ["alpha.md", "index.md"]
    assert not cache.sources.entries
    wiki = compile_wiki(config, files=cache)
    assert wiki.pages["beta"].title == "Beta two"
    assert wiki.sources["n.md"].line_count == 5


def test_a_corrupt_cache_is_ignored_with_one_line(tmp_path, caplog):
    folder, _ = _saved(tmp_path)
    config = load_config(tmp_path / "mkdocs.yml")
    (folder / CACHE_FILE).write_bytes(header(config).encode() + b"\n\x80\x05garbage, not JSON")
    with caplog.at_level(logging.INFO, logger="groundwiki"):
        cache = load_build_cache(folder, config)
    assert not cache.pages.entries
    lines = [r.getMessage() for r in caplog.records if "build cache" in r.getMessage()]
    assert len(lines) == 1 and "unreadable" in lines[0] and "every file is read" in lines[0]
    assert sorted(compile_wiki(config, files=cache).pages) == ["alpha", "beta", "index"]


def test_a_cache_of_another_version_or_wiki_is_never_unpickled(tmp_path, caplog):
    folder, _ = _saved(tmp_path)
    config = load_config(tmp_path / "mkdocs.yml")

    class Trap:
        def __reduce__(self):
            return (os.system, ("touch trapped",))

    foreign = b"groundwiki-build-cache-2 0.0.1 0123456789abcdef\n" + pickle.dumps(Trap())
    (folder / CACHE_FILE).write_bytes(foreign)
    with caplog.at_level(logging.INFO, logger="groundwiki"):
        cache = load_build_cache(folder, config)
    assert not cache.pages.entries and not Path("trapped").exists()
    assert any("another groundwiki version" in r.getMessage() for r in caplog.records)
    # Moved to another folder, the same cache is another wiki's: its paths are not ours.
    shutil.copytree(tmp_path / "wiki", tmp_path / "moved/wiki")
    shutil.copytree(tmp_path / "raw-sources", tmp_path / "moved/raw-sources")
    shutil.copy(tmp_path / "mkdocs.yml", tmp_path / "moved/mkdocs.yml")
    moved = load_config(tmp_path / "moved/mkdocs.yml")
    save_build_cache(folder, config, CompileCache())
    assert not load_build_cache(folder, moved).pages.entries


def test_a_second_build_uses_the_cache_and_writes_the_same_site(tmp_path):
    config = _wiki(tmp_path)
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material"}
    data["plugins"] = ["search", {"groundwiki": {}}]
    config.write_text(yaml.safe_dump(data))

    def build(site: str) -> Path:
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        done = mkdocs("build", "-q", "-f", str(config), "-d", str(tmp_path / site), env=env)
        assert done.returncode == 0, done.stderr
        return tmp_path / site

    first = build("site-1")
    cached = tmp_path / ".groundwiki/build" / CACHE_FILE
    assert cached.is_file() and (tmp_path / ".groundwiki/build/build-phases.json").is_file()
    written = cached.stat().st_mtime_ns
    second = build("site-2")
    assert cached.stat().st_mtime_ns == written  # everything was found: nothing to save
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in files:
        if name.suffix != ".gz":  # the sitemap's archive carries a time
            assert (first / name).read_bytes() == (second / name).read_bytes(), name
    with (tmp_path / ".groundwiki/build" / CACHE_FILE).open("rb") as handle:
        handle.readline()
        assert len(json.load(handle)["renders"]) == 3  # each page's Markdown, for the next build
    raw = (second / "raw-sources/n.md/index.html").read_text()
    assert 'id="L3"' in raw and "Alpha" in raw  # built beside MkDocs, with its citing page
    cached.write_bytes(b"not a cache")
    assert build("site-3").is_dir()  # a corrupt cache costs time, never the build


def test_a_changed_template_override_is_not_served_from_the_cache(tmp_path):
    config = _wiki(tmp_path)
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material", "custom_dir": "overrides"}
    data["plugins"] = [{"groundwiki": {}}]
    config.write_text(yaml.safe_dump(data))
    footer = tmp_path / "overrides/groundwiki/footer.html"
    footer.parent.mkdir(parents=True)

    def alpha_after(text: str) -> str:
        footer.write_text(f"<p>{text}</p>\n")
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        done = mkdocs("build", "-q", "-f", str(config), "-d", str(tmp_path / "site"), env=env)
        assert done.returncode == 0, done.stderr
        return (tmp_path / "site/alpha/index.html").read_text()

    assert "first footer" in alpha_after("first footer")
    second = alpha_after("second footer")
    assert "second footer" in second and "first footer" not in second
