"""What a page's rendered Markdown depends on, as one hash: equal hashes, equal renders.

A long-running site build (`mkdocs serve`) re-renders a page only when this changes. Rendering
`render_page` reads, besides the page itself: where each of its links lands and the face of that
page (key, URL, title, summary, headings and block ids, whether it is published), the whole text
of each page it embeds (and what those embed, as deep as embeds are shown), the attachments and
raw sources it links and cites with their drift states, the pages linking to it with their faces,
and the shared page a user's page shadows. A page's body does not reach its neighbours' HTML, so
a sentence edited changes the page itself and, through its summary, only the pages listing it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from groundwiki.core.model.records import Page
from groundwiki.core.render.generated import UNPUBLISHED
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.transclusion import MAX_EMBED_DEPTH


def face(page: Page) -> tuple[object, ...]:
    """What other pages show of `page`: link text, URL, anchors, listings' summaries."""
    return (
        page.key,
        page.doc_path,
        page.title,
        page.summary,
        page.summary_derived,
        tuple((h.level, h.text, h.slug, h.line, h.source) for h in page.headings),
        tuple((b.id, b.line) for b in page.blocks),
        any(problem.rule in UNPUBLISHED for problem in page.problems),
    )


@dataclass
class InputMemo:
    """What a long-running build (`mkdocs serve`) keeps of the last build's render inputs, so a
    rebuild hashes again only what a change reaches. Every entry holds the objects it was made
    from and is used only while they are the same objects (a compile keeps the object of every
    page file that did not change); a page a change made stale (core/wiki/dependencies.py) is
    hashed again whatever it holds."""

    wiki: object | None = None  # the compile these entries were made from
    faces: dict[int, tuple[Page, str]] = field(default_factory=dict)
    # doc path -> (page, (key, page) of every other page read, its own part)
    own: dict[str, tuple[Page, tuple[tuple[str, Page], ...], tuple[object, ...]]] = field(
        default_factory=dict
    )
    # doc path -> (own part, backlinks' faces, shadowed page's face, extra, hash)
    hashes: dict[str, tuple[tuple[object, ...], tuple[str, ...], str | None, str, str]] = field(
        default_factory=dict
    )

    def begin(self, wiki: Wiki) -> bool:
        """A build of `wiki` starts; whether the entries may be used for its pages that are not
        stale (they were made from the compile just before it)."""
        usable = self.wiki is not None and wiki.previous is self.wiki and wiki.stale is not None
        if not usable:
            self.own, self.hashes = {}, {}
        if len(self.faces) > 4 * len(wiki.all_pages) + 64:
            self.faces = {}
        self.wiki = wiki
        return usable


class RenderInputs:
    """The render inputs of a wiki's pages; each page's face is hashed once per wiki (once per
    page file's version, with a `memo` kept across builds)."""

    def __init__(self, wiki: Wiki, memo: InputMemo | None = None) -> None:
        self.wiki = wiki
        self.memo = memo
        self._faces: dict[int, tuple[Page, str]] = memo.faces if memo is not None else {}
        self._reuse = memo.begin(wiki) if memo is not None else False
        self._stale = wiki.stale or frozenset()

    def face_of(self, page: Page) -> str:
        found = self._faces.get(id(page))
        if found is None or found[0] is not page:
            found = (
                page,
                hashlib.sha1(repr(face(page)).encode("utf-8", "surrogatepass")).hexdigest(),
            )
            self._faces[id(page)] = found
        return found[1]

    def of(self, page: Page, backlinks: Mapping[str, tuple[str, ...]], extra: str = "") -> str:
        """A hash of everything `render_page(wiki, page, ..., backlinks)` reads; `extra` is
        what the caller adds to the page (a home page's links)."""
        wiki = self.wiki
        listed = tuple(self.face_of(wiki.pages[key]) for key in backlinks.get(page.key, ()))
        shadowed = wiki.scopes.shadowed(page)
        shadow = self.face_of(shadowed) if shadowed else None
        own = self._own_part(page)
        memo = self.memo
        if memo is not None:
            before = memo.hashes.get(page.doc_path)
            if (
                before is not None
                and before[0] is own
                and before[1] == listed
                and before[2] == shadow
                and before[3] == extra
            ):
                return before[4]
        parts = (own, listed, shadow, extra)
        found = hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()
        if memo is not None:
            memo.hashes[page.doc_path] = (own, listed, shadow, extra, found)
        return found

    def _own_part(self, page: Page) -> tuple[object, ...]:
        """The page's own part, from the memo when the page is not stale and every page it read
        is the same object as then."""
        memo, doc = self.memo, page.doc_path
        if memo is None:
            return self._own(page, 0, frozenset(), [])
        before = memo.own.get(doc)
        pages = self.wiki.pages
        if (
            self._reuse
            and before is not None
            and doc not in self._stale
            and before[0] is page
            and all(pages.get(key) is read for key, read in before[1])
        ):
            return before[2]
        read: list[tuple[str, Page]] = []
        own = self._own(page, 0, frozenset(), read)
        memo.own[doc] = (page, tuple(read), own)
        return own

    def _own(
        self, page: Page, depth: int, embedding: frozenset[str], read: list[tuple[str, Page]]
    ) -> tuple[object, ...]:
        wiki = self.wiki
        links: list[object] = []
        for link in page.outgoing:
            resolution = wiki.resolve(link, page)
            if resolution is None:
                attachment = wiki.attachment(link, page)
                found = (attachment.path, attachment.where) if attachment else None
                links.append((None, found, found is not None and found[0] in wiki.sources))
                continue
            target = wiki.pages[resolution.key]
            read.append((resolution.key, target))
            inner: object = None
            if link.embed and depth <= MAX_EMBED_DEPTH and target.key not in embedding:
                inner = self._own(target, depth + 1, embedding | {page.key}, read)
            links.append((resolution.key, self.face_of(target), inner))
        cited = tuple((c.source, c.source in wiki.sources) for c in page.citations)
        states = tuple((state.name, state.status) for state in wiki.states_of(page))
        return (page.uid, page.doc_path, page.content_hash, tuple(links), cited, states)
