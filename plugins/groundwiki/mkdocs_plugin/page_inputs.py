"""What each page's HTML is made from, as one hash per page, for a dirty rebuild to compare
with the last build's (incremental.py).

Hashing every page's render inputs again took most of a second per rebuild at 10,000 pages,
though an edit reaches a handful of them. Under a server each wiki page's hash is kept with
what it was made from, and is used again while the compile says the page is not stale
(core/wiki/dependencies.py), no page it reads or lists among its backlinks is another object
than then (a page file that changed is a new object), and its backlinks and home links are the
same: then `RenderInputs.of` would give the same hash, read from the same values.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mkdocs.structure.files import File

from groundwiki.core.model.records import Page
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.render.inputs import InputMemo, RenderInputs
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.mkdocs_plugin.compiled_site import CompiledSite
from groundwiki.mkdocs_plugin.incremental import text_hash
from groundwiki.mkdocs_plugin.navigation import title_lines


@dataclass
class _Kept:
    page: Page
    backlinks: tuple[str, ...]
    home: str
    # Keys of the pages its hash read (linked, embedded, listed); None when not known (a page
    # rendered in a user's view, whose reads no memo keeps): hashed again every build.
    reads: frozenset[str] | None
    inputs: str
    title: str


@dataclass
class PageInputs:
    """The last build's hashes, kept across a server's builds."""

    wiki: Wiki | None = None  # the compile the wiki pages' entries were made from
    pages: dict[str, _Kept] = field(default_factory=dict)  # src_uri -> a wiki page's
    generated: dict[str, tuple[Rendered, str, str]] = field(default_factory=dict)

    def of(
        self,
        docs: Sequence[File],
        site: CompiledSite,
        generated: Mapping[str, Rendered],
        unpublished: set[str],
        home_links: Mapping[str, str],
        inputs_of: Callable[[Wiki, Page], RenderInputs],
        memo: InputMemo,
    ) -> tuple[dict[str, str], dict[str, str]]:
        """What each page of `docs` is made from, and what its title in the navigation is made
        from, by src_uri: a generated page's text and slots, a notice's text, another file's
        path and time, a wiki page's render inputs (`inputs_of` the view it is rendered in;
        `memo` the shared view's memo) and the links a home page ends with."""
        wiki = site.wiki
        changed = self._changed_keys(wiki)
        kept = self.pages if changed is not None else {}
        stale = wiki.stale or frozenset()
        inputs: dict[str, str] = {}
        titles: dict[str, str] = {}
        pages: dict[str, _Kept] = {}
        made: dict[str, tuple[Rendered, str, str]] = {}
        for file in docs:
            src_uri = file.src_uri
            ours = site.pages_by_doc.get(src_uri)
            if src_uri in generated:
                made[src_uri] = self._generated(src_uri, generated[src_uri])
                inputs[src_uri], titles[src_uri] = made[src_uri][1:]
            elif src_uri in unpublished or ours is None:
                content = file.content_string if src_uri in unpublished else ""
                inputs[src_uri] = text_hash(
                    "notice" if ours else "other", content, str(file.abs_src_path)
                )
                if ours is None and file.abs_src_path:
                    inputs[src_uri] += str(os.stat(file.abs_src_path).st_mtime_ns)
                titles[src_uri] = inputs[src_uri]
            else:
                home = home_links.get(src_uri, "")
                backlinks = site.backlinks_of(ours)
                listed = backlinks.get(ours.key, ())
                before = kept.get(src_uri)
                if (
                    before is None
                    or changed is None
                    or before.page is not ours
                    or src_uri in stale
                    or before.backlinks != listed
                    or before.home != home
                    or before.reads is None
                    or not changed.isdisjoint(before.reads)
                ):
                    before = self._hashed(site, ours, backlinks, home, inputs_of, memo)
                pages[src_uri] = before
                inputs[src_uri], titles[src_uri] = before.inputs, before.title
        self.wiki, self.pages, self.generated = wiki, pages, made
        return inputs, titles

    @staticmethod
    def _hashed(
        site: CompiledSite,
        ours: Page,
        backlinks: Mapping[str, tuple[str, ...]],
        home: str,
        inputs_of: Callable[[Wiki, Page], RenderInputs],
        memo: InputMemo,
    ) -> _Kept:
        """The page's hash, with what it read."""
        view = inputs_of(site.view_of(ours), ours)
        hashed = view.of(ours, backlinks, home)
        listed = backlinks.get(ours.key, ())
        own = memo.own.get(ours.doc_path) if view.memo is memo else None
        reads = None
        if own is not None and own[0] is ours:
            reads = frozenset({*listed, *(key for key, _ in own[1])})
        return _Kept(ours, listed, home, reads, hashed, text_hash(ours.title))

    def _changed_keys(self, wiki: Wiki) -> set[str] | None:
        """The keys whose page is another object than in the last build's compile (or gone);
        None when the entries may not be used (no last build, or a compile that does not
        follow it, or one that cannot tell its stale pages)."""
        last = self.wiki
        if last is None or wiki.previous is not last or wiki.stale is None or wiki.scoped:
            return None
        before = last.pages
        changed = {key for key, page in wiki.pages.items() if before.get(key) is not page}
        changed.update(before.keys() - wiki.pages.keys())
        return changed

    def _generated(self, src_uri: str, page: Rendered) -> tuple[Rendered, str, str]:
        before = self.generated.get(src_uri)
        if before is not None and before[0] is page:  # the A–Z and tags pages, kept (Listings)
            return before
        inputs = text_hash(
            page.markdown,
            repr(sorted(page.slots.items())),
            repr(sorted(page.late_slots.items())),
        )
        return page, inputs, text_hash(*title_lines(page.markdown))
