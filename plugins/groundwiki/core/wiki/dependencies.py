"""What a compile's per-page results depend on, and which pages a change makes stale.

A page's resolved links, citation states and per-page lint findings depend on the page itself
and on a few things outside it: the pages, aliases, titles and files its links can land on (by
name), the raw sources it cites, its records in the lock, whether it owns its key, and, through
its embeds, what the pages it transcludes hold. `Dependencies` indexes those for one compile;
`stale_pages` compares two compiles and returns exactly the page files whose results may differ,
so that the next compile (core/wiki/compiled.py) recomputes those and keeps the rest.

Names are compared by their last path segment, normalised as the resolver compares them
(links/resolver.py): a link can only land on a page, alias, title or file whose name ends with
that segment, so a change that touches no such name cannot move the link. Over-approximating is
safe (a page recomputed needlessly gives the same result); missing a dependency is a bug, which
the property test (tests/core/test_incremental_compile.py) compares against full compiles.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from groundwiki.core.evidence.lock import Lock
from groundwiki.core.links.resolver import PAGE_SUFFIX, normalise
from groundwiki.core.model.records import Link, Page, Resolution, Source
from groundwiki.core.model.scopes import scoped_name

# A link whose name has no last segment to index (`[x](./)`): it may land on anything, so any
# page added or removed makes it stale.
ANY_NAME = "\0any"


@lru_cache(maxsize=65536)  # a wiki names the same few thousand pages over and over
def name_token(name: str) -> str:
    """The last segment of a name, as links and pages are matched on it."""
    text = normalise(name.strip().lstrip("/"))
    if text.endswith(PAGE_SUFFIX):
        text = text[: -len(PAGE_SUFFIX)]
    text = text.rstrip("/")
    last = posixpath.basename(text) if text else ""
    return last if last not in ("", ".", "..") else ANY_NAME


def link_token(link: Link) -> str | None:
    """The name a link looks up; None for a link to its own page's heading (`[[#H]]`)."""
    if not link.target:
        return None if link.anchor else ANY_NAME
    return name_token(link.target)


def page_names(page: Page) -> set[str]:
    """Every name a link can reach the page by: its file name, key, aliases and title."""
    names = {name_token(posixpath.basename(page.doc_path)), name_token(page.key)}
    names.update(name_token(alias) for alias in page.aliases)
    names.add(name_token(page.title))
    return names


def link_facts(page: Page) -> tuple[object, ...]:
    """What a link to the page reads of it (where it lands, whether its anchor exists, whether
    the page is archived, which aliases it claims): an edit that leaves these alone changes no
    other page's links. (What an embed shows of it follows the embedders, `_with_embedders`.)"""
    return (
        page.key,
        page.doc_path,
        page.title,
        page.aliases,
        page.headings,
        page.blocks,
        page.archived_since,
        page.scope,
    )


def same_facts(
    before: Mapping[str, Page], after: Mapping[str, Page], facts: Callable[[Page], object]
) -> bool:
    """Whether two compiles' pages, by the same names, are each the same object (a file not
    read again) or agree on `facts`."""
    if before.keys() != after.keys():
        return False
    return all(
        before[name] is page or facts(before[name]) == facts(page) for name, page in after.items()
    )


def file_names(path: str) -> set[str]:
    """The names an attachment or raw source is found by (with and without `.md`, which a
    page name drops and a file name keeps)."""
    base = normalise(posixpath.basename(path))
    return {name_token(base), base}


class _Resolved(Protocol):
    @property
    def page(self) -> Page: ...
    @property
    def link(self) -> Link: ...
    @property
    def resolution(self) -> Resolution | None: ...
    @property
    def broken(self) -> bool: ...


class Compile(Protocol):
    """What this module reads of a compile: core/wiki/compiled.py's `Wiki` (a Protocol, so that
    the `Wiki` can use this module without the two importing each other)."""

    @property
    def pages(self) -> Mapping[str, Page]: ...
    @property
    def all_pages(self) -> Sequence[Page]: ...
    @property
    def sources(self) -> Mapping[str, Source]: ...
    @property
    def attachments(self) -> tuple[str, ...]: ...
    @property
    def lock(self) -> Lock: ...
    @property
    def resolved_links(self) -> Sequence[_Resolved]: ...
    @property
    def links_by_page(self) -> Mapping[str, Sequence[_Resolved]]: ...
    @property
    def dependencies(self) -> Dependencies: ...
    @property
    def embedders(self) -> EmbedIndex: ...
    @property
    def changed_pages(self) -> tuple[tuple[Page, Page], ...] | None: ...


