"""Compile a wiki: read every page file and raw source, and the lock, into one `Wiki`
(core/wiki/compiled.py) that all consumers share; a `CompileCache` kept by a long-running
process re-reads only the files that changed."""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.evidence.lock import Lock, read_lock
from groundwiki.core.files.file_cache import StampedCache, stamp, walk
from groundwiki.core.files.known_changes import Scan, changed_below, updated_scan
from groundwiki.core.model.records import Page, Source, is_unpublished
from groundwiki.core.model.scopes import GLOBAL, is_scoped, scope_of, scope_root, unowned, user_of
from groundwiki.core.read.page_reader import Buffers, read_changed, read_pages
from groundwiki.core.read.pages import internal_error
from groundwiki.core.read.provenance import PathGuard
from groundwiki.core.read.symlinks import leaves_folder, linked_out_page
from groundwiki.core.sources.archive import SEPARATOR
from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy
from groundwiki.core.sources.passages import PassageCache
from groundwiki.core.sources.raw_sources import (
    ArchiveCache,
    ChunkCache,
    discover_sources,
    read_cached,
    read_file,
    read_sources,
)
from groundwiki.core.wiki.compiled import Wiki

Progress = Callable[[str, int, int], None]


def discover_pages(
    config: Config, linked: set[Path] | None = None, others: list[str] | None = None
) -> list[Path]:
    """Every page file; `linked` receives those that are symlinks, `others` the paths of the
    other files (attachments)."""
    docs = config.docs_dir
    if not docs.is_dir():
        return []
    found = walk(docs, suffix=".md", linked=linked, others=others)
    left_out = config.left_out
    if others is not None:
        others[:] = [other for other in others if not left_out(other)]
    if linked is not None:
        linked -= {path for path in linked if left_out(_below(path, docs))}
    return [path for path in found if not left_out(_below(path, docs))]


def _below(path: Path, docs: Path) -> str:
    return path.relative_to(docs).as_posix()


# A page file's object as read, and the object `assign_keys` made of it: by doc path.
KeyedPages = dict[str, tuple[Page, Page]]


def assign_keys(
    pages: list[Page], scoped: bool = False, made: KeyedPages | None = None
) -> list[Page]:
    """A page's key is its file name, lower-cased, when no page elsewhere in its scope has that
    name (the handbook's `[[key]]`); notes with one name in several folders (Obsidian allows it,
    and links to them use paths) are keyed by their path below the scope's folder instead, so
    each one exists on its own. In a scoped wiki each page first gets its scope from its path."""
    if scoped:
        pages = [
            page if page.scope == scope else replace(page, scope=scope)
            for page in pages
            if (scope := scope_of(page.doc_path, True))
        ]
    folders: dict[tuple[str, str], set[str]] = {}
    for page in pages:
        folder = posixpath.dirname(page.doc_path).casefold()
        folders.setdefault((page.scope, page.key), set()).add(folder)
    shared = {name for name, seen in folders.items() if len(seen) > 1}
    if not shared:
        return pages
    return [
        _keyed(page, _path_key(page), made) if (page.scope, page.key) in shared else page
        for page in pages
    ]


def _keyed(page: Page, key: str, made: KeyedPages | None) -> Page:
    """The page under its path key; the object made for the same file and key last time when
    `made` has one, so that a compile kept across changes sees the page unchanged."""
    if made is None:
        return replace(page, key=key)
    before = made.get(page.doc_path)
    if before is not None and before[0] is page and before[1].key == key:
        return before[1]
    keyed = replace(page, key=key)
    made[page.doc_path] = (page, keyed)
    return keyed


def _path_key(page: Page) -> str:
    below = page.doc_path.removeprefix(scope_root(page.doc_path, page.scope))
    return below.removesuffix(".md").lower()


@dataclass
class CompileCache:
    """Kept by a long-running process between compiles: only changed files are read again."""

    pages: StampedCache[Page] = field(default_factory=StampedCache)
    sources: StampedCache[Source] = field(default_factory=StampedCache)
    # An archive's members, while the archive is unchanged (not kept in a stored cache).
    archives: ArchiveCache = field(default_factory=StampedCache)
    chunks: ChunkCache = field(default_factory=dict)
    lock: StampedCache[Lock] = field(default_factory=StampedCache)
    passages: PassageCache = field(default_factory=dict)
    # A page's rendered Markdown by the hash of everything it was made from (the site build's).
    renders: dict[str, Any] = field(default_factory=dict)
    # The last compile: the next keeps its per-page results for the files a change left alone.
    last: Wiki | None = None
    keyed: KeyedPages = field(default_factory=dict)
    # What the last walk of the folder found: page files, those that are symlinks, the others.
    scan: Scan | None = None
    # The editor's buffers the last compile read (`buffers`): a keystroke that leaves this set
    # as it was changes nothing but their pages (`_keystroke`).
    buffered: frozenset[Path] = frozenset()
    # Where each page file (by doc path) stands in the last compile's `all_pages`, while
    # keystrokes keep the files as they are; made again after any other compile.
    positions: dict[str, int] | None = None


