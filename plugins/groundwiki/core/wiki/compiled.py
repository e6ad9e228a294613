"""The compiled wiki (`Wiki`): pages, raw sources, the lock, where every link lands, each
citation's state against the lock, chunks and passages. core/wiki/compiler.py makes it.

A `Wiki` is what one viewer sees: the compile gives the shared scope's, and `wiki.scopes`
(core/wiki/scope_views.py) every user's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, replace
from functools import cached_property
from typing import Any

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.evidence.citations import pointers_for
from groundwiki.core.evidence.drift import CitationState, citation_states
from groundwiki.core.evidence.lock import Lock, LockEntry, chunk_citation
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
from groundwiki.core.model.scopes import GLOBAL
from groundwiki.core.model.site_paths import SiteLayout
from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy
from groundwiki.core.sources.hygiene import chunk_measures, junk_kind, may_hold_junk
from groundwiki.core.sources.passages import PassageCache, cache_key, page_passages
from groundwiki.core.sources.raw_sources import ChunkCache, chunk_source
from groundwiki.core.sources.tokens import TokenizerUnavailable
from groundwiki.core.wiki.dependencies import (
    Dependencies,
    EmbedIndex,
    embedders,
    link_facts,
    same_facts,
    stale_pages,
    update_embedders,
)
from groundwiki.core.wiki.git_history import renamed_pages
from groundwiki.core.wiki.scope_views import Scopes

log = logging.getLogger("groundwiki")
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
    # A scoped wiki (core/model/scopes.py): this Wiki is what one viewer sees. The compile gives
    # the shared scope's view (`pages` and `all_pages` hold shared pages only) and every user's
    # page files, by user ID, for its `scopes`, which gives each user's view.
    user_pages: InitVar[Mapping[str, tuple[Page, ...]] | None] = None
    scoped: bool = False
    # Page files directly under user/, in no user's folder (doc paths): no one's, so never read,
    # indexed or published (scopes.py); lint's `misplaced-user-page` names each.
    refused: tuple[str, ...] = ()
    # Page files their writers keep out of the published wiki (`publish: false`, doc paths): no
    # pages, and the site leaves their files out.
    unpublished: tuple[str, ...] = ()
    user: str | None = None  # whose view this is; None: the shared scope's
    base: Wiki | None = None  # the shared scope's view, for a user's view
    # The last compile of a long-running process (core/wiki/dependencies.py): its per-page
    # results are kept for every page file a change did not make stale. The compiler cuts the
    # chain, so a compile holds at most the one before it.
    previous: Wiki | None = field(default=None, compare=False, repr=False)
    # What consumers derived from this compile, for the next one to keep per page (lint's
    # per-page findings): by consumer, each its own.
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # The page files that are new objects since `previous` (before, after), when the compiler
    # knows them without comparing every file (an editor's keystroke): `changed_pages`.
    changed: InitVar[tuple[tuple[Page, Page], ...] | None] = None
    resolver: Resolver = field(init=False)
    # Every view of the compile (scope_views.py): one for the shared view and all users' views.
    scopes: Scopes[Wiki] = field(init=False, repr=False, compare=False)
    _source_chunks: dict[str, tuple[Chunk, ...]] = field(
        init=False, default_factory=dict, repr=False
    )
    _page_passages: PassageCache = field(init=False, default_factory=dict, repr=False)
    _resolved_in: dict[str, dict[int, Resolution | None]] = field(
        init=False, default_factory=dict, repr=False, compare=False
    )

    def __post_init__(
        self,
        user_pages: Mapping[str, tuple[Page, ...]] | None,
        changed: tuple[tuple[Page, Page], ...] | None,
    ) -> None:
        if changed is not None and self.previous is not None:
            self.__dict__["changed_pages"] = changed
        if self.base is None:
            resolver: Resolver = (
                self.previous.resolver
                if self.previous is not None and _same_names(self.previous, self)
                else Resolver(
                    self.pages.values(), self.attachments, self.sources, scoped=self.scoped
                )
            )
            scopes = Scopes(self, user_pages or {}, _user_view)
        else:  # a user's view: their own pages and files first, then the shared ones
            own = [page for page in self.all_pages if page.scope != GLOBAL]
            resolver = ScopedResolver(own, self.base.resolver, self.user or "")
            scopes = self.base.scopes
        object.__setattr__(self, "resolver", resolver)
        object.__setattr__(self, "scopes", scopes)

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
        rendered page asks for it. Taken over from the last compile when no page file was added,
        deleted or renamed (an edit's): the first answer after an edit need not work out every
        page's URL again."""
        previous = self.previous
        if (
            previous is not None
            and "layout" in previous.__dict__
            and previous.doc_paths == self.doc_paths
        ):
            return previous.layout
        config = self.config
        return SiteLayout.for_pages(config.raw_prefix, config.use_directory_urls, self.doc_paths)

    @cached_property
    def doc_paths(self) -> frozenset[str]:
        """The doc path of every page file, of every scope."""
        return frozenset(page.doc_path for page in self.all_pages)

    def resolve(self, link: Link, page: Page) -> Resolution | None:
        """Where a link of this wiki lands, from the one resolution pass of the compile."""
        found = self._resolutions_in(page.doc_path).get(id(link), _UNSEEN)
        if found is _UNSEEN:  # a link of another page (the text of an embed), or of none
            found = self._resolutions.get(id(link), _UNSEEN)
        if found is _UNSEEN:
            return self.resolver.resolve(link, page.doc_path)
        return found  # type: ignore[return-value]

    def _resolutions_in(self, doc: str) -> dict[int, Resolution | None]:
        """One page file's links' resolutions: an editor's request after a keystroke asks of
        one page, and indexing every link of the wiki for it took longer than the request."""
        found = self._resolved_in.get(doc)
        if found is None:
            found = {id(item.link): item.resolution for item in self.links_by_page.get(doc, ())}
            self._resolved_in[doc] = found
        return found

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
        by_page = self.links_by_page
        return tuple(item for page in self.all_pages for item in by_page[page.doc_path])

    @cached_property
    def links_by_page(self) -> dict[str, tuple[ResolvedLink, ...]]:
        """Each page file's resolved links, by doc path: a page the last compile resolved and
        no change made stale keeps its links from then."""
        carried = self._carried("links_by_page")
        if carried is not None:
            found = carried[0]
            by_doc = self.pages_by_doc
            for doc in carried[1]:
                found[doc] = self._links_of(by_doc[doc])
            gone: set[str] = set()
        else:
            kept = self._kept("links_by_page")
            found = {}
            for page in self.all_pages:
                doc = page.doc_path
                if kept is not None and doc in kept:
                    found[doc] = kept[doc]
                else:
                    found[doc] = self._links_of(page)
        previous = self.previous
        if (
            (carried is not None or kept is not None)
            and previous is not None
            and "embedders" in previous.__dict__
        ):
            # Taken over from the last compile, for the pages resolved again or gone.
            index = previous.__dict__.pop("embedders")
            if carried is None:
                gone = {page.doc_path for page in previous.all_pages} - found.keys()
            self.__dict__["links_by_page"] = found  # embed_targets reads it
            update_embedders(index, previous, self, (self.stale or frozenset()) | gone)
            self.__dict__["embedders"] = index
        return found

    def _links_of(self, page: Page) -> tuple[ResolvedLink, ...]:
        doc = page.doc_path
        items: list[ResolvedLink] = []
        for link in page.outgoing:
            resolution = self.resolver.resolve(link, doc)
            attachment = None
            if resolution is None:
                attachment = self.resolver.attachment(link, doc)
            items.append(ResolvedLink(page, link, resolution, attachment))
        return tuple(items)

    @cached_property
    def changed_pages(self) -> tuple[tuple[Page, Page], ...] | None:
        """Each page file that is a new object since the last compile (before, after), when that
        compile had the same files in the same order (an editor's keystroke); None otherwise.
        With it, what is kept per page is the last compile's map with a few entries made again:
        a pass over 10,000 page objects costs more than the rest of a keystroke's lint."""
        previous = self.previous
        if previous is None or self.base is not None or self.scoped or previous.scoped:
            return None
        before, after = previous.all_pages, self.all_pages
        if len(before) != len(after):
            return None
        found: list[tuple[Page, Page]] = []
        for was, now in zip(before, after, strict=True):
            if was is not now:
                if was.doc_path != now.doc_path:
                    return None
                found.append((was, now))
        return tuple(found)

    @cached_property
    def pages_by_doc(self) -> dict[str, Page]:
        """Every page file by doc path."""
        changed = self.changed_pages
        previous = self.previous
        if changed is not None and previous is not None and "pages_by_doc" in previous.__dict__:
            found = dict(previous.__dict__["pages_by_doc"])
            for _, page in changed:
                found[page.doc_path] = page
            return found
        return {page.doc_path: page for page in self.all_pages}

    def _carried(self, name: str) -> tuple[dict[str, Any], list[str]] | None:
        """The last compile's per-page `name` (a cached property it computed, by doc path),
        copied, and the stale doc paths it holds, to make again; None unless the files are the
        same (`changed_pages`), so the copy has every file's entry, in order."""
        previous = self.previous
        if previous is None or name not in previous.__dict__ or self.changed_pages is None:
            return None
        stale = self.stale
        if stale is None:
            return None
        found = dict(previous.__dict__[name])
        return found, sorted(doc for doc in stale if doc in found)

    @cached_property
    def stale(self) -> frozenset[str] | None:
        """Doc paths of the page files whose per-page results the last compile cannot give
        (changed, or depending on a change); None when every page's must be computed (no last
        compile, or one with other settings)."""
        previous = self.previous
        if (
            previous is None
            or self.scoped
            or previous.scoped
            or self.base is not None
            or previous.config != self.config
            or previous.policy != self.policy
        ):
            return None
        return frozenset(stale_pages(previous, self))

    def _kept(self, name: str) -> dict[str, Any] | None:
        """The last compile's per-page `name` (a cached property it computed), without the
        entries of stale pages; None when there is nothing to keep."""
        previous = self.previous
        if previous is None or name not in previous.__dict__:
            return None
        stale = self.stale
        if stale is None:
            return None
        return {doc: value for doc, value in previous.__dict__[name].items() if doc not in stale}

    def _kept_for_sources(self, name: str) -> Any:
        """The last compile's `name` (a cached property of the raw sources alone), when it read
        no raw source since (the very same dict) under the same options: an edit of a page
        does not look at every source again."""
        previous = self.previous
        if (
            previous is None
            or name not in previous.__dict__
            or previous.sources is not self.sources
            or previous.config.junk_rules != self.config.junk_rules
            or previous.config.dedupe_sources != self.config.dedupe_sources
            or previous.policy != self.policy
        ):
            return None
        return previous.__dict__[name]

    def kept_for(self, consumer: str) -> tuple[Any, frozenset[str]] | None:
        """What `consumer` derived from the last compile (`derived`) and the stale pages, when
        it may keep that for the pages not stale."""
        previous = self.previous
        if previous is None or consumer not in previous.derived:
            return None
        stale = self.stale
        return None if stale is None else (previous.derived[consumer], stale)

    @cached_property
    def dependencies(self) -> Dependencies:
        """Taken over from the last compile and updated for the files that changed."""
        previous = self.previous
        if previous is None or "dependencies" not in previous.__dict__ or self.base is not None:
            return Dependencies.of(self.all_pages)
        found: Dependencies = previous.__dict__.pop("dependencies")
        found.update(previous.all_pages, self.all_pages, self.changed_pages)
        return found

    @cached_property
    def embedders(self) -> EmbedIndex:
        return embedders(self)

    def is_canonical(self, page: Page) -> bool:
        """Whether this file owns its key (the first file by path on a duplicate)."""
        return self.pages.get(page.key) is page

    @cached_property
    def citation_states(self) -> tuple[CitationState, ...]:
        """Each citation against the lock; lock entries are per key, so canonical pages only."""
        by_page = self.states_by_doc
        return tuple(state for page in self.pages.values() for state in by_page[page.doc_path])

    @cached_property
    def states_by_doc(self) -> dict[str, tuple[CitationState, ...]]:
        """Each canonical page's citation states by doc path; kept from the last compile for
        a page no change made stale."""
        prefix = self.config.raw_prefix
        carried = self._carried("states_by_doc")
        if carried is not None:
            found, stale = carried
            by_doc = self.pages_by_doc
            for doc in stale:
                found[doc] = citation_states((by_doc[doc],), self.sources, self.lock, prefix)
            return found
        kept = self._kept("states_by_doc")
        found = {}
        for page in self.pages.values():
            doc = page.doc_path
            if kept is not None and doc in kept:
                found[doc] = kept[doc]
            else:
                found[doc] = citation_states((page,), self.sources, self.lock, prefix)
        return found

    @cached_property
    def all_citation_states(self) -> tuple[CitationState, ...]:
        """`citation_states` of every scope: the shared pages', then each user's own pages'
        as that user sees them (what `groundwiki lock` records)."""
        return tuple(state for view, page in self.scopes.owned for state in view.states_of(page))

    def chunks_of(self, source: Source) -> tuple[Chunk, ...]:
        """A source's chunks, cut on first use: lint alone never needs them."""
        cached = self._source_chunks.get(source.path)
        if cached is None:
            cached = chunk_source(source, self.policy, self.chunk_cache)
            self._source_chunks[source.path] = cached
        return cached

    def states_of(self, page: Page) -> list[CitationState]:
        """The lock states of one page's citations (a canonical page's: lock entries are per
        key); from `states_by_doc`, which a compile kept across changes mostly takes over."""
        if self.pages.get(page.key) is not page:
            return []
        return list(self.states_by_doc.get(page.doc_path, ()))

    def settle(self) -> None:
        """Work out now the per-page results a next compile takes over (`links_by_page`,
        `dependencies`, `embedders`, `states_by_doc`, `pointers_by_doc`, `layout`): a long-running
        process that answers from a compile (the sidecar) calls this after each one, so that
        neither its first answer nor the next compile has to make them for the whole wiki."""
        for name in ("links_by_page", "dependencies", "embedders", "states_by_doc", "layout"):
            getattr(self, name)
        self.pointers_by_doc  # noqa: B018 (a cached property, made for its side effect)

    @cached_property
    def chunks(self) -> dict[str, Chunk]:
        """Every chunk of every source by ID (chunks them all)."""
        return {c.id: c for source in self.sources.values() for c in self.chunks_of(source)}

    @cached_property
    def copies(self) -> dict[str, str]:
        """Source path -> the first source (by path) with the same text, for each source that
        is a copy of another (`dedupe_sources`): indexed as that one, citable as itself."""
        kept = self._kept_for_sources("copies")
        if kept is not None:
            return kept
        found: dict[str, str] = {}
        if not self.config.dedupe_sources:
            return found
        first: dict[str, str] = {}
        for path, source in self.sources.items():
            # `isspace` stops at the first visible character; `strip` would copy every text.
            text = source.text
            if not text or text.isspace() or source.content_hash is None:
                continue
            original = first.setdefault(source.content_hash, path)
            if original != path:
                found[path] = original
        return found

    @cached_property
    def copies_of(self) -> dict[str, tuple[str, ...]]:
        """Source path -> the sources that are copies of it (`copies` turned round)."""
        found: dict[str, list[str]] = {}
        for copy, original in self.copies.items():
            found.setdefault(original, []).append(copy)
        return {path: tuple(copies) for path, copies in found.items()}

    @cached_property
    def junk_chunks(self) -> dict[str, tuple[tuple[Chunk, str], ...]]:
        """Source path -> its chunks that are junk, with their kind (`JUNK_KINDS`): cut and
        citable, but neither embedded nor ranked (the `skip_junk_chunks` options). A copy of
        another source is left out: none of its chunks is indexed anyway."""
        kept = self._kept_for_sources("junk_chunks")
        if kept is not None:
            return kept
        rules = self.config.junk_rules
        found: dict[str, tuple[tuple[Chunk, str], ...]] = {}
        if not rules.enabled:
            return found
        copies = self.copies
        for source in self.sources.values():
            if source.path in copies or source.text is None:
                continue
            if not may_hold_junk(source.text, rules, source.content_hash or ""):
                continue  # never cut just to look: lint must not need the tokenizer
            try:
                cut = self.chunks_of(source)
            except TokenizerUnavailable:
                # Lint in an environment without the tokenizer (a pre-commit hook's): no
                # chunks to judge; the sidecar, which cuts every chunk, always has it.
                return found
            junk = []
            for chunk in cut:
                kind = junk_kind(chunk_measures(chunk), rules)
                if kind is not None:
                    junk.append((chunk, kind))
            if junk:
                found[source.path] = tuple(junk)
        return found

    @cached_property
    def indexed_chunks(self) -> dict[str, Chunk]:
        """`chunks` but the junk ones and those of copies: what the sidecar embeds and ranks."""
        junk = {chunk.id for cut in self.junk_chunks.values() for chunk, _ in cut}
        copies = self.copies
        if not junk and not copies:
            return self.chunks
        return {
            i: chunk
            for i, chunk in self.chunks.items()
            if i not in junk and chunk.source not in copies
        }

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

    def pointers_of(self, page: Page) -> tuple[Pointer, ...]:
        """`pointers[page.key]`, without making `pointers` for every page (an answer after an
        edit asks for a few)."""
        canonical = self.pages.get(page.key)
        return self.pointers_by_doc[canonical.doc_path] if canonical is not None else ()

    @cached_property
    def pointers(self) -> dict[str, tuple[Pointer, ...]]:
        """Each canonical page's pointers (its citations' chunks) by key."""
        by_doc = self.pointers_by_doc
        return {key: by_doc[page.doc_path] for key, page in self.pages.items()}

    @cached_property
    def pointers_by_doc(self) -> dict[str, tuple[Pointer, ...]]:
        """`pointers` by doc path; kept from the last compile for a page no change made stale
        (a changed source stales the pages citing it)."""
        cap = self.config.max_pointers
        carried = self._carried("pointers_by_doc")
        if carried is not None:
            found, stale = carried
            by_doc = self.pages_by_doc
            for doc in stale:
                found[doc] = pointers_for(by_doc[doc].citations, self.sources, self.chunks_of, cap)
            return found
        kept = self._kept("pointers_by_doc")
        found = {}
        for page in self.pages.values():
            doc = page.doc_path
            if kept is not None and doc in kept:
                found[doc] = kept[doc]
            else:
                found[doc] = pointers_for(page.citations, self.sources, self.chunks_of, cap)
        return found

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
        for view, page in self.scopes.owned:
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


