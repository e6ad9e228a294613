"""Find the raw sources, extract their text and chunk it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.file_cache import StampedCache, stamp, walk
from groundwiki.core.model.records import Chunk, Source
from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy, chunk_text
from groundwiki.core.sources.extract import Extracted, extract

ChunkCache = dict[tuple[str, str, str], tuple[Chunk, ...]]


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


def read_source(path: Path, config: Config) -> Source:
    rel = path.relative_to(config.raw_dir).as_posix()
    extracted = _unusable_link(path, config.raw_dir) or extract(path)
    return Source(
        rel,
        path,
        extracted.format,
        extracted.text,
        extracted.content_hash,
        extracted.heading_lines,
        extracted.problem,
        extracted.hint,
    )


def read_sources(
    config: Config,
    progress: Callable[[int, int], None] | None = None,
    cache: StampedCache[Source] | None = None,
) -> dict[str, Source]:
    paths = discover_sources(config)
    if cache is not None:
        cache.keep_only(set(paths))
    sources: dict[str, Source] = {}
    for index, path in enumerate(paths, start=1):
        source = cache.get(path) if cache is not None and not path.is_symlink() else None
        if source is None:
            at = stamp(path)
            source = read_source(path, config)
            if cache is not None and not path.is_symlink():  # a link's target may change
                cache.put(path, source, at)
        sources[source.path] = source
        if progress:
            progress(index, len(paths))
    return sources


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
