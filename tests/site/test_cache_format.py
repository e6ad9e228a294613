"""The caches on disk (the build cache of `mkdocs build`, the sidecar's compile cache) hold plain
values that cannot run code: a crafted file, at the old pickle paths or the new ones, is ignored
without anything in it being executed, a damaged one is rebuilt, and a saved cache gives back
exactly what was compiled."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import subprocess
from pathlib import Path

import pytest
import yaml
from groundwiki import __version__
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.evidence.lock import write_lock
from groundwiki.core.wiki.compiler import CompileCache
from groundwiki.mkdocs_plugin.build_cache import load_build_cache, save_build_cache
from helpers.commands import mkdocs
from helpers.wikis import page, write_wiki

SOURCE = "# Notes\n\nOne line.\nTwo lines.\n\n## Later\n\nThree.\n"
# The file names before and after: the old ones must never be unpickled, the new ones hold JSON.
OLD_BUILD_CACHE = ".groundwiki/build/compile-cache.pickle"
NEW_BUILD_CACHE = ".groundwiki/build/compile-cache.json"
OLD_SIDECAR_CACHE = ".groundwiki/compile-cache.pickle"
NEW_SIDECAR_CACHE = ".groundwiki/compile-cache.json"


class Payload:
    """Unpickling this creates the folder `marker`: what an attacker's pickle would run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.marker),))


def crafted_pickle(marker: Path) -> bytes:
    return pickle.dumps(Payload(marker), protocol=pickle.HIGHEST_PROTOCOL)


def old_build_header(config: Config) -> bytes:
    """The header line the pickle build cache had: predictable from the version and the
    configuration, so an attacker could write a file that passed it."""
    fingerprint = hashlib.sha256(repr(config).encode("utf-8", "replace")).hexdigest()[:32]
    return f"groundwiki-build-cache-2 {__version__} {fingerprint}\n".encode()


def rich_wiki(root: Path) -> Config:
    """Pages with every part a Page holds: links of each kind, embeds, citations (ranges, from
    the frontmatter), headings, block ids, problems, extra frontmatter of every JSON type;
    sources readable and not; a lock with a damaged line."""
    pages = {
        "index.md": page(kind="overview", title="Home", body="# Home\n\nSee [[alpha|the A]].\n"),
        "alpha.md": page(
            title="Alpha",
            aliases=["A one"],
            tags=["x", "y"],
            refs=["beta"],
            sources=["raw-sources/n.md#L3-L4"],
            stale_since="2024-01-02",
            rating=4.5,
            count=3,
            flag=True,
            nothing=None,
            nested={"list": [1, "two", {"three": 3.0}], "empty": {}},
            body=(
                "# Alpha\n\nAlpha text. <!-- from: raw-sources/n.md#L3 -->\n\n"
                "## Part two\n\nA paragraph with a block. ^blk\n\n"
                "![[beta#Beta part]] and [the beta](beta.md#beta-part) and [[missing]].\n\n"
                "<!-- from: raw-sources/gone.md -->\n\n"
                "```\n# not a heading\n```\n"
            ),
        ),
        "beta.md": page(
            summary=None,
            title="Beta",
            body="Beta's first sentence. More.\n\n## Beta part\n\nText.\n",
        ),
        "broken.md": "---\ntitle: [unclosed\n---\nBody.\n",
    }
    config_file = write_wiki(
        root, pages, {"n.md": SOURCE, "t.txt": "plain text\n", "bad.pdf": b"%PDF-not really"}
    )
    config = load_config(config_file)
    wiki = compile_wiki(config)
    write_lock(config.lock_path, wiki.lock_entries())
    with config.lock_path.open("a", encoding="utf-8") as lock:
        lock.write("a damaged line\n")
    return config


def filled_cache(config: Config) -> CompileCache:
    """A compile cache as a long-running process holds it: pages, sources, chunks, passages,
    the lock."""
    cache = CompileCache()
    wiki = compile_wiki(config, files=cache)
    assert wiki.chunks and wiki.passages  # cut now, so the cache holds them
    assert cache.pages.entries and cache.sources.entries and cache.lock.entries
    assert cache.chunks and cache.passages
    return cache


