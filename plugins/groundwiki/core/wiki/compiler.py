"""Compile a wiki: read every page and raw source into one model that all consumers share."""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.evidence.citations import pointers_for
from groundwiki.core.evidence.drift import CitationState, citation_states
from groundwiki.core.evidence.lock import Lock, LockEntry, chunk_citation, read_lock
from groundwiki.core.files.file_cache import StampedCache, stamp, walk
from groundwiki.core.links.resolver import Resolver, ScopedResolver
from groundwiki.core.model.records import (
    Attachment,
    Chunk,
    Citation,
    Link,
    Page,
    Passage,
    Pointer,
    Resolution,
    Source,
)
from groundwiki.core.model.scopes import GLOBAL, is_scoped, scope_of, scope_root, unowned, user_of
from groundwiki.core.model.site_paths import SiteLayout
from groundwiki.core.read.page_reader import read_pages
from groundwiki.core.read.pages import internal_error
from groundwiki.core.read.provenance import PathGuard
from groundwiki.core.read.symlinks import leaves_folder, linked_out_page
from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy
from groundwiki.core.sources.passages import PassageCache, cache_key, page_passages
from groundwiki.core.sources.raw_sources import (
    ChunkCache,
    chunk_source,
    discover_sources,
    read_source,
    read_sources,
)
from groundwiki.core.wiki.git_history import renamed_pages

log = logging.getLogger("groundwiki")
Progress = Callable[[str, int, int], None]
_UNSEEN = object()


@dataclass(frozen=True)
class ResolvedLink:
    page: Page
    link: Link
    resolution: Resolution | None
    attachment: Attachment | None = None  # when no page: the file it names, if any

    @property
    def broken(self) -> bool:
        return self.resolution is None and self.attachment is None


