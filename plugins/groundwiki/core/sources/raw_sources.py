"""Find the raw sources, extract their text and chunk it.

A file is one source, but for an archive, which is one source per member (archive.py): each
member's `abs_path` is the archive's, the file on disk that its stamp and its changes follow.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.file_cache import StampedCache, stamp, walk
from groundwiki.core.model.records import Chunk, Source
from groundwiki.core.sources.archive import SEPARATOR, read_archive
from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy, chunk_text
from groundwiki.core.sources.extract import Extracted, Extractions, extract, is_archive

ChunkCache = dict[tuple[str, str, str], tuple[Chunk, ...]]
ArchiveCache = StampedCache[tuple[Source, ...]]


def discover_sources(config: Config) -> list[Path]:
    """Every non-hidden file under the raw-sources folder, in a stable order.

    Symlinks are listed too (a file link, a folder link, a broken one) so that reading them can
    say what is wrong instead of the file silently missing.
    """
    raw_dir = config.raw_dir
    if not raw_dir.is_dir():
        return []
    return walk(raw_dir, links=True)


def _unusable_link(path: Path, raw_dir: Path) -> Extracted | None:
    if not path.is_symlink():
        return None
    if not path.resolve().is_relative_to(raw_dir):
        return Extracted(
            "link",
            None,
            problem="it is a symlink that leads outside the raw-sources folder",
            hint="copy the evidence into raw-sources instead of linking to it",
        )
    if not path.exists():
        return Extracted(
            "link", None, problem="it is a symlink to nothing", hint="remove or fix the link"
        )
    if path.is_dir():
        return Extracted(
            "link",
            None,
            problem="it is a symlink to a folder, which groundwiki does not follow",
            hint="move the folder into raw-sources, or link its files one by one",
        )
    return None


def read_source(path: Path, config: Config, seen: Extractions | None = None) -> Source:
    """The one source a file that is not an archive is (`read_file` reads any file). `seen`:
    what files read before held, so that a copy is extracted once."""
    rel = path.relative_to(config.raw_dir).as_posix()
    return _source(rel, path, _unusable_link(path, config.raw_dir) or extract(path, seen))


def _source(name: str, path: Path, extracted: Extracted) -> Source:
    return Source(
        name,
        path,
        extracted.format,
        extracted.text,
        extracted.content_hash,
        extracted.heading_lines,
        extracted.problem,
        extracted.hint,
    )


def read_file(path: Path, config: Config, seen: Extractions | None = None) -> tuple[Source, ...]:
    """The sources in one file: itself, or an archive's members (and the archive itself when it
    has a finding of its own)."""
    if not is_archive(path) or _unusable_link(path, config.raw_dir) is not None:
        return (read_source(path, config, seen),)
    rel = path.relative_to(config.raw_dir).as_posix()
    try:
        with open(path, "rb") as stream:
            members, whole = read_archive(stream, os.fstat(stream.fileno()).st_size)
    except OSError as exc:
        cannot = f"cannot read the file: {exc.strerror or exc}"
        unread = Extracted("zip", None, problem=cannot, hint="check the file's permissions")
        return (_source(rel, path, unread),)
    found = [_source(f"{rel}{SEPARATOR}{m.name}", path, m.extracted) for m in members]
    return (*([_source(rel, path, whole)] if whole is not None else []), *found)


def read_cached(
    path: Path,
    config: Config,
    cache: StampedCache[Source] | None = None,
    archives: ArchiveCache | None = None,
    seen: Extractions | None = None,
) -> tuple[Source, ...]:
    """`read_file`, from the caches while the file is unchanged (an archive's stamp stands for
    all its members). A symlink is read every time: its target may change."""
    if path.is_symlink():
        return read_file(path, config)
    if is_archive(path):
        found = archives.get(path) if archives is not None else None
        if found is None:
            at = stamp(path)
            found = read_file(path, config)
            if archives is not None:
                archives.put(path, found, at)
        return found
    source = cache.get(path) if cache is not None else None
    if source is None:
        at = stamp(path)
        source = read_source(path, config, seen)
        if cache is not None:
            cache.put(path, source, at)
    return (source,)


def read_sources(
    config: Config,
    progress: Callable[[int, int], None] | None = None,
    cache: StampedCache[Source] | None = None,
    archives: ArchiveCache | None = None,
) -> dict[str, Source]:
    paths = discover_sources(config)
    listed = set(paths)
    if cache is not None:
        cache.keep_only(listed)
    if archives is not None:
        archives.keep_only(listed)
    sources: dict[str, Source] = {}
    seen: Extractions = {}
    for index, path in enumerate(paths, start=1):
        for source in read_cached(path, config, cache, archives, seen):
            sources[source.path] = source
        if progress:
            progress(index, len(paths))
    return sources


def source_named(config: Config, name: str) -> Source | None:
    """The raw source `name` (relative to the raw-sources folder, or absolute) read from disk: a
    file, or a member of an archive (`a.zip!/b.md`). None when there is no such source."""
    file_name, separator, member = name.partition(SEPARATOR)
    path = Path(os.path.normpath(config.raw_dir / file_name))
    real = path.resolve()
    if not (path.is_relative_to(config.raw_dir) and real.is_relative_to(config.raw_dir)):
        return None
    if not real.is_file():
        return None
    wanted = path.relative_to(config.raw_dir).as_posix() + separator + member
    return next((source for source in read_file(path, config) if source.path == wanted), None)


def chunk_source(
    source: Source, policy: ChunkPolicy = DEFAULT_POLICY, cache: ChunkCache | None = None
) -> tuple[Chunk, ...]:
    """The chunks of a readable source; a cache keyed by content hash skips unchanged ones."""
    if source.text is None:
        return ()
    key = (source.path, source.content_hash or "", policy.identity)
    if cache is not None and key in cache:
        return cache[key]
    extracted = Extracted(source.format, source.text, source.heading_lines)
    chunks = chunk_text(source.path, extracted, policy)
    if cache is not None:
        cache[key] = chunks
    return chunks