def compile_wiki(
    config: Config,
    *,
    policy: ChunkPolicy = DEFAULT_POLICY,
    cache: ChunkCache | None = None,
    progress: Progress | None = None,
    files: CompileCache | None = None,
    held: Collection[Path] = (),
    buffers: Buffers | None = None,
    rescan: bool = True,
    changed: Collection[Path] | None = None,
) -> Wiki:
    """`held`: page files not read this time (the sidecar indexes large ones after the rest):
    each is the version `files` has, or left out until a compile that reads it. `buffers`:
    page files open in an editor, read from its text (`groundwiki lsp`). Without `rescan`,
    only the buffers changed since the last compile of `files`: the files on disk are taken as
    that compile found them, without walking or checking them (an editor's keystroke).
    `changed`: every path that may have changed since the last compile of `files` (a file
    watcher's events): only those are looked at, the others taken as that compile found them."""
    guard = PathGuard(config.raw_dir)
    last = files.last if files is not None and not rescan and files.scan is not None else None
    if last is not None and files is not None and buffers is not None and not held:
        fast = _keystroke(config, files, buffers, last, guard, policy, cache)
        if fast is not None:
            return fast
    known = _known_changes(config, files, changed) if rescan else None
    if known is not None and files is not None and not (buffers and buffers.texts):
        edited = _edited(config, files, changed or (), known, guard, policy, cache, held)
        if edited is not None:
            return edited
    if last is not None and files is not None and files.scan is not None:
        paths, linked, others = list(files.scan[0]), set(files.scan[1]), list(files.scan[2])
        open_files = buffers.texts if buffers is not None else {}
        held = frozenset(held) | {path for path in paths if path not in open_files}
    elif known is not None and files is not None:
        scan, last = known
        files.scan = scan
        paths, linked, others = list(scan[0]), set(scan[1]), list(scan[2])
        held = frozenset(held) | (frozenset(paths) - frozenset(changed or ()))
    else:
        linked, others = set(), []
        paths = discover_pages(config, linked, others)
        if files is not None:
            files.scan = (tuple(paths), frozenset(linked), tuple(others))
    if held:
        kept = files.pages.entries if files else {}
        paths = [p for p in paths if p not in held or p in kept]
    scoped = is_scoped(config.docs_dir)
    # A page file directly under user/ belongs to no one (scopes.py): it is never read, so
    # nothing of it reaches the lock, the indexes or the site.
    docs = config.docs_dir
    refused = (
        {p for p in paths if unowned(p.relative_to(docs).as_posix(), scoped)} if scoped else set()
    )
    if refused:
        paths = [p for p in paths if p not in refused]
    page_progress = (lambda i, n: progress("pages", i, n)) if progress else None
    page_cache = files.pages if files else None
    # A page symlinked out of the wiki folder is never read: it would publish its target.
    outside = {p for p in linked if leaves_folder(p, config.docs_dir)}
    inside = [p for p in paths if p not in outside]
    read = iter(
        read_pages(
            inside, config, guard, page_progress, cache=page_cache, held=held, buffers=buffers
        )
    )
    all_pages = [linked_out_page(p, config) if p in outside else next(read) for p in paths]
    # A note its writer keeps out of the published wiki (Obsidian Publish's `publish: false`) is
    # no page: not linted, indexed or published, and a link to it is a broken link.
    unpublished = tuple(page.doc_path for page in all_pages if is_unpublished(page))
    if unpublished:
        all_pages = [page for page in all_pages if not is_unpublished(page)]
    all_pages = assign_keys(all_pages, scoped, files.keyed if files is not None else None)
    if files is not None and len(files.keyed) > 2 * len(all_pages) + 64:
        current = {page.doc_path for page in all_pages}
        files.keyed = {doc: made for doc, made in files.keyed.items() if doc in current}
    if files is not None and cache is None:
        cache = files.chunks
    shared = [page for page in all_pages if page.scope == GLOBAL]
    users: dict[str, list[Page]] = {}
    for page in all_pages:
        if page.scope != GLOBAL:
            users.setdefault(user_of(page.scope) or "", []).append(page)
    pages: dict[str, Page] = {}
    for page in shared:
        pages.setdefault(page.key, page)
    source_progress = (lambda i, n: progress("sources", i, n)) if progress else None
    sources = None
    if last is not None:
        sources = last.sources
        if known is not None and files is not None:
            sources = _updated_sources(sources, changed or (), config, files)
    if sources is None:
        sources = _read_sources(config, source_progress, files)
    lock = _read_lock(config, files)
    passage_cache = files.passages if files is not None else None
    previous = files.last if files is not None else None
    if previous is not None:  # one compile back is all the next needs
        object.__setattr__(previous, "previous", None)
    wiki = Wiki(
        config,
        pages,
        shared,
        sources,
        lock,
        policy,
        cache,
        tuple(sorted(others)),
        passage_cache,
        user_pages={user: tuple(found) for user, found in sorted(users.items())},
        scoped=scoped,
        refused=tuple(sorted(p.relative_to(docs).as_posix() for p in refused)),
        unpublished=unpublished,
        previous=previous,
    )
    if files is not None:
        files.last = wiki
        files.buffered = frozenset(buffers.texts) if buffers is not None else frozenset()
        files.positions = None
    return wiki