@dataclass(frozen=True)
class Wiki:
    config: Config
    pages: dict[str, Page]  # by key; on a duplicate key the first page by path wins
    all_pages: list[Page]  # every page file, duplicates included, sorted by path
    sources: dict[str, Source]  # by path inside raw-sources
    lock: Lock
    policy: ChunkPolicy = DEFAULT_POLICY
    chunk_cache: ChunkCache | None = None  # shared across compiles, e.g. by `mkdocs serve`
    attachments: tuple[str, ...] = ()  # files under docs_dir that are not pages, by doc path
    passage_cache: PassageCache | None = None  # shared across compiles, like `chunk_cache`
    # A scoped wiki (scopes.py): this Wiki is what one viewer sees. The compile gives the
    # shared scope's view (`pages` and `all_pages` hold shared pages only) with every user's
    # page files here, by user ID; `view(user)` gives a user's.
    user_pages: Mapping[str, tuple[Page, ...]] = field(default_factory=dict)
    scoped: bool = False
    # Page files directly under user/, in no user's folder (doc paths): no one's, so never read,
    # indexed or published (scopes.py); lint's `misplaced-user-page` names each.
    refused: tuple[str, ...] = ()
    user: str | None = None  # whose view this is; None: the shared scope's
    base: Wiki | None = None  # the shared scope's view, for a user's view
    resolver: Resolver = field(init=False)
    _source_chunks: dict[str, tuple[Chunk, ...]] = field(
        init=False, default_factory=dict, repr=False
    )
    _page_passages: PassageCache = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.base is None:
            resolver = Resolver(
                self.pages.values(), self.attachments, self.sources, scoped=self.scoped
            )
        else:  # a user's view: their own pages and files first, then the shared ones
            own = [page for page in self.all_pages if page.scope != GLOBAL]
            resolver = ScopedResolver(own, self.base.resolver, self.user or "")
        object.__setattr__(self, "resolver", resolver)

    @property
    def users(self) -> tuple[str, ...]:
        """Every user with pages of their own, sorted."""
        return tuple(self.user_pages)

    def view(self, user: str | None) -> Wiki:
        """What `user` sees (None: the shared scope): their own pages, then the shared pages
        they do not shadow, with links resolved in their scope first. One view per user and
        compile, made on first use."""
        base = self.base or self
        if user is None:
            return base
        if user == self.user:
            return self
        return base._views(user)

    def _views(self, user: str) -> Wiki:
        cached = self._user_views.get(user)
        if cached is None:
            cached = self._user_views[user] = _user_view(self, user)
        return cached

    @cached_property
    def _user_views(self) -> dict[str, Wiki]:
        return {}

    @cached_property
    def every_page(self) -> tuple[Page, ...]:
        """Every page file of every scope, by path: what the lock, raw sources and renames
        answer to, whoever views them."""
        base = self.base or self
        found = [*base.all_pages, *(p for pages in base.user_pages.values() for p in pages)]
        return tuple(sorted(found, key=lambda p: p.rel_path))

    def own(self, page: Page) -> bool:
        """Whether a page of this view is the viewer's own (every page, in the shared view)."""
        return self.user is None or page.scope != GLOBAL

    @cached_property
    def scope_views(self) -> tuple[Wiki, ...]:
        """The shared view, then each user's: every page of every scope is `own` in one."""
        base = self.base or self
        return (base, *(base.view(user) for user in base.users))

    @cached_property
    def owned_pages(self) -> tuple[tuple[Wiki, Page], ...]:
        """Every page that owns its key in its scope, with the view its owner sees it in: what
        the lock and the sidecar's indexes hold, once each."""
        return tuple(
            (view, page)
            for view in self.scope_views
            for page in view.pages.values()
            if view.own(page)
        )

    def shadowed(self, page: Page) -> Page | None:
        """The shared page a user's page shadows (same key), if any."""
        if page.scope == GLOBAL:
            return None
        base = self.base or self
        return base.pages.get(page.key)

    def leak_target(self, link: Link) -> Page | None:
        """For a shared page's link that lands nowhere in the shared scope: the user page it
        would land on in that user's view (a scope leak), else None. Only the shared view
        reports leaks; in a user's view the link resolves."""
        return self._leaks.get(id(link))

    @cached_property
    def _leaks(self) -> dict[int, Page]:
        if self.base is not None or not self.users:
            return {}
        found: dict[int, Page] = {}
        for item in self.resolved_links:
            if not item.broken:
                continue
            for view in self.scope_views[1:]:
                landed = view.resolver.resolve(item.link, item.page.doc_path)
                if landed is not None and view.pages[landed.key].scope != GLOBAL:
                    found[id(item.link)] = view.pages[landed.key]
                    break
        return found

    @cached_property
    def renamed_from(self) -> dict[str, Page]:
        """Former doc paths of pages renamed in git history, and the page each leads to now;
        empty unless `redirects_from_git` is on (it asks git once)."""
        if not self.config.redirects_from_git:
            return {}
        by_path = {page.doc_path: page for page in self.pages.values()}
        found = renamed_pages(self.config.root, self.config.docs_dir, set(by_path))
        return {old: by_path[new] for old, new in found.items()}

    @cached_property
    def layout(self) -> SiteLayout:
        """The site's URLs; a home page (README.md, Home.md) may have moved. Cached: every
        rendered page asks for it."""
        doc_paths = (page.doc_path for page in self.all_pages)
        config = self.config
        return SiteLayout.for_pages(config.raw_prefix, config.use_directory_urls, doc_paths)

    def resolve(self, link: Link, page: Page) -> Resolution | None:
        """Where a link of this wiki lands, from the one resolution pass of the compile."""
        found = self._resolutions.get(id(link), _UNSEEN)
        if found is _UNSEEN:
            return self.resolver.resolve(link, page.doc_path)
        return found  # type: ignore[return-value]

    def attachment(self, link: Link, page: Page) -> Attachment | None:
        """The file that is not a page a link lands on (`![[diagram.png]]`), when it is no page."""
        if self.resolve(link, page) is not None:
            return None
        return self.resolver.attachment(link, page.doc_path)

    @cached_property
    def _resolutions(self) -> dict[int, Resolution | None]:
        return {id(item.link): item.resolution for item in self.resolved_links}

    @cached_property
    def resolved_links(self) -> tuple[ResolvedLink, ...]:
        """Every outgoing link of every page file with where it landed, resolved once per compile.

        Pages that lost a duplicate-key contest are included, so their links are checked too.
        """
        found: list[ResolvedLink] = []
        for page in self.all_pages:
            for link in page.outgoing:
                resolution = self.resolver.resolve(link, page.doc_path)
                attachment = None
                if resolution is None:
                    attachment = self.resolver.attachment(link, page.doc_path)
                found.append(ResolvedLink(page, link, resolution, attachment))
        return tuple(found)

    def is_canonical(self, page: Page) -> bool:
        """Whether this file owns its key (the first file by path on a duplicate)."""
        return self.pages.get(page.key) is page

    @cached_property
    def citation_states(self) -> tuple[CitationState, ...]:
        """Each citation against the lock; lock entries are per key, so canonical pages only."""
        return citation_states(self.pages.values(), self.sources, self.lock, self.config.raw_prefix)

    @cached_property
    def all_citation_states(self) -> tuple[CitationState, ...]:
        """`citation_states` of every scope: the shared pages', then each user's own pages'
        as that user sees them (what `groundwiki lock` records)."""
        return tuple(
            state
            for view in self.scope_views
            for state in view.citation_states
            if view.own(state.page)
        )

    def chunks_of(self, source: Source) -> tuple[Chunk, ...]:
        """A source's chunks, cut on first use: lint alone never needs them."""
        cached = self._source_chunks.get(source.path)
        if cached is None:
            cached = chunk_source(source, self.policy, self.chunk_cache)
            self._source_chunks[source.path] = cached
        return cached

    @cached_property
    def _states_by_page(self) -> dict[int, list[CitationState]]:
        by_page: dict[int, list[CitationState]] = {}
        for state in self.citation_states:
            by_page.setdefault(id(state.page), []).append(state)
        return by_page

    def states_of(self, page: Page) -> list[CitationState]:
        """The lock states of one page's citations."""
        return self._states_by_page.get(id(page), [])

    @cached_property
    def chunks(self) -> dict[str, Chunk]:
        """Every chunk of every source by ID (chunks them all)."""
        return {c.id: c for source in self.sources.values() for c in self.chunks_of(source)}

    def passages_of(self, page: Page) -> tuple[Passage, ...]:
        """A page's passages (its body cut like a raw source), cut on first use and kept
        across compiles for a page whose file did not change."""
        key = cache_key(page, self.policy)
        cached = self._page_passages.get(key)
        if cached is None and self.passage_cache is not None:
            cached = self.passage_cache.get(key)
        if cached is None:
            try:
                cached = page_passages(page, self.policy)
            except GroundwikiError:
                raise  # no tokenizer: nothing can be cut, which the error says how to fix
            except Exception:  # a bug cutting one page costs its passages, not the others'
                log.exception("cannot cut %s into passages", page.rel_path)
                cached = ()
            if self.passage_cache is not None:
                self.passage_cache[key] = cached
        self._page_passages[key] = cached
        return cached

    @cached_property
    def passages(self) -> dict[str, Passage]:
        """Every passage of every canonical page by ID (cuts them all)."""
        found = {p.id: p for page in self.pages.values() for p in self.passages_of(page)}
        self.prune_passages()
        return found

    def prune_passages(self) -> None:
        """Forget cached passages of page files as they were before (edited, renamed, deleted),
        so the cache kept across compiles does not grow with every edit. An edit adds an entry,
        so the cache is only scanned once it holds twice as many entries as there are pages (and
        a few): a scan costs about 10 ms at 2,000 pages, too much for every edit's batch."""
        cache = self.passage_cache
        if cache is None or len(cache) <= 2 * len(self.pages) + 64:
            return
        current = {cache_key(page, self.policy) for page in self.pages.values()}
        for stale in [key for key in cache if key not in current]:
            del cache[stale]

    @cached_property
    def pointers(self) -> dict[str, tuple[Pointer, ...]]:
        cap = self.config.max_pointers
        return {
            key: pointers_for(page.citations, self.sources, self.chunks_of, cap)
            for key, page in self.pages.items()
        }

    def lock_entries(
        self,
        *,
        accept_drift: bool = True,
        corrected: Mapping[tuple[str, str], Citation] | None = None,
    ) -> list[LockEntry]:
        """What `groundwiki lock` records: every citation of every page, and its pointers.

        A citation whose text cannot be read now (source gone or unreadable, lines past the end)
        keeps the record it had: the lock never forgets evidence a page still cites. So does a
        citation whose text moved, until its range is corrected, and, without `accept_drift`,
        one whose text changed. `corrected` maps (page key, lock name) of a moved citation to
        the citation at its new range (`lock --fix-moved` rewrites the page so): it is recorded
        there with the hash it was locked with, and the page's pointers follow it.
        """
        corrected = corrected or {}
        entries: list[LockEntry] = []
        for state in self.all_citation_states:
            key = state.page.uid
            fixed = corrected.get((key, state.name))
            record = state.record
            if fixed is not None and record is not None:
                name = f"{self.config.raw_prefix}/{fixed.spec}"
                entries.append(LockEntry(key, name, record.sha256, record.first_line))
            # Locking a moved citation's old range would record text the page never cited;
            # the writer moves the citation first (lint's hint says where).
            elif (
                state.current is not None
                and state.status != "moved"
                and (accept_drift or state.status != "drifted")
            ):
                entries.append(LockEntry(key, state.name, state.current, state.first_line))
            elif record is not None:
                entries.append(LockEntry(key, state.name, record.sha256, record.first_line))
        by_page: dict[str, list[Citation]] = {}
        for (key, _), citation in corrected.items():
            by_page.setdefault(key, []).append(citation)
        for view, page in self.owned_pages:
            pointers = view.pointers[page.key]
            key = page.uid
            if key in by_page:
                pointers = pointers_for(
                    _with_corrections(page, corrected),
                    self.sources,
                    self.chunks_of,
                    self.config.max_pointers,
                )
            for pointer in pointers:
                entries.append(
                    LockEntry(key, chunk_citation(pointer.chunk_id), pointer.content_hash)
                )
        return entries