def _same_names(old: Wiki, new: Wiki) -> bool:
    """Whether `new`'s names are `old`'s, so its resolver may be `old`'s: the same files, and
    every page the same or with the same link facts (core/wiki/dependencies.py)."""
    if not (
        old.base is None
        and old.scoped == new.scoped
        and old.attachments == new.attachments
        and old.sources.keys() == new.sources.keys()
    ):
        return False
    known = new.__dict__.get("changed_pages")
    if known is not None:  # every other page file is the object `old` has
        return old.pages.keys() == new.pages.keys() and all(
            link_facts(was) == link_facts(now) for was, now in known
        )
    return same_facts(old.pages, new.pages, link_facts)


def _with_corrections(page: Page, corrected: Mapping[tuple[str, str], Citation]) -> list[Citation]:
    """The page's citations with each corrected one at its new range, in the page's order."""
    by_place = {
        (c.at.line, c.at.column, c.raw): c for (key, _), c in corrected.items() if key == page.uid
    }
    return [by_place.get((c.at.line, c.at.column, c.raw), c) for c in page.citations]


def _user_view(base: Wiki, user: str) -> Wiki:
    """What `user` sees of the shared view `base` (`Scopes.view` keeps it)."""
    own = base.scopes.pages_of(user)
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
        user=user,
        base=base,
        previous=None,
        derived={},
    )
    # One cut of each source and page per compile, whoever views it.
    object.__setattr__(view, "_source_chunks", base._source_chunks)
    object.__setattr__(view, "_page_passages", base._page_passages)
    return view