def _keystroke(
    config: Config,
    files: CompileCache,
    buffers: Buffers,
    last: Wiki,
    guard: PathGuard,
    policy: ChunkPolicy,
    cache: ChunkCache | None,
) -> Wiki | None:
    """The compile after a keystroke: the last compile's pages with those of the open buffers
    parsed again, in the same places; the same as the general path, which costs a pass over every
    page file (its cache, keys, scopes) where this costs one per open buffer. None when the
    general path must answer: a buffer opened or closed, a scoped wiki (a page's scope and view),
    a buffer that is a symlink (read as its link, not its text)."""
    open_files = buffers.texts
    if (
        last.scoped
        or last.base is not None
        or frozenset(open_files) != files.buffered
        or files.scan is None
        or any(path in files.scan[1] for path in open_files)
    ):
        return None
    docs = config.docs_dir
    positions = _positions(files, last)
    found: dict[int, Page] = {}
    for path in open_files:
        index = (
            positions.get(path.relative_to(docs).as_posix(), -1)
            if path.is_relative_to(docs)
            else -1
        )
        if index >= 0:  # else no page file the last walk found: the general path leaves it out
            found[index] = buffers.page(last.all_pages[index].path, config, guard)
        elif path in files.scan[0]:
            return None  # an unpublished note (`publish: false`): published now, perhaps
    if any(is_unpublished(page) for page in found.values()):
        return None  # a page unpublished now: the general path leaves it out
    return _with_pages(config, files, last, last.sources, found, policy, cache)


def _edited(
    config: Config,
    files: CompileCache,
    changed: Collection[Path],
    known: tuple[Scan, Wiki],
    guard: PathGuard,
    policy: ChunkPolicy,
    cache: ChunkCache | None,
    held: Collection[Path],
) -> Wiki | None:
    """The compile after edits to files that were there and still are (a file watcher's usual
    batch): the last compile's pages with the changed page files read again, in the same places,
    and its sources with the changed ones read again. The same as the general path, which makes
    several passes over every page file (its cache, keys, scopes: 0.15-0.2 s at 10,000 pages)
    where this makes one per changed file. None when the general path must answer: a file or
    folder came or went, a symlink changed, a scoped wiki."""
    scan, last = known
    before = files.scan
    if (
        before is None
        or last.scoped
        or last.base is not None
        or scan[0] != before[0]
        or scan[1] != before[1]
        or scan[2] != before[2]
        or any(path in before[1] for path in changed)
    ):
        return None
    sources = _updated_sources(last.sources, changed, config, files)
    if sources is None:
        return None
    docs = config.docs_dir
    positions = _positions(files, last)
    at_of = {
        path: positions.get(path.relative_to(docs).as_posix(), -1)
        for path in changed
        if path.suffix == ".md" and path.is_relative_to(docs)
    }
    edited = [path for path, at in at_of.items() if at >= 0]  # page files of the last walk
    if any(path in held and path not in files.pages.entries for path in edited):
        return None  # held back, with no version to keep: the general path leaves it out
    walked = frozenset(scan[0])
    if any(at < 0 and path in walked for path, at in at_of.items()):
        return None  # an unpublished note (`publish: false`) changed: published now, perhaps
    read = read_changed(edited, config, guard, files.pages, held)
    if any(is_unpublished(page) for page in read):
        return None  # a page unpublished now: the general path leaves it out
    files.scan = scan
    found = {at_of[path]: page for path, page in zip(edited, read, strict=True)}
    return _with_pages(config, files, last, sources, found, policy, cache)