def _with_corrections(page: Page, corrected: Mapping[tuple[str, str], Citation]) -> list[Citation]:
    """The page's citations with each corrected one at its new range, in the page's order."""
    by_place = {
        (c.at.line, c.at.column, c.raw): c for (key, _), c in corrected.items() if key == page.uid
    }
    return [by_place.get((c.at.line, c.at.column, c.raw), c) for c in page.citations]


def _user_view(base: Wiki, user: str) -> Wiki:
    own = base.user_pages.get(user, ())
    own_keys = {page.key for page in own}
    shown = [*own, *(page for page in base.all_pages if page.key not in own_keys)]
    pages: dict[str, Page] = {}
    for page in sorted(own, key=lambda p: p.rel_path):
        pages.setdefault(page.key, page)
    for page in base.pages.values():
        pages.setdefault(page.key, page)
    view = replace(
        base,
        pages=pages,
        all_pages=sorted(shown, key=lambda p: p.rel_path),
        user_pages={},
        user=user,
        base=base,
    )
    # One cut of each source and page per compile, whoever views it.
    object.__setattr__(view, "_source_chunks", base._source_chunks)
    object.__setattr__(view, "_page_passages", base._page_passages)
    return view


def discover_pages(
    config: Config, linked: set[Path] | None = None, others: list[str] | None = None
) -> list[Path]:
    """Every page file; `linked` receives those that are symlinks, `others` the paths of the
    other files (attachments)."""
    docs = config.docs_dir
    if not docs.is_dir():
        return []
    return walk(docs, suffix=".md", linked=linked, others=others)


