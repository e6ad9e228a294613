"""Where a link's `#...` lands in its target page: a heading, a chain of headings, or a block.

Obsidian matches a heading by its text with case ignored and without the characters a link
cannot hold (`#`, `^`, `[`, `]`, `|`, and the punctuation its autocompletion drops); groundwiki
links also use the heading's id (`#some-heading`). Comparing only letters and digits accepts
all of these spellings. A chain `H1#H2` is H2 inside H1's section; `^id` is a block id.
"""

from __future__ import annotations

import re
import unicodedata

from .model import Heading, Page

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
    Block ids are rendered with the id `^block-id`; headings with their `toc` id."""
    anchor = anchor.strip()
    if anchor.startswith("^"):
        wanted = anchor[1:].casefold()
        block = next((b for b in page.blocks if b.id.casefold() == wanted), None)
        return f"^{block.id}" if block else None
    parts = [heading_name(part) for part in anchor.split("#")]
    parts = [part for part in parts if part]
    if not parts:
        return None
    found = _chain(page.headings, parts)
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