def _positions(files: CompileCache, last: Wiki) -> dict[str, int]:
    """Each page file's place in the last compile's list, by doc path (kept while the list is
    the same: the fast paths below keep it so)."""
    if files.positions is None:
        files.positions = {page.doc_path: at for at, page in enumerate(last.all_pages)}
    return files.positions


def _with_pages(
    config: Config,
    files: CompileCache,
    last: Wiki,
    sources: dict[str, Source],
    found: dict[int, Page],
    policy: ChunkPolicy,
    cache: ChunkCache | None,
) -> Wiki:
    """The last compile with the pages `found` (by place in its list) in place of those there,
    and `sources`: what both fast paths compile, handing the new wiki the pages that changed."""
    all_pages = list(last.all_pages)
    pages = dict(last.pages)
    changed: list[tuple[Page, Page]] = []
    for index in sorted(found):
        old, page = all_pages[index], found[index]
        # Keys depend on the paths alone, which an edit or a keystroke leaves as they were.
        if page.key != old.key:
            page = _keyed(page, old.key, files.keyed)
        if page is old:
            continue
        all_pages[index] = page
        changed.append((old, page))
        if pages.get(page.key) is old:
            pages[page.key] = page
    previous = files.last
    if previous is not None:
        object.__setattr__(previous, "previous", None)
    wiki = Wiki(
        config,
        pages,
        all_pages,
        sources,
        _read_lock(config, files),
        policy,
        cache if cache is not None else files.chunks,
        last.attachments,
        files.passages,
        user_pages={},
        scoped=False,
        refused=last.refused,
        unpublished=last.unpublished,
        previous=previous,
        changed=tuple(changed),
    )
    files.last = wiki
    return wiki


def _known_changes(
    config: Config, files: CompileCache | None, changed: Collection[Path] | None
) -> tuple[Scan, Wiki] | None:
    """The page folder's listing after `changed`, and the compile it changes, when the last
    compile of `files` and the changed paths tell it without a walk (`known_changes`)."""
    if changed is None or files is None or files.last is None or files.scan is None:
        return None
    scan = updated_scan(files.scan, changed, config.docs_dir, ".md", config.left_out)
    return None if scan is None else (scan, files.last)


def _updated_sources(
    sources: dict[str, Source],
    changed: Collection[Path],
    config: Config,
    files: CompileCache,
) -> dict[str, Source] | None:
    """The last compile's raw sources with the changed ones read again, or None when a walk
    must tell (a folder or a symlink changed)."""
    mine = changed_below(changed, config.raw_dir)
    if not mine:
        return sources
    found = dict(sources)
    for relative, path in mine:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            for name in [n for n in found if _in_file(n, relative, "/")]:
                del found[name]
                files.sources.entries.pop(config.raw_dir / name, None)
                files.archives.entries.pop(config.raw_dir / name, None)
            continue
        except OSError:
            return None
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
                return None
            continue
        for name in [n for n in found if _in_file(n, relative)]:
            del found[name]  # an archive's members may come or go
        for source in read_cached(path, config, files.sources, files.archives):
            found[source.path] = source
    return dict(sorted(found.items()))


def _in_file(name: str, relative: str, *folder: str) -> bool:
    """Whether the source `name` is the file `relative` or one of its archive's members (or,
    given a "/", a file in the folder `relative`)."""
    return name == relative or name.startswith(
        tuple(relative + end for end in (SEPARATOR, *folder))
    )


def _read_sources(
    config: Config,
    progress: Callable[[int, int], None] | None,
    files: CompileCache | None,
) -> dict[str, Source]:
    """Every raw source; a bug while reading one makes that one a finding, not a failed compile.
    Only then is each file read again on its own, to find which one it was."""
    try:
        if files is None:
            return read_sources(config, progress)
        return read_sources(config, progress, files.sources, files.archives)
    except Exception:
        found: dict[str, Source] = {}
        for path in discover_sources(config):
            try:
                read = read_file(path, config)
            except Exception as exc:  # the one that failed; the others are read as usual
                read = (
                    Source(
                        path.relative_to(config.raw_dir).as_posix(),
                        path,
                        path.suffix.lstrip(".") or "unknown",
                        None,
                        None,
                        problem=f"reading it failed: {internal_error(exc)}",
                        hint="this is a bug in groundwiki: please report it with this file "
                        "attached",
                    ),
                )
            for source in read:
                found[source.path] = source
        return found


def _read_lock(config: Config, files: CompileCache | None) -> Lock:
    if files is None:
        return read_lock(config.lock_path)
    lock = files.lock.get(config.lock_path)
    if lock is None:
        at = stamp(config.lock_path)
        lock = read_lock(config.lock_path)
        files.lock.keep_only(set())
        files.lock.put(config.lock_path, lock, at)
    return lock
