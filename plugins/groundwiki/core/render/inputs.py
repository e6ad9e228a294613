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


class RenderInputs:
    """The render inputs of a wiki's pages; each page's face is hashed once per wiki."""

    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki
        self._faces: dict[int, str] = {}

    def face_of(self, page: Page) -> str:
        found = self._faces.get(id(page))
        if found is None:
            found = hashlib.sha1(repr(face(page)).encode("utf-8", "surrogatepass")).hexdigest()
            self._faces[id(page)] = found
        return found

    def of(self, page: Page, backlinks: Mapping[str, tuple[str, ...]], extra: str = "") -> str:
        """A hash of everything `render_page(wiki, page, ..., backlinks)` reads; `extra` is
        what the caller adds to the page (a home page's links)."""
        wiki = self.wiki
        listed = tuple(self.face_of(wiki.pages[key]) for key in backlinks.get(page.key, ()))
        shadowed = wiki.scopes.shadowed(page)
        parts = (
            self._own(page, 0, frozenset()),
            listed,
            self.face_of(shadowed) if shadowed else None,
            extra,
        )
        return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()

    def _own(self, page: Page, depth: int, embedding: frozenset[str]) -> tuple[object, ...]:
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
            inner: object = None
            if link.embed and depth <= MAX_EMBED_DEPTH and target.key not in embedding:
                inner = self._own(target, depth + 1, embedding | {page.key})
            links.append((resolution.key, self.face_of(target), inner))
        cited = tuple((c.source, c.source in wiki.sources) for c in page.citations)
        states = tuple((state.name, state.status) for state in wiki.states_of(page))
        return (page.uid, page.doc_path, page.content_hash, tuple(links), cited, states)