def build(config_file: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return mkdocs("build", "-q", "-f", str(config_file), "-d", str(site), env=env)


def site_wiki(root: Path) -> Path:
    config_file = write_wiki(
        root,
        {"index.md": page(kind="overview", title="Home", body="# Home\n\nSee [[alpha]].\n"),
         "alpha.md": page(title="Alpha", body="Alpha. <!-- from: raw-sources/n.md#L3 -->\n")},
        {"n.md": SOURCE},
    )  # fmt: skip
    data = yaml.safe_load(config_file.read_text())
    data["plugins"] = [{"groundwiki": {}}]
    config_file.write_text(yaml.safe_dump(data))
    return config_file


# --- the build cache (`mkdocs build`) ------------------------------------------------------------


def test_a_pickle_at_the_old_build_cache_path_never_runs_on_mkdocs_build(tmp_path):
    config_file = site_wiki(tmp_path)
    marker = tmp_path / "payload-ran"
    old = tmp_path / OLD_BUILD_CACHE
    old.parent.mkdir(parents=True)
    old.write_bytes(old_build_header(load_config(config_file)) + crafted_pickle(marker))
    done = build(config_file, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert not old.exists()  # deleted unread once the new cache is written
    assert (tmp_path / NEW_BUILD_CACHE).is_file()


def test_a_pickle_in_the_new_build_cache_file_never_runs_on_mkdocs_build(tmp_path):
    config_file = site_wiki(tmp_path)
    marker = tmp_path / "payload-ran"
    build(config_file, tmp_path / "site-1")
    new = tmp_path / NEW_BUILD_CACHE
    first_line = new.read_bytes().split(b"\n", 1)[0] + b"\n"  # the header it checks
    new.write_bytes(first_line + crafted_pickle(marker))
    done = build(config_file, tmp_path / "site-2")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    rewritten = new.read_bytes()
    assert rewritten.startswith(first_line)
    assert json.loads(rewritten[len(first_line) :])  # rebuilt as a readable cache


def test_build_cache_json_naming_classes_is_ignored(tmp_path, caplog):
    config = rich_wiki(tmp_path)
    folder = tmp_path / ".groundwiki/build"
    save_build_cache(folder, config, filled_cache(config))
    path = folder / "compile-cache.json"
    first_line = path.read_bytes().split(b"\n", 1)[0] + b"\n"
    marker = tmp_path / "payload-ran"
    hostile = {
        "py/object": "os.mkdir",
        "__class__": "os.mkdir",
        "__reduce__": ["os.mkdir", [str(marker)]],
        "pages": [["wiki/index.md", "0" * 64, {"py/reduce": [{"py/function": "os.mkdir"}]}]],
    }
    path.write_bytes(first_line + json.dumps(hostile).encode())
    with caplog.at_level(logging.INFO, logger="groundwiki"):
        cache = load_build_cache(folder, config)
    assert not marker.exists()
    assert not cache.pages.entries and not cache.sources.entries and not cache.chunks
    assert any(str(path) in r.getMessage() for r in caplog.records)


def test_the_build_cache_gives_back_what_was_compiled(tmp_path):
    config = rich_wiki(tmp_path)
    cache = filled_cache(config)
    folder = tmp_path / ".groundwiki/build"
    save_build_cache(folder, config, cache)
    loaded = load_build_cache(folder, config)
    assert loaded.pages.entries == cache.pages.entries
    assert loaded.sources.entries == cache.sources.entries
    assert loaded.chunks == cache.chunks
    again = compile_wiki(config, files=loaded)
    fresh = compile_wiki(config)
    assert again.pages == fresh.pages and again.sources == fresh.sources
    assert again.chunks == fresh.chunks and again.passages == fresh.passages
    reloaded = {id(page) for _, page in loaded.pages.entries.values()}
    assert id(again.pages["beta"]) in reloaded  # used as reloaded, not parsed again


@pytest.mark.parametrize("damage", ["truncated", "wrong version", "wrong shape", "not json"])
def test_a_damaged_build_cache_is_ignored_and_rewritten(tmp_path, caplog, damage):
    config = rich_wiki(tmp_path)
    folder = tmp_path / ".groundwiki/build"
    save_build_cache(folder, config, filled_cache(config))
    path = folder / "compile-cache.json"
    data = path.read_bytes()
    first_line, body = data.split(b"\n", 1)
    damaged = {
        "truncated": data[: len(data) // 2],
        "wrong version": first_line.replace(b"groundwiki-build-cache-", b"groundwiki-build-cache-9")
        + b"\n"
        + body,
        "wrong shape": first_line
        + b"\n"
        + json.dumps({"pages": [[1, 2, [3]]], "sources": {}}).encode(),
        "not json": first_line + b"\n" + b"\x80\x05\x95garbage",
    }[damage]
    path.write_bytes(damaged)
    with caplog.at_level(logging.INFO, logger="groundwiki"):
        cache = load_build_cache(folder, config)
    assert not cache.pages.entries
    assert [r for r in caplog.records if str(path) in r.getMessage()]
    wiki = compile_wiki(config, files=cache)
    assert sorted(wiki.pages) == ["alpha", "beta", "broken", "index"]
    save_build_cache(folder, config, cache)
    assert load_build_cache(folder, config).pages.entries == cache.pages.entries


# --- the sidecar's compile cache (`groundwiki index`, `serve`, `mcp`) ----------------------------


def indexer(root: Path):
    from groundwiki_sidecar.base.settings import load_sidecar
    from groundwiki_sidecar.index.indexer import Indexer

    return Indexer(load_sidecar(root / "mkdocs.yml"), embedder=None)


@pytest.mark.sidecar
def test_a_pickle_at_the_old_sidecar_cache_path_never_runs(tmp_path):
    rich_wiki(tmp_path)
    marker = tmp_path / "payload-ran"
    old = tmp_path / OLD_SIDECAR_CACHE
    old.parent.mkdir(parents=True)
    old.write_bytes(crafted_pickle(marker))
    opened = indexer(tmp_path)
    try:
        assert not marker.exists()
        assert not opened.cache.pages.entries
        opened.sync()
        opened.save_cache()
    finally:
        opened.close()
    assert not marker.exists()
    assert not old.exists()  # deleted unread once the new cache is written
    assert (tmp_path / NEW_SIDECAR_CACHE).is_file()


@pytest.mark.sidecar
@pytest.mark.parametrize("content", ["pickle", "json naming a class", "truncated", "wrong version"])
def test_a_crafted_or_damaged_sidecar_cache_is_ignored_and_rewritten(tmp_path, content):
    rich_wiki(tmp_path)
    first = indexer(tmp_path)
    try:
        first.sync()
        first.save_cache()
    finally:
        first.close()
    path = tmp_path / NEW_SIDECAR_CACHE
    data = path.read_bytes()
    first_line = data.split(b"\n", 1)[0] + b"\n"
    marker = tmp_path / "payload-ran"
    path.write_bytes(
        {
            "pickle": first_line + crafted_pickle(marker),
            "json naming a class": first_line
            + json.dumps({"__class__": "os.mkdir", "args": [str(marker)]}).encode(),
            "truncated": data[: len(data) // 2],
            "wrong version": b"groundwiki-compile-cache-0 0.0.0\n" + data[len(first_line) :],
        }[content]
    )
    second = indexer(tmp_path)
    try:
        assert not marker.exists()
        assert not second.cache.pages.entries
        second.sync()
        second.save_cache()
    finally:
        second.close()
    assert path.read_bytes().startswith(first_line)
    third = indexer(tmp_path)
    try:
        assert third.cache.pages.entries  # rebuilt: the next start reads it
    finally:
        third.close()


@pytest.mark.sidecar
def test_the_sidecar_cache_gives_back_what_was_compiled(tmp_path):
    config = rich_wiki(tmp_path)
    first = indexer(tmp_path)
    try:
        first.sync()
        first.save_cache()
        saved = first.cache
    finally:
        first.close()
    second = indexer(tmp_path)
    try:
        loaded = second.cache
    finally:
        second.close()
    for part in ("pages", "sources", "lock"):
        assert getattr(loaded, part).entries == getattr(saved, part).entries, part
    assert loaded.chunks == saved.chunks and loaded.passages == saved.passages
    assert loaded.lock.entries[config.lock_path][1].problems  # the damaged line's, kept
    again = compile_wiki(config, files=loaded)
    fresh = compile_wiki(config)
    assert again.pages == fresh.pages and again.sources == fresh.sources
    assert again.chunks == fresh.chunks and again.passages == fresh.passages
