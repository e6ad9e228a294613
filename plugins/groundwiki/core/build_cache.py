"""What one build parsed, kept on disk for the next one (a second local build, or a CI job that
restores the folder).

Entries are keyed by the file's path and the SHA-256 of its bytes, not by its modification time:
a fresh checkout gives every file a new time but the same bytes. The file starts with a text
line naming the groundwiki version and a fingerprint of the configuration; a cache written by
another version or for another wiki is ignored without being unpickled, and one that cannot be
read is ignored, each with one log line. Nothing in it is used before its file's bytes are
hashed again and match.

The cache holds pickled objects, so it is as trusted as the checkout it lives in: restore it
only from the same project's own builds (CI caches are scoped that way).
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from .config import Config
from .file_cache import Stamp, stamp
from .model import Page, Source
from .render.slots import Rendered
from .sources import ChunkCache
from .wiki import CompileCache

log = logging.getLogger("groundwiki")
CACHE_FILE = "compile-cache.pickle"
FORMAT = "groundwiki-build-cache-2"


@dataclass
class _Stored:
    pages: list[tuple[str, str, Page]]  # (path from the root, SHA-256 of the bytes, page)
    sources: list[tuple[str, str, Source]]
    chunks: ChunkCache
    renders: dict[str, Rendered]  # by render key (the plugin's): inputs, templates, options


def header(config: Config) -> bytes:
    """The first line: version and a fingerprint of everything a parse depends on besides the
    file (the configuration's values, paths included)."""
    fingerprint = hashlib.sha256(repr(config).encode("utf-8", "replace")).hexdigest()[:32]
    return f"{FORMAT} {__version__} {fingerprint}\n".encode()


def load_build_cache(folder: Path, config: Config) -> CompileCache:
    """A CompileCache holding the stored entries whose files still have the same bytes."""
    path = folder / CACHE_FILE
    cache = CompileCache()
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return cache
    except OSError as exc:
        log.info("groundwiki: cannot read the build cache %s (%s): every file is read", path, exc)
        return cache
    with handle:
        try:
            first = handle.readline(200)
            if first != header(config):
                log.info(
                    "groundwiki: the build cache %s was written by another groundwiki version "
                    "or for another configuration: ignored, every file is read",
                    path,
                )
                return cache
            stored = pickle.load(handle)
        except Exception as exc:  # garbage raises almost any type from pickle
            log.info(
                "groundwiki: the build cache %s is unreadable (%s): ignored, every file is read",
                path,
                type(exc).__name__,
            )
            return cache
    if not _well_formed(stored):
        log.info("groundwiki: the build cache %s is malformed: ignored, every file is read", path)
        return cache
    for rel, digest, page in stored.pages:
        at = _same_bytes(config.root / rel, digest)
        if at is not None and page.path == config.root / rel:
            cache.pages.put(page.path, page, at)
    for rel, digest, source in stored.sources:
        at = _same_bytes(config.root / rel, digest)
        if at is not None and source.abs_path == config.root / rel:
            cache.sources.put(source.abs_path, source, at)
    cache.chunks.update(stored.chunks)
    cache.renders.update(stored.renders)
    return cache


def save_build_cache(folder: Path, config: Config, cache: CompileCache) -> None:
    """Replace the stored cache with what `cache` holds for files that have not changed since
    they were read. It only saves time, so a failure to write is logged, not raised."""
    pages = [
        (config.rel(path), page.content_hash, page)
        for path, (_, page) in sorted(cache.pages.entries.items())
        if page.content_hash and page.path == path
    ]
    sources: list[tuple[str, str, Source]] = []
    for path, (at, source) in sorted(cache.sources.entries.items()):
        digest = _digest_if_unchanged(path, at)
        if digest is not None:
            sources.append((config.rel(path), digest, source))
    hashes = {s.content_hash for _, _, s in sources}
    chunks = {key: value for key, value in cache.chunks.items() if key[1] in hashes}
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{CACHE_FILE}.{os.getpid()}"
    try:
        with temporary.open("wb") as handle:
            handle.write(header(config))
            stored = _Stored(pages, sources, chunks, dict(cache.renders))
            pickle.dump(stored, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, folder / CACHE_FILE)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        log.info("groundwiki: cannot save the build cache in %s: %s", folder, exc)


def _well_formed(stored: object) -> bool:
    return (
        isinstance(stored, _Stored)
        and isinstance(stored.pages, list)
        and isinstance(stored.sources, list)
        and isinstance(stored.chunks, dict)
        and isinstance(stored.renders, dict)
        and all(isinstance(r, Rendered) for r in stored.renders.values())
        and all(isinstance(p, Page) for _, _, p in stored.pages)
        and all(isinstance(s, Source) for _, _, s in stored.sources)
    )


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
