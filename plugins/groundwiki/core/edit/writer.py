"""Writing a wiki's files from plain text: a page (frontmatter and body) and the mkdocs.yml that
builds the wiki. Tools that make wikis (the evaluation's test collections) write through here,
so what counts as wiki syntax, and how it is kept from being read as such, is known in one place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from groundwiki.core.read.comments import MARK

# Every line break Python's `str.splitlines` knows: Markdown breaks lines at `\n` and `\r`, some
# of the core's readers at all of these. Written as `\n`, they are the same lines to everyone.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")

# What opens a block at a line's start (indentation is dropped first: four spaces would make
# code, which shows an escape as written), up to the character escaped: a heading, a quote (and
# so a callout), a list item, a setext underline, a table's delimiter row (a cell would end
# where a block id must), a fence, an admonition.
_BLOCK_MARK = re.compile(
    r"[#>]|[-*+](?=\s|$)|\d{1,9}[.)](?=\s|$)|[=-](?=[=-]*\s*$)|[|: \t]*-(?=[|: \t-]*$)"
    r"|~(?=~~)|!(?=!!)|\?(?=\?\?)"
)

# What makes wiki syntax inside a line, one character each, found in the text as given.
_INLINE_MARK = re.compile(
    # A backslash that would escape the next character or break the line.
    r"\\(?=[!-/:-@\[-`{-~]|$)"
    # Wikilinks, embeds, Markdown links and images, reference definitions, callouts; code.
    r"|[\[`]"
    # A tag as the core reads one (`markdown._TAG`), wherever a token could start before it.
    r"|(?<![^\W_])#(?=[\w/-]*[^\W\d]|[\w/-]*[_/-])"
    # HTML: tags, comments, autolinks.
    r"|<(?=[A-Za-z/!?])"
    # Character references, which would show as the character.
    r"|&(?=#?[A-Za-z0-9]+;)"
    # The second of `%%` (an Obsidian comment) and of `==` (a highlight), however many follow.
    rf"|(?<={re.escape(MARK[0])}){re.escape(MARK[1])}|(?<==)="
    # A block id: `^id` closing the line.
    r"|(?<!\S)\^(?=[A-Za-z0-9-]+\s*$)"
    # The characters the renderer marks its slots with.
    r"|[\ue000\ue001]"
)

# Each mark as text. A backslash where both Markdowns (CommonMark for the core, Python-Markdown
# for the site) read it as an escape; else a character reference, which neither the core's line
# readers nor its comment blanking take for the mark (`%\%` would show its backslash on the site).
_AS_TEXT = {
    "\\": "\\\\",
    "[": "\\[",
    "`": "\\`",
    "#": "\\#",
    ">": "\\>",
    "-": "\\-",
    "*": "\\*",
    "+": "\\+",
    ".": "\\.",
    ")": "\\)",
    "!": "\\!",
    "<": "&lt;",
    "&": "&amp;",
    "%": "&#37;",
    "=": "&#61;",
    "^": "&#94;",
    "~": "&#126;",
    "?": "&#63;",
    "\ue000": "&#57344;",
    "\ue001": "&#57345;",
}
# Python-Markdown drops the control characters it marks its placeholders with: a space in their
# place keeps the words apart (and is read as the space it is: `^id\x02` closes a line).
_PLACEHOLDER_MARKS = {0x02: " ", 0x03: " "}


def prose_markdown(text: str) -> str:
    """Plain text as Markdown that reads as the same text to the wiki and shows as it on the
    site: no wikilinks, embeds, links, tags, headings, block ids, callouts, highlights, code, HTML
    or comments (HTML or Obsidian's) come out of it. Lines lose their indentation, which Markdown
    would not show."""
    text = text.translate(_PLACEHOLDER_MARKS)
    return "\n".join(_prose_line(line) for line in _LINE_BREAK.split(text))


def _prose_line(line: str) -> str:
    line = line.lstrip(" \t")
    marks = {match.start() for match in _INLINE_MARK.finditer(line)}
    block = _BLOCK_MARK.match(line)
    if block:
        marks.add(block.end() - 1)
    if not marks:
        return line
    pieces: list[str] = []
    cursor = 0
    for at in sorted(marks):
        pieces += [line[cursor:at], _AS_TEXT[line[at]]]
        cursor = at + 1
    pieces.append(line[cursor:])
    return "".join(pieces)


def page_text(fields: Mapping[str, Any], text: str) -> str:
    """A page file: `fields` as YAML frontmatter (in their order, on one line each), then the
    plain `text` as its body."""
    front = yaml.safe_dump(dict(fields), allow_unicode=True, sort_keys=False, width=10**6)
    return f"---\n{front}---\n\n{prose_markdown(text)}\n"


def write_page(path: Path, fields: Mapping[str, Any], text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text(fields, text), encoding="utf-8")


def write_mkdocs_config(path: Path, config: Mapping[str, Any]) -> None:
    """An mkdocs.yml holding `config` in its order."""
    path.write_text(yaml.safe_dump(dict(config), sort_keys=False), encoding="utf-8")
