"""How much one page may transclude: embeds inside embeds, how many and how much in all.

Depth alone does not bound a page: seven pages under 1 KB in all, each embedding the next ten
times, made one page of 26 MB in 38 s (100,000 transclusions at depth five; at twenty embeds
per page it would be ~850 MB). The renderer takes each transclusion from a budget per page
(`TransclusionBudget`); past it, an embed shows a note and a link. Lint replays the same walk
(`first_capped`) to report the page, without rendering it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .anchors import Anchors
from .model import Link, Page

if TYPE_CHECKING:
    from .wiki import Wiki

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


def span_lines(page: Page, anchor: str | None, anchors: Anchors | None = None) -> tuple[int, int]:
    """The body lines [start, end) an embed of `page#anchor` shows, as the renderer's
    `section_lines` finds them for a page or a heading (for a block: its paragraph, read
    without telling code apart); (0, 0) when there is no such place."""
    lines = page.body.count("\n") + 1
    if not anchor:
        return 0, lines
    target = (anchors or Anchors(page)).find(anchor)
    if target is None:
        return 0, 0
    if anchor.strip().startswith("^"):
        block = next((b for b in page.blocks if b.id.casefold() == target[1:].casefold()), None)
        if block is None:
            return 0, 0
        body_lines = page.body.split("\n")
        end = block.line - page.body_line
        start = end
        while start > 0 and body_lines[start - 1].strip():
            start -= 1
        return start, end + 1
    headings = page.headings
    at = next((i for i, h in enumerate(headings) if h.slug == target), None)
    if at is None:
        return 0, 0
    heading, end = headings[at], lines
    for other in headings[at + 1 :]:
        if other.line > heading.line and other.level <= heading.level:
            end = other.line - page.body_line
            break
    return max(heading.line - page.body_line, 0), end


def span_chars(page: Page, start: int, end: int) -> int:
    """The characters of body lines [start, end)."""
    lines = page.body.split("\n")[start:end]
    return sum(len(line) + 1 for line in lines)


def first_capped(wiki: Wiki, page: Page) -> tuple[Link, str] | None:
    """The embed of `page` under which its render first runs out of `TransclusionBudget`, and
    why: the renderer's walk, in its order (embeds by line, nested ones first), stopped at the
    first transclusion past the budget, so it costs at most the budget."""
    budget = TransclusionBudget()
    lines = page.body.split("\n")
    for link in _embeds_in(page, 0, len(lines)):
        if _ATX_HEADING.match(lines[link.at.line - page.body_line]):
            continue  # an embed in a heading is a link
        why = _walk(wiki, page, link, ((page.key, ""),), budget)
        if why is not None:
            return link, why
    return None


def _embeds_in(page: Page, start: int, end: int) -> Iterator[Link]:
    first, last = start + page.body_line, end + page.body_line
    embeds = [link for link in page.links if link.embed and first <= link.at.line < last]
    return iter(sorted(embeds, key=lambda link: link.at.line))


def _walk(
    wiki: Wiki,
    page: Page,
    link: Link,
    embedding: tuple[tuple[str, str], ...],
    budget: TransclusionBudget,
) -> str | None:
    resolution = wiki.resolve(link, page)
    if resolution is None:
        return None
    target = wiki.pages[resolution.key]
    anchor = (link.anchor or "").strip()
    start, end = span_lines(target, anchor or None)
    if start == end or any(p.rule in _UNPUBLISHED for p in target.problems):
        return None
    key = (target.key, anchor.casefold())
    if key in embedding or len(embedding) > MAX_EMBED_DEPTH:
        return None
    why = budget.take(span_chars(target, start, end))
    if why is not None:
        return why
    for inner in _embeds_in(target, start, end):
        why = _walk(wiki, target, inner, (*embedding, key), budget)
        if why is not None:
            return why
    return None
