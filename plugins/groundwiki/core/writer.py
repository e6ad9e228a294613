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

from .comments import MARK

# A `[` after a `[` (`[[`, also in `[[[` and `![[`): escaped, no wikilink or embed can open.
_SECOND_BRACKET = re.compile(r"(?<=\[)\[")
# A `%` after a `%`: no Obsidian comment can open, however many there are in a row.
_SECOND_PERCENT = re.compile(rf"(?<={re.escape(MARK[0])}){re.escape(MARK[1])}")
# `#` opening a line, after any white space: it would make a heading or a tag.
_LINE_HASH = re.compile(r"(?m)^(\s*)#")


def prose_markdown(text: str) -> str:
    """Plain text as Markdown that reads as the same text to the wiki: no wikilinks, embeds,
    comments (HTML or Obsidian's) or headings come out of it."""
    safe = _SECOND_BRACKET.sub(r"\\[", text).replace("<!--", "&lt;!--")
    safe = _SECOND_PERCENT.sub(r"\\%", safe)
    return _LINE_HASH.sub(r"\1\\#", safe)


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