def assign_keys(pages: list[Page], scoped: bool = False) -> list[Page]:
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
        replace(page, key=_path_key(page)) if (page.scope, page.key) in shared else page
        for page in pages
    ]


def _path_key(page: Page) -> str:
    below = page.doc_path.removeprefix(scope_root(page.doc_path, page.scope))
    return below.removesuffix(".md").lower()


@dataclass
class CompileCache:
    """Kept by a long-running process between compiles: only changed files are read again."""

    pages: StampedCache[Page] = field(default_factory=StampedCache)
    sources: StampedCache[Source] = field(default_factory=StampedCache)
    chunks: ChunkCache = field(default_factory=dict)
    lock: StampedCache[Lock] = field(default_factory=StampedCache)
    passages: PassageCache = field(default_factory=dict)
    # A page's rendered Markdown by the hash of everything it was made from (the site build's).
    renders: dict[str, Any] = field(default_factory=dict)


def compile_wiki(
    config: Config,
    *,
    policy: ChunkPolicy = DEFAULT_POLICY,
    cache: ChunkCache | None = None,
    progress: Progress | None = None,
    files: CompileCache | None = None,
    held: Collection[Path] = (),
) -> Wiki:
    """`held`: page files not read this time (the sidecar indexes large ones after the rest):
    each is the version `files` has, or left out until a compile that reads it."""
    guard = PathGuard(config.raw_dir)
    linked: set[Path] = set()
    others: list[str] = []
    paths = discover_pages(config, linked, others)
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
    read = iter(read_pages(inside, config, guard, page_progress, cache=page_cache, held=held))
    all_pages = [linked_out_page(p, config) if p in outside else next(read) for p in paths]
    all_pages = assign_keys(all_pages, scoped)
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
    sources = _read_sources(config, source_progress, files.sources if files else None)
    lock = _read_lock(config, files)
    passage_cache = files.passages if files is not None else None
    return Wiki(
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
    )


def _read_sources(
    config: Config,
    progress: Callable[[int, int], None] | None,
    cache: StampedCache[Source] | None,
) -> dict[str, Source]:
    """Every raw source; a bug while reading one makes that one a finding, not a failed compile.
    Only then is each file read again on its own, to find which one it was."""
    try:
        return read_sources(config, progress, cache)
    except Exception:
        found: dict[str, Source] = {}
        for path in discover_sources(config):
            try:
                source = read_source(path, config)
            except Exception as exc:  # the one that failed; the others are read as usual
                source = Source(
                    path.relative_to(config.raw_dir).as_posix(),
                    path,
                    path.suffix.lstrip(".") or "unknown",
                    None,
                    None,
                    problem=f"reading it failed: {internal_error(exc)}",
                    hint="this is a bug in groundwiki: please report it with this file attached",
                )
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