@dataclass
class Dependencies:
    """One compile's reverse index, read from its page files alone (no link resolved): which
    page files (by doc path) look up a name, or cite a source (by path and by file name). The
    next compile takes it over and updates it for the files that changed (`update`)."""

    by_name: dict[str, set[str]] = field(default_factory=dict)
    by_source: dict[str, set[str]] = field(default_factory=dict)
    by_source_name: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, pages: Iterable[Page]) -> Dependencies:
        found = cls()
        for page in pages:
            found._change(page, add=True)
        return found

    def update(
        self,
        before: Sequence[Page],
        after: Sequence[Page],
        known: Sequence[tuple[Page, Page]] | None = None,
    ) -> None:
        """From the page files `before` to `after` (each compile's `all_pages`); `known`: the
        files that changed, when the files are the same (`Compile.changed_pages`)."""
        changes = changed_files(before, after) if known is None else _as_changes(known)
        for _, was, now in changes:
            if was is not None:
                self._change(was, add=False)
            if now is not None:
                self._change(now, add=True)

    def _change(self, page: Page, add: bool) -> None:
        doc = page.doc_path
        entries: list[tuple[dict[str, set[str]], str]] = []
        for link in page.outgoing:
            token = link_token(link)
            if token is not None:
                entries.append((self.by_name, token))
        for citation in page.citations:
            entries.append((self.by_source, citation.source))
            entries.append((self.by_source_name, posixpath.basename(citation.source)))
        for index, name in entries:
            if add:
                index.setdefault(name, set()).add(doc)
            elif name in index:
                index[name].discard(doc)
                if not index[name]:
                    del index[name]

    def naming(self, names: Iterable[str]) -> Iterator[str]:
        for name in names:
            yield from self.by_name.get(name, ())


EmbedIndex = dict[str, set[str]]  # doc path of an embedded page -> doc paths embedding it


def embed_targets(wiki: Compile, doc: str) -> set[str]:
    """Doc paths of the pages one page file embeds."""
    found: set[str] = set()
    for item in wiki.links_by_page.get(doc, ()):
        if item.link.embed and item.resolution is not None:
            target = wiki.pages.get(item.resolution.key)
            if target is not None:
                found.add(target.doc_path)
    return found


def embedders(wiki: Compile) -> EmbedIndex:
    found: EmbedIndex = {}
    for page in wiki.all_pages:
        for target in embed_targets(wiki, page.doc_path):
            found.setdefault(target, set()).add(page.doc_path)
    return found


def update_embedders(index: EmbedIndex, old: Compile, new: Compile, docs: Iterable[str]) -> None:
    """`index` (old's) made new's, for the page files `docs` whose links were resolved again
    (or are gone): every other page's embeds land where they did."""
    for doc in docs:
        for target in embed_targets(old, doc):
            if target in index:
                index[target].discard(doc)
                if not index[target]:
                    del index[target]
        for target in embed_targets(new, doc):
            index.setdefault(target, set()).add(doc)


def changed_files(
    before: Sequence[Page], after: Sequence[Page]
) -> list[tuple[str, Page | None, Page | None]]:
    """The page files (doc path, before, after) that are not the same object in both lists
    (None: not there). A keystroke changes one file of thousands, in lists of the same files in
    the same order: those are compared in step, without an index of either."""
    if len(before) == len(after):
        found: list[tuple[str, Page | None, Page | None]] = []
        for was, now in zip(before, after, strict=True):
            if was is now:
                continue
            if was.doc_path != now.doc_path:
                break  # the files differ: compared by doc path below
            found.append((now.doc_path, was, now))
        else:
            return found
    by_doc = {page.doc_path: page for page in before}
    now_by_doc = {page.doc_path: page for page in after}
    return [
        (doc, by_doc.get(doc), now_by_doc.get(doc))
        for doc in sorted(by_doc.keys() | now_by_doc.keys())
        if by_doc.get(doc) is not now_by_doc.get(doc)
    ]


