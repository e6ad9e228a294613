"""Read many page files, on every core when there are enough of them to pay for it.

Reading a page is pure Python (YAML, markdown-it, the contract check), so threads do not help;
a second process does. The result is the same list, in the same order, as reading one by one.

Workers are forked, which costs no imports and needs no `__main__` guard from the caller, and
only from a single-threaded process: forking while other threads run can copy a held lock into
the child. Threaded callers (`mkdocs serve`, the sidecar) start fresh workers instead when there
are enough pages to pay for their start (page_workers.py).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Collection
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.file_cache import StampedCache, stamp
from groundwiki.core.files.forking import can_fork, die_with_parent
from groundwiki.core.model.records import Page
from groundwiki.core.read.page_workers import read_spawned, spawn_count
from groundwiki.core.read.pages import page_from_text, read_page
from groundwiki.core.read.provenance import PathGuard

# A page costs 2-3 ms to read; a forked worker costs about 20 ms plus sending its pages back.
PARALLEL_FROM = 200

Progress = Callable[[int, int], None]


def read_pages(
    paths: list[Path],
    config: Config,
    guard: PathGuard,
    progress: Progress | None = None,
    workers: int | None = None,
    cache: StampedCache[Page] | None = None,
    held: Collection[Path] = (),
    buffers: Buffers | None = None,
) -> list[Page]:
    """`held`: paths not read again, whose version in `cache` is taken as it is, changed or
    not (each must have one). `buffers`: page files open in an editor, read from its text."""
    if cache is None:
        return _read_all(paths, config, guard, progress, workers)
    cache.keep_only(set(paths))
    if buffers is not None and buffers.texts:
        return _with_buffers(paths, config, guard, cache, held, buffers, progress, workers)
    stamps = {path: stamp(path) for path in paths if path not in held}
    known = {path: cache.entries[path][1] if path in held else cache.get(path) for path in paths}
    unread = [p for p in paths if known[p] is None]
    kept = len(paths) - len(unread)
    # Counted over every page: those the cache holds are done before the first is read.
    counted = (lambda done, _: progress(kept + done, len(paths))) if progress else None
    fresh = iter(_read_all(unread, config, guard, counted, workers))
    pages: list[Page] = []
    for path in paths:
        page = known[path]
        if page is None:
            page = next(fresh)
            cache.put(path, page, stamps[path])
        pages.append(page)
    if progress:
        progress(len(pages), len(paths))
    return pages


def read_changed(
    paths: list[Path],
    config: Config,
    guard: PathGuard,
    cache: StampedCache[Page],
    held: Collection[Path] = (),
) -> list[Page]:
    """These page files (a few that changed, among the many `cache` holds), each from `cache`
    when unchanged, else read again into it; the cache keeps its other entries. `held`: taken
    as the cache has them, changed or not (each must have one)."""
    found: list[Page] = []
    for path in paths:
        if path in held:
            found.append(cache.entries[path][1])
            continue
        page = cache.get(path)
        if page is None:
            at = stamp(path)
            page = read_page(path, config, guard)
            cache.put(path, page, at)
        found.append(page)
    return found


def _read_all(
    paths: list[Path],
    config: Config,
    guard: PathGuard,
    progress: Progress | None,
    workers: int | None,
) -> list[Page]:
    extra = _extra_workers(len(paths), workers)
    if extra == 0:
        spawned = spawn_count(len(paths)) if workers is None and not can_fork() else 0
        if spawned:  # a threaded process: workers started afresh, not forked
            return read_spawned(paths, config, guard, progress, spawned)
        return _read_here(paths, config, guard, progress, 0, len(paths))
    # Contiguous slices: the main process reads the first while the workers read the rest.
    size = -(-len(paths) // (extra + 1))
    slices = [paths[i : i + size] for i in range(0, len(paths), size)]
    context = multiprocessing.get_context("fork")
    # A worker dies with this process: one left blocked on its pipe after a kill -9 would
    # hold whatever this process had open (the sidecar's claim on its index folder).
    with ProcessPoolExecutor(
        max_workers=len(slices) - 1, mp_context=context, initializer=die_with_parent
    ) as pool:
        futures: list[Future[list[Page]]] = [
            pool.submit(_read_slice, chunk, config) for chunk in slices[1:]
        ]
        pages = _read_here(slices[0], config, guard, progress, 0, len(paths))
        for future in futures:
            pages += future.result()
            if progress:
                progress(len(pages), len(paths))
    return pages


def _extra_workers(count: int, workers: int | None) -> int:
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if count < PARALLEL_FROM or workers < 2 or not can_fork():
        return 0
    return min(workers, count // (PARALLEL_FROM // 2)) - 1


def _read_here(
    paths: list[Path],
    config: Config,
    guard: PathGuard,
    progress: Progress | None,
    done: int,
    total: int,
) -> list[Page]:
    pages: list[Page] = []
    for path in paths:
        pages.append(read_page(path, config, guard))
        if progress:
            progress(done + len(pages), total)
    return pages


def _read_slice(paths: list[Path], config: Config) -> list[Page]:
    guard = PathGuard(config.raw_dir)  # realpath answers are cached per process
    return [read_page(path, config, guard) for path in paths]


@dataclass
class Buffers:
    """Page files open in an editor (`groundwiki lsp`): their text, not the file's. A buffer is
    parsed once per text, so an unchanged buffer gives every compile the same object (the
    incremental compile compares objects, core/wiki/dependencies.py)."""

    texts: dict[Path, str] = field(default_factory=dict)
    parsed: dict[Path, tuple[str, Page]] = field(default_factory=dict)

    def page(self, path: Path, config: Config, guard: PathGuard) -> Page:
        text = self.texts[path]
        known = self.parsed.get(path)
        if known is None or known[0] != text:
            known = (text, page_from_text(path, text, config, guard))
            self.parsed[path] = known
        return known[1]


def _with_buffers(
    paths: list[Path],
    config: Config,
    guard: PathGuard,
    cache: StampedCache[Page],
    held: Collection[Path],
    buffers: Buffers,
    progress: Progress | None,
    workers: int | None,
) -> list[Page]:
    on_disk = [path for path in paths if path not in buffers.texts]
    read = iter(read_pages(on_disk, config, guard, progress, workers, cache, held))
    pages = [
        buffers.page(path, config, guard) if path in buffers.texts else next(read) for path in paths
    ]
    for closed in [path for path in buffers.parsed if path not in buffers.texts]:
        del buffers.parsed[closed]
    return pages
