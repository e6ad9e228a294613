"""Obsidian block ids (`text ^block-id`): the marker leaves the text, an anchor takes its id.

The anchor (`id="^block-id"`, which `[[page#^block-id]]` links to) goes at the start of the
paragraph or list item the marker closes, so a link lands on the block's first line. A marker
alone on its line under a block that is not a paragraph (a table, a list, a quote, code) names
that block: its anchor stays where the marker was, marked `after`, and the site's style lights
up the block above it when a link lands there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwiki.core.model.records import Page
from groundwiki.core.render.body.code import protected_lines
from groundwiki.core.render.body.embeds import block_start, continues_text

# Where a line's text begins: after indentation, quote markers, a list marker and a task box.
_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[.\][ \t]+)?)?")
_HEADING = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)*#{1,6}(?:[ \t]|$)")
# A marker closing a line, any id (the compiler's spelling of one): one pattern for all blocks,
# where one per id overflowed `re`'s cache of 512 patterns on a page with many blocks.
_MARKER = re.compile(r"(?:^|[ \t]+|(?<=\]\]))\^([A-Za-z0-9-]+)[ \t]*$")


@dataclass(frozen=True)
class BlockPlace:
    id: str
    line: int  # body line index of the marker
    start: int  # columns (0-based) of the marker text, with the space before it
    end: int
    anchor_line: int  # body line index and column where the anchor goes
    anchor_column: int
    after: bool  # the marker names the block above it


def block_places(
    page: Page, lines: list[str], protected: list[bool] | None = None
) -> list[BlockPlace]:
    """Where each block id of `page` is written and where its anchor goes; `protected` is
    `protected_lines(lines)`, when the caller has it."""
    if not page.blocks:
        return []
    if protected is None:
        protected = protected_lines(lines)
    places: list[BlockPlace] = []
    for block in page.blocks:
        index = block.line - page.body_line
        if not 0 <= index < len(lines) or protected[index]:
            continue  # a `$$` formula's `x ^2` is no marker
        line = lines[index]
        marker = _MARKER.search(line)
        if marker is None or marker[1] != block.id:
            continue
        start, end = marker.start(), marker.end()
        alone = not line[:start].strip(" \t>")
        if alone and (index == 0 or not continues_text(lines[index - 1], protected[index - 1])):
            places.append(BlockPlace(block.id, index, start, end, index, start, True))
            continue
        first = index - 1 if alone else index
        anchor_line = block_start(lines, first)
        text = lines[anchor_line]
        column = _PREFIX.match(text).end()  # type: ignore[union-attr]
        if _HEADING.match(text) or text[column:].startswith(("[!", "|")):
            # A heading's text is its id, a callout's first line its type, a table row a row:
            # the anchor stands where the marker was.
            anchor_line, column = index, start
        places.append(BlockPlace(block.id, index, start, end, anchor_line, column, False))
    return places
