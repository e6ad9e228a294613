"""What one build parsed, kept on disk for the next one (a second local build, or a CI job that
restores the folder).

Entries are keyed by the file's path and the SHA-256 of its bytes, not by its modification time:
a fresh checkout gives every file a new time but the same bytes. The file starts with a text
line naming the format, the groundwiki version, the model's schema and a fingerprint of the
configuration; a cache written by another version or for another wiki is ignored unread, and
one that cannot be read is ignored, each with one log line naming the file. Nothing in it is
used before its file's bytes are hashed again and match.

The cache is JSON read into the model's types by `cache_codec`, never unpickled: a CI cache
restored by prefix, a shared runner or an artifact is less trusted than the checkout, and a
crafted file can at worst be ignored. The pickled cache of earlier versions
(`compile-cache.pickle`) is never read; it is deleted when this one is written.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from groundwiki import __version__
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.file_cache import Stamp, stamp
from groundwiki.core.model.records import Page, Source
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.sources.raw_sources import ChunkCache
from groundwiki.core.wiki.cache_codec import (
    SCHEMA,
    CacheStale,
    CacheUnreadable,
    chunks_of,
    chunks_rows,
    page_of,
    page_row,
    read_document,
    remove_old,
    renders_of,
    renders_rows,
    rows_of,
    source_of,
    source_row,
    write_document,
)
from groundwiki.core.wiki.compiler import CompileCache

log = logging.getLogger("groundwiki")
CACHE_FILE = "compile-cache.json"
OLD_CACHE_FILE = "compile-cache.pickle"  # groundwiki's earlier format: deleted, never read
FORMAT = "groundwiki-build-cache-3"
_PARTS = {"pages", "sources", "chunks", "renders"}


def header(config: Config) -> str:
    """The first line: format, version, schema and a fingerprint of everything a parse depends
    on besides the file (the configuration's values, paths included)."""
    fingerprint = hashlib.sha256(repr(config).encode("utf-8", "replace")).hexdigest()[:32]
    return f"{FORMAT} {__version__} {SCHEMA} {fingerprint}"


def load_build_cache(folder: Path, config: Config) -> CompileCache:
    """A CompileCache holding the stored entries whose files still have the same bytes."""
    path = folder / CACHE_FILE
    cache = CompileCache()
    try:
        stored = read_document(path, header(config), _decode)
    except FileNotFoundError:
        return cache
    except CacheStale:
        log.info(
            "groundwiki: the build cache %s was written by another groundwiki version or for "
            "another configuration: ignored, every file is read",
            path,
        )
        return cache
    except CacheUnreadable as exc:
        log.info(
            "groundwiki: the build cache %s is unreadable (%s): ignored, every file is read",
            path,
            str(exc)[:200],
        )
        return cache
    pages, sources, chunks, renders = stored
    for rel, digest, page in pages:
        at = _same_bytes(config.root / rel, digest)
        if at is not None and page.path == config.root / rel:
            cache.pages.put(page.path, page, at)
    for rel, digest, source in sources:
        at = _same_bytes(config.root / rel, digest)
        if at is not None and source.abs_path == config.root / rel:
            cache.sources.put(source.abs_path, source, at)
    cache.chunks.update(chunks)
    cache.renders.update(renders)
    return cache


_Stored = tuple[
    list[tuple[str, str, Page]], list[tuple[str, str, Source]], ChunkCache, dict[str, Rendered]
]


def _decode(document: Any) -> _Stored:
    if type(document) is not dict or set(document) != _PARTS:
        raise CacheUnreadable("not a build cache")
    pages = [
        (rel, digest, page_of(page))
        for rel, digest, page in rows_of(document["pages"], str, str, list)
    ]
    sources = [
        (rel, digest, source_of(source))
        for rel, digest, source in rows_of(document["sources"], str, str, list)
    ]
    return pages, sources, chunks_of(document["chunks"]), renders_of(document["renders"])


def save_build_cache(folder: Path, config: Config, cache: CompileCache) -> None:
    """Replace the stored cache with what `cache` holds for files that have not changed since
    they were read. It only saves time, so a failure to write is logged, not raised."""
    pages: list[list[Any]] = []
    for path, (_, page) in sorted(cache.pages.entries.items()):
        row = page_row(page) if page.content_hash and page.path == path else None
        if row is not None:
            pages.append([config.rel(path), page.content_hash, row])
    sources: list[list[Any]] = []
    hashes: set[str | None] = set()
    for path, (at, source) in sorted(cache.sources.entries.items()):
        digest = _digest_if_unchanged(path, at)
        if digest is not None:
            sources.append([config.rel(path), digest, source_row(source)])
            hashes.add(source.content_hash)
    chunks = {key: value for key, value in cache.chunks.items() if key[1] in hashes}
    document = {
        "pages": pages,
        "sources": sources,
        "chunks": chunks_rows(chunks),
        "renders": renders_rows(cache.renders),
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_document(folder / CACHE_FILE, header(config), document)
    except OSError as exc:
        log.info("groundwiki: cannot save the build cache in %s: %s", folder, exc)
        return
    remove_old(folder / OLD_CACHE_FILE)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _same_bytes(path: Path, digest: str) -> Stamp | None:
    """The file's stamp when its bytes hash to `digest` and it did not change while hashed."""
    before = stamp(path)
    if before is None or path.is_symlink() or _digest(path) != digest:
        return None
    return before if stamp(path) == before else None


def _digest_if_unchanged(path: Path, at: Stamp) -> str | None:
    if stamp(path) != at or path.is_symlink():
        return None
    digest = _digest(path)
    return digest if stamp(path) == at else None
