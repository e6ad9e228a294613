"""Find the raw sources, extract their text and chunk it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .chunking import DEFAULT_POLICY, ChunkPolicy, chunk_text
from .config import Config
from .extract import Extracted, extract
from .model import Source

ChunkCache = dict[tuple[str, str, str], tuple]


def discover_sources(config: Config) -> list[Path]:
    """Every non-hidden file under the raw-sources folder, in a stable order."""
    raw_dir = config.raw_dir
    if not raw_dir.is_dir():
        return []
    found = [
        path
        for path in raw_dir.rglob("*")
        if not any(part.startswith(".") for part in path.relative_to(raw_dir).parts)
        and (path.is_file() or path.is_symlink())
    ]
    return sorted(found, key=lambda p: p.relative_to(raw_dir).as_posix())


def read_source(
    path: Path,
    config: Config,
    policy: ChunkPolicy = DEFAULT_POLICY,
    cache: ChunkCache | None = None,
) -> Source:
    rel = path.relative_to(config.raw_dir).as_posix()
    if not path.resolve().is_relative_to(config.raw_dir.resolve()):
        extracted = Extracted(
            "link", None, problem="it is a symlink that leads outside the raw-sources folder"
        )
    elif not path.exists():
        extracted = Extracted("link", None, problem="it is a symlink to a file that does not exist")
    else:
        extracted = extract(path)
    if extracted.text is None:
        return Source(rel, path, extracted.format, None, None, (), extracted.problem)
    content_hash = extracted.content_hash or ""
    cache_key = (rel, content_hash, policy.identity)
    chunks = cache.get(cache_key) if cache is not None else None
    if chunks is None:
        chunks = chunk_text(rel, extracted, policy)
        if cache is not None:
            cache[cache_key] = chunks
    return Source(rel, path, extracted.format, extracted.text, content_hash, chunks)


def read_sources(
    config: Config,
    policy: ChunkPolicy = DEFAULT_POLICY,
    cache: ChunkCache | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Source]:
    paths = discover_sources(config)
    sources: dict[str, Source] = {}
    for index, path in enumerate(paths, start=1):
        source = read_source(path, config, policy, cache)
        sources[source.path] = source
        if progress:
            progress(index, len(paths))
    return sources
