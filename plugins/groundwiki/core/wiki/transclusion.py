"""How much one page may transclude: embeds inside embeds, how many and how much in all.

Depth alone does not bound a page: seven pages under 1 KB in all, each embedding the next ten
times, made one page of 26 MB in 38 s (100,000 transclusions at depth five; at twenty embeds
per page it would be ~850 MB). The renderer takes each transclusion from a budget per page
(`TransclusionBudget`); past it, an embed shows a note and a link. Lint replays the same walk
(`first_capped`) to report the page, without rendering it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundwiki.core.links.anchors import Anchors
from groundwiki.core.model.records import Link, Page

if TYPE_CHECKING:
    from groundwiki.core.wiki.compiled import Wiki

# Embeds inside embeds: deep enough for a note that gathers sections which quote others, and a
# bound on what one page can make the build render.
MAX_EMBED_DEPTH = 4
# Transclusions one page shows, nested ones included. The largest gathering page of the bundled
# handbook shows 12; each costs ~0.35 ms to convert (38 s for the 111,110 of the 7x10 fan-out),
# so the cap keeps a page under ~0.1 s of transclusion.
MAX_TRANSCLUSIONS = 250
# Characters of Markdown one page transcludes in all: 20 notes of 50 KB. The fan-out's 26 MB
# page was 240 bytes per transclusion, which the count caps first; this bounds large notes.
MAX_TRANSCLUDED_CHARS = 1_000_000
# Pages whose body is not shown (see render/generated.py, which may not be imported here).
_UNPUBLISHED = frozenset({"unreadable-page", "page-outside-wiki"})
_ATX_HEADING = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)*#{1,6}(?:[ \t]|$)")


@dataclass
class TransclusionBudget:
    """What a page's render has transcluded so far."""

    count: int = 0
    chars: int = 0

    def take(self, chars: int) -> str | None:
        """None when one more transclusion of `chars` characters fits (it is counted), else
        why it does not."""
        if self.count >= MAX_TRANSCLUSIONS:
            return f"the page already shows {MAX_TRANSCLUSIONS:,} transclusions, the most one may"
        if self.chars + chars > MAX_TRANSCLUDED_CHARS:
            return (
                f"the page already shows {self.chars:,} characters of transclusions, and "
                f"{MAX_TRANSCLUDED_CHARS:,} is the most one may"
            )
        self.count += 1
        self.chars += chars
        return None


class _Facts:
    """What the walk reads off one page, worked out once per walk however often the page is
    embedded (as the renderer's `PageText`): counting the target's lines and sorting its links
    once per embed made a page of 20,000 embeds that show nothing quadratic to lint."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.lines = page.body.split("\n")
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.anchors = Anchors(page)
        self.embeds = sorted((link for link in page.links if link.embed), key=_line_of)
        self._embed_lines = [link.at.line for link in self.embeds]
        self.heading_by_slug: dict[str, int] = {}
        for index, heading in enumerate(page.headings):
            self.heading_by_slug.setdefault(heading.slug, index)

    def span_lines(self, anchor: str | None) -> tuple[int, int]:
        """The body lines [start, end) an embed of `page#anchor` shows, as the renderer's
        `section_lines` finds them for a page or a heading (for a block: its paragraph, read
        without telling code apart); (0, 0) when there is no such place."""
        page, lines = self.page, len(self.lines)
        if not anchor:
            return 0, lines
        target = self.anchors.find(anchor)
        if target is None:
            return 0, 0
        if anchor.strip().startswith("^"):
            index = self.anchors.blocks_by_id.get(target[1:].casefold())
            if index is None:
                return 0, 0
            end = page.blocks[index].line - page.body_line
            start = end
            while start > 0 and self.lines[start - 1].strip():
                start -= 1
            return start, end + 1
        at = self.heading_by_slug.get(target)
        if at is None:
            return 0, 0
        headings = page.headings
        heading, end = headings[at], lines
        for other in headings[at + 1 :]:  # walked only for an embed the budget then counts
            if other.line > heading.line and other.level <= heading.level:
                end = other.line - page.body_line
                break
        return max(heading.line - page.body_line, 0), end

    def span_chars(self, start: int, end: int) -> int:
        """The characters of body lines [start, end)."""
        end = min(end, len(self.lines))
        return self.starts[end] - self.starts[start] if start < end else 0

    def embeds_in(self, start: int, end: int) -> list[Link]:
        """The page's embeds on body lines [start, end), by line."""
        first = bisect_left(self._embed_lines, start + self.page.body_line)
        last = bisect_left(self._embed_lines, end + self.page.body_line)
        return self.embeds[first:last]


def _line_of(link: Link) -> int:
    return link.at.line


def first_capped(wiki: Wiki, page: Page) -> tuple[Link, str] | None:
    """The embed of `page` under which its render first runs out of `TransclusionBudget`, and
    why: the renderer's walk, in its order (embeds by line, nested ones first), stopped at the
    first transclusion past the budget, so it costs at most the budget."""
    budget = TransclusionBudget()
    facts: dict[str, _Facts] = {}
    host = _facts_of(facts, page)
    for link in host.embeds_in(0, len(host.lines)):
        if _ATX_HEADING.match(host.lines[link.at.line - page.body_line]):
            continue  # an embed in a heading is a link
        why = _walk(wiki, page, link, ((page.key, ""),), budget, facts)
        if why is not None:
            return link, why
    return None


def _facts_of(facts: dict[str, _Facts], page: Page) -> _Facts:
    found = facts.get(page.key)
    if found is None:
        found = facts[page.key] = _Facts(page)
    return found


def _walk(
    wiki: Wiki,
    page: Page,
    link: Link,
    embedding: tuple[tuple[str, str], ...],
    budget: TransclusionBudget,
    facts: dict[str, _Facts],
) -> str | None:
    resolution = wiki.resolve(link, page)
    if resolution is None:
        return None
    target = wiki.pages[resolution.key]
    anchor = (link.anchor or "").strip()
    text = _facts_of(facts, target)
    start, end = text.span_lines(anchor or None)
    if start == end or any(p.rule in _UNPUBLISHED for p in target.problems):
        return None
    key = (target.key, anchor.casefold())
    if key in embedding or len(embedding) > MAX_EMBED_DEPTH:
        return None
    why = budget.take(text.span_chars(start, end))
    if why is not None:
        return why
    for inner in text.embeds_in(start, end):
        why = _walk(wiki, target, inner, (*embedding, key), budget, facts)
        if why is not None:
            return why
    return None
