"""Where a link's target is written in a page file, and how to write a new target in its style.

The compile gives each link its place (`Link.at`) and, for wikilinks, its spelling (`Link.raw`);
a rewrite needs the exact characters of the target inside that spelling, so it can replace them
and nothing else: the label, the anchor, the `!` of an embed, a table's `\\|`, a Markdown link's
title and its angle brackets stay as written. Every place is checked against the text before it
is used: a link that is not where the compile says (a reference-style Markdown link, a file
changed meanwhile) is looked for on its line, then among the page's link definitions, and left
alone when it cannot be found for certain.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from markdown_it.common.utils import unescapeAll

from groundwiki.core.model.records import Link
from groundwiki.core.render.body.positions import bare_destination_end, closing_bracket

PAGE_SUFFIX = ".md"
# A Markdown link definition: `[label]: destination`, up to three spaces in.
_DEFINITION = re.compile(r"^ {0,3}\[(?:[^\]\\\n]|\\.)+\]:[ \t]*\n?[ \t]*", re.MULTILINE)
# Kept as they are when a destination is percent-encoded: what a URL path may hold.
_URL_SAFE = "/-._~!$&'*+,;=:@"


@dataclass(frozen=True)
class Span:
    """Characters of a file to replace: [start, end) offsets in its text."""

    start: int
    end: int
    text: str


def line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in re.finditer("\n", text))
    return starts


def _offset(starts: list[int], line: int, column: int) -> int:
    index = min(max(line, 1), len(starts)) - 1
    return starts[index] + column - 1


def _line_of(text: str, starts: list[int], line: int) -> tuple[int, int]:
    index = min(max(line, 1), len(starts)) - 1
    end = starts[index + 1] if index + 1 < len(starts) else len(text)
    return starts[index], end


# --- wikilinks -----------------------------------------------------------------------------


def wikilink_target(text: str, starts: list[int], link: Link) -> tuple[int, int] | None:
    """The [start, end) of a wikilink's (or embed's) target as written in the file: the link's
    spelling at its place, else the occurrence on its line closest to the place it was given."""
    raw = link.raw
    if not raw:
        return None
    at = _offset(starts, link.at.line, link.at.column)
    if not text.startswith(raw, at):
        first, last = _line_of(text, starts, link.at.line)
        places = [m.start() for m in re.finditer(re.escape(raw), text[first:last])]
        if not places:
            return None
        at = first + min(places, key=lambda p: abs(first + p - at))
    opening = raw.index("[[") + 2
    inner = raw[opening:-2]
    # The target ends at the first `#` or `|` (a table writes the pipe `\|`).
    cut = len(inner)
    for mark in ("#", "|"):
        found = inner.find(mark)
        if found >= 0:
            cut = min(cut, found)
    if inner[:cut].endswith("\\") and inner[cut : cut + 1] == "|":
        cut -= 1
    written = inner[:cut]
    target = written.strip()
    if not target:
        return None
    start = at + opening + written.index(target)
    return start, start + len(target)


# --- Markdown links ------------------------------------------------------------------------


@dataclass(frozen=True)
class Destination:
    """A Markdown link's destination as written: its path part (without `#anchor`) is
    [start, end) in the file; `bracketed` for `<...>`."""

    start: int
    end: int
    bracketed: bool


def _destination_at(text: str, position: int) -> tuple[int, int, bool] | None:
    """The destination starting at `position` (spaces and one line break skipped first):
    (start, end, bracketed) of what is between `<` and `>`, or of the bare destination."""
    while position < len(text) and text[position] in " \t":
        position += 1
    if text.startswith("\n", position):
        position += 1
        while position < len(text) and text[position] in " \t":
            position += 1
    if text.startswith("<", position):
        close = position + 1
        while close < len(text) and text[close] not in ">\n":
            close += 2 if text[close] == "\\" else 1
        if close >= len(text) or text[close] != ">":
            return None
        return position + 1, close, True
    end = bare_destination_end(text, position)
    return (position, end, False) if end > position else None


def _as_read(written: str) -> str:
    """A destination as the compile records it (`Link.raw`): escapes and entities resolved,
    percent-encoding decoded."""
    return unquote(unescapeAll(written))


def _path_part(text: str, start: int, end: int, bracketed: bool) -> Destination:
    """The destination without its `#anchor` (and `?query`)."""
    written = text[start:end]
    cut = len(written)
    for mark in ("#", "?"):
        found = written.find(mark)
        if found >= 0:
            cut = min(cut, found)
    return Destination(start, start + cut, bracketed)


def markdown_destination(
    text: str, starts: list[int], link: Link, taken: set[int]
) -> Destination | None:
    """Where a Markdown link's destination is written: at the `[` the compile located, else
    in an inline link on the same line, else in a link definition of the page
    (`[label]: old.md`, which reference-style links use). An inline destination another link
    of the page was found at (`taken`, their starts) is not this link's: a reference-style link
    can be given the place of the inline link after it. The one found is added to `taken`."""
    wanted = link.raw

    def inline_at(bracket: int) -> Destination | None:
        close = closing_bracket(text, bracket)
        if close is None or not text.startswith("(", close + 1):
            return None
        found = _destination_at(text, close + 2)
        if found is None or found[0] in taken or _as_read(text[found[0] : found[1]]) != wanted:
            return None
        taken.add(found[0])
        return _path_part(text, *found)

    at = _offset(starts, link.at.line, link.at.column)
    if text.startswith("[", at):
        found = inline_at(at)
        if found is not None:
            return found
    first, last = _line_of(text, starts, link.at.line)
    for match in re.finditer(r"\]\(", text[first:last]):
        candidate = _destination_at(text, first + match.end())
        if (
            candidate is not None
            and candidate[0] not in taken
            and _as_read(text[candidate[0] : candidate[1]]) == wanted
        ):
            taken.add(candidate[0])
            return _path_part(text, *candidate)
    for match in _DEFINITION.finditer(text):
        candidate = _destination_at(text, match.end())
        if candidate is not None and _as_read(text[candidate[0] : candidate[1]]) == wanted:
            return _path_part(text, *candidate)
    return None


def destination_text(written: str, new_path: str, bracketed: bool) -> str:
    """The new path spelled as the old one was: inside `<...>` as is; percent-encoded when the
    old one was, or when the new one could not stand bare (spaces, parentheses, `%`)."""
    if bracketed:
        return new_path.replace("<", "\\<").replace(">", "\\>")
    encoded = unquote(written) != written
    if encoded or re.search(r"[\s()<>%\\]", new_path):
        return quote(new_path, safe=_URL_SAFE)
    return new_path


# --- spelling a target ---------------------------------------------------------------------


def relative(path: str, from_doc_path: str) -> str:
    return posixpath.relpath(path, posixpath.dirname(from_doc_path) or ".")


def spell_name(written: str, route: str, from_doc_path: str) -> str:
    """A wikilink's or ref's target for the page (or file) at `route` (its path in the wiki
    folder; without `.md` for a page), written the way `written` was: a name stays a name,
    a path from the root stays one, a relative path is recomputed from the linking page."""
    if written.startswith(("./", "../")):
        spelled = relative(route, from_doc_path)
        spelled = spelled if spelled.startswith("../") else "./" + spelled
    elif written.startswith("/"):
        spelled = "/" + route
    elif "/" in written:
        spelled = route
    else:
        spelled = posixpath.basename(route)
    return spelled


def with_suffix_as_written(written: str, spelled: str) -> str:
    """`[[old.md]]` becomes `[[new.md]]`: the suffix is kept when the old target had it."""
    if written.casefold().endswith(PAGE_SUFFIX) and not spelled.casefold().endswith(PAGE_SUFFIX):
        return spelled + written[-len(PAGE_SUFFIX) :]
    return spelled


def spell_markdown_path(written: str, via: str, doc_path: str, from_doc_path: str) -> str:
    """A Markdown link's path (unencoded) to the page at `doc_path`: relative when MkDocs found
    it relative to the linking page, from the root with a leading `/` when written so, else
    a file name or a path from the root as Obsidian writes them."""
    if via == "path":
        return "/" + doc_path if written.startswith("/") else relative(doc_path, from_doc_path)
    return doc_path if "/" in written else posixpath.basename(doc_path)
