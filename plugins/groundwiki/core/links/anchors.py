"""Where a link's `#...` lands in its target page: a heading, a chain of headings, or a block.

Obsidian matches a heading by its text with case ignored and without the characters a link
cannot hold (`#`, `^`, `[`, `]`, `|`, and the punctuation its autocompletion drops); groundwiki
links also use the heading's id (`#some-heading`). Comparing only letters and digits accepts
all of these spellings. A chain `H1#H2` is H2 inside H1's section; `^id` is a block id.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cached_property

from groundwiki.core.model.records import Heading, Page

_NOT_WORD = re.compile(r"[\W_]+")


def heading_name(text: str) -> str:
    """A heading's text reduced to what every spelling of a link to it shares (a heading of
    symbols only, emoji say, keeps them)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NOT_WORD.sub("", folded) or "".join(folded.split())


def _names(heading: Heading) -> set[str]:
    return {heading_name(heading.text), heading_name(heading.source), heading_name(heading.slug)}


def anchor_id(page: Page, anchor: str) -> str | None:
    """The HTML id in `page` that `anchor` lands on, or None when the page has no such place.
    Block ids are rendered with the id `^block-id`; headings with their `toc` id. For many
    anchors of one page, keep its `Anchors`."""
    return Anchors(page).find(anchor)


class Anchors:
    """A page's headings and blocks by every name a link may give them: one dictionary hit per
    anchor, where searching the headings for each of n links to one page cost n times."""

    def __init__(self, page: Page) -> None:
        self.page = page

    @cached_property
    def headings_by_name(self) -> dict[str, int]:
        """Each name a heading answers to, to the first heading (by index) that has it."""
        names: dict[str, int] = {}
        for index, heading in enumerate(self.page.headings):
            for name in _names(heading):
                names.setdefault(name, index)
        return names

    @cached_property
    def blocks_by_id(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for index, block in enumerate(self.page.blocks):
            found.setdefault(block.id.casefold(), index)
        return found

    def find(self, anchor: str) -> str | None:
        anchor = anchor.strip()
        if anchor.startswith("^"):
            index = self.blocks_by_id.get(anchor[1:].casefold())
            return None if index is None else f"^{self.page.blocks[index].id}"
        parts = [name for part in anchor.split("#") if (name := heading_name(part))]
        if not parts:
            return None
        if len(parts) == 1:
            index = self.headings_by_name.get(parts[0])
            return None if index is None else self.page.headings[index].slug
        found = _chain(self.page.headings, parts)  # `H1#H2`: rare, searched in order
        return found.slug if found else None


def section(headings: tuple[Heading, ...], start: int) -> tuple[Heading, ...]:
    """The headings inside the section that heading `start` opens."""
    level = headings[start].level
    inside: list[Heading] = []
    for heading in headings[start + 1 :]:
        if heading.level <= level:
            break
        inside.append(heading)
    return tuple(inside)


def _chain(headings: tuple[Heading, ...], parts: list[str]) -> Heading | None:
    """The heading matching the last part, each part searched inside the previous one's
    section; the first part anywhere in the page."""
    for index, heading in enumerate(headings):
        if parts[0] not in _names(heading):
            continue
        if len(parts) == 1:
            return heading
        found = _chain(section(headings, index), parts[1:])
        if found is not None:
            return found
    return None