def _as_changes(
    known: Sequence[tuple[Page, Page]],
) -> list[tuple[str, Page | None, Page | None]]:
    return [(now.doc_path, was, now) for was, now in known]


def stale_pages(old: Compile, new: Compile) -> set[str]:
    """Doc paths of the page files of `new` whose links, citation states or per-page findings
    may differ from `old`'s: every file changed, and every file that depends on a change."""
    # The new compile's index only: a page whose lookups changed is stale as changed, and
    # every other page looks up what it did before.
    deps = new.dependencies
    stale: set[str] = set()
    names: set[str] = set()
    pages_changed = False
    known = new.changed_pages
    changed = changed_files(old.all_pages, new.all_pages) if known is None else _as_changes(known)
    for doc, was, now in changed:
        stale.add(doc)  # a new object, even of equal value: its results must hold it
        if was is not None and now is not None and link_facts(was) == link_facts(now):
            continue
        pages_changed = True
        for page in (was, now):
            if page is not None:
                names |= page_names(page)
    # Which file owns a key (the first by path) decides its citation states and its graph.
    # The owner is the first of the files with that key, so only a key that a changed file
    # had or has can change hands.
    keys = {page.key for _, was, now in changed for page in (was, now) if page is not None}
    for key in keys:
        was, now = old.pages.get(key), new.pages.get(key)
        if was is None or now is None or was.doc_path != now.doc_path:
            for page in (was, now):
                if page is not None:
                    stale.add(page.doc_path)
    if pages_changed:
        names.add(ANY_NAME)
    # Key views compare in C, without a set made of every page's key or source's path.
    sources_changed = (
        _changed_sources(old.sources, new.sources) if old.sources is not new.sources else set()
    )
    for path in sources_changed:
        names |= file_names(path)
        stale.update(deps.by_source.get(path, ()))
    if old.sources.keys() != new.sources.keys():
        # A missing source's hint names the sources with its file name.
        for path in set(old.sources) ^ set(new.sources):
            name = posixpath.basename(path)
            stale.update(deps.by_source_name.get(name, ()))
    if old.attachments != new.attachments:
        for path in set(old.attachments) ^ set(new.attachments):
            names |= file_names(path)
    stale.update(deps.naming(names))
    if old.pages.keys() != new.pages.keys():
        # A broken link's hint suggests keys close to it, from every key.
        stale.update(item.page.doc_path for item in old.resolved_links if item.broken)
    stale |= _lock_changed(old, new)
    # A page shows the pages it embeds, and theirs: a stale page stales its embedders. The
    # old compile's embeds suffice: a page that embeds another only now changed its text or
    # where its embed lands, so it is stale already.
    # Every path here is a file of one compile or the other: those of the old alone are gone.
    gone = {doc for doc, _, now in changed if now is None}
    return _with_embedders(stale, old.embedders) - gone


def _changed_sources(old: Mapping[str, Source], new: Mapping[str, Source]) -> set[str]:
    changed: set[str] = set()
    for path in old.keys() | new.keys():
        was, now = old.get(path), new.get(path)
        if was is not now and was != now:
            changed.add(path)
    return changed


def _lock_changed(old: Compile, new: Compile) -> set[str]:
    """Page files whose lock records (under their key or an alias) differ."""
    if old.lock is new.lock:
        return set()
    before, after = old.lock.records, new.lock.records
    keys = {
        page
        for (page, citation) in before.keys() | after.keys()
        if before.get((page, citation)) != after.get((page, citation))
    }
    if not keys:
        return set()
    return {
        page.doc_path
        for page in new.all_pages
        if page.uid in keys or any(scoped_name(page.scope, a.lower()) in keys for a in page.aliases)
    }


def _with_embedders(stale: set[str], embedded_by: Mapping[str, set[str]]) -> set[str]:
    found = set(stale)
    todo = list(stale)
    while todo:
        for embedder in embedded_by.get(todo.pop(), ()):
            if embedder not in found:
                found.add(embedder)
                todo.append(embedder)
    return found
