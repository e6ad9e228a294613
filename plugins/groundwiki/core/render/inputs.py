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

from ..model import Page
from ..wiki import Wiki
from .generated import UNPUBLISHED
from .page import MAX_EMBED_DEPTH


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


def render_inputs(
    wiki: Wiki, page: Page, backlinks: Mapping[str, tuple[str, ...]], extra: str = ""
) -> str:
    """A hash of everything `render_page(wiki, page, ..., backlinks)` reads; `extra` is what
    the caller adds to the page (a home page's links)."""
    digest = hashlib.sha256()
    digest.update(repr(_own_inputs(wiki, page, 0, set())).encode("utf-8", "surrogatepass"))
    listed = tuple(face(wiki.pages[key]) for key in backlinks.get(page.key, ()))
    shadowed = wiki.shadowed(page)
    rest = (listed, face(shadowed) if shadowed else None, extra)
    digest.update(repr(rest).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _own_inputs(wiki: Wiki, page: Page, depth: int, embedding: set[str]) -> tuple[object, ...]:
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
            inner = _own_inputs(wiki, target, depth + 1, embedding | {page.key})
        links.append((resolution.key, face(target), inner))
    cited = tuple((citation.source, citation.source in wiki.sources) for citation in page.citations)
    states = tuple((state.name, state.status) for state in wiki.states_of(page))
    return (page.uid, page.doc_path, page.content_hash, tuple(links), cited, states)
