"""What the body rewrite reads of one page: its lines, block ids, links and citation comments,
each sorted by line so that a span of the body costs what the span holds, not what the page
holds (a note embedded section by section is read once per render, not once per embed)."""

from __future__ import annotations

from bisect import bisect_left
from functools import cached_property

from groundwiki.core.model.records import Citation, Link, Page
from groundwiki.core.render.body.blocks import BlockPlace, block_places
from groundwiki.core.render.body.embeds import PageText


class PageFacts:
    """A page's body as the rewrite (`render.page_body`) reads it, by line."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.text = PageText(page)

    @cached_property
    def places(self) -> list[BlockPlace]:
        text = self.text
        protected = text.protected if self.page.blocks else None
        return sorted(block_places(self.page, text.lines, protected), key=lambda p: p.line)

    @cached_property
    def _place_lines(self) -> list[int]:
        return [place.line for place in self.places]

    @cached_property
    def links(self) -> list[Link]:
        kept = [link for link in self.page.links if link.kind in {"link", "wikilink"}]
        return sorted(kept, key=lambda link: link.at.line)  # stable: a line keeps its order

    @cached_property
    def _link_lines(self) -> list[int]:
        return [link.at.line for link in self.links]

    @cached_property
    def comments(self) -> list[tuple[int, Citation]]:
        """Inline citation comments with their number on the page, by line."""
        numbered = enumerate((c for c in self.page.citations if c.origin == "inline"), start=1)
        return sorted(numbered, key=lambda item: item[1].at.line)

    @cached_property
    def _comment_lines(self) -> list[int]:
        return [citation.at.line for _, citation in self.comments]

    def places_in(self, first: int, last: int) -> list[BlockPlace]:
        """Block ids whose marker is on body lines [first, last)."""
        lines = self._place_lines
        return self.places[bisect_left(lines, first) : bisect_left(lines, last)]

    def links_in(self, first: int, last: int) -> list[Link]:
        """Links on file lines [first, last)."""
        lines = self._link_lines
        return self.links[bisect_left(lines, first) : bisect_left(lines, last)]

    def comments_in(self, first: int, last: int) -> list[tuple[int, Citation]]:
        lines = self._comment_lines
        return self.comments[bisect_left(lines, first) : bisect_left(lines, last)]


def span_chars(text: PageText, span: tuple[int, int]) -> int:
    """The characters of the body lines `span` (as lint's `transclusion._Facts` counts them)."""
    start, end = span
    starts = text.starts
    stop = starts[end] if end < len(starts) else len(text.page.body) + 1
    return stop - starts[start] if start < len(starts) else 0
