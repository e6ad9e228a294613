"""Read the structure of a page body from markdown-it-py's token stream.

Working on tokens rather than on raw text is what keeps `[[links]]` and `<!-- from: -->`
comments inside code spans and fenced code from counting: code never becomes a link token.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from .model import Heading, Link, Location

_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)


@dataclass(frozen=True)
class Comment:
    text: str  # between `<!--` and `-->`
    raw: str
    line: int  # 1-based file line
    column: int


@dataclass(frozen=True)
class BodyStructure:
    links: tuple[Link, ...]
    comments: tuple[Comment, ...]
    headings: tuple[Heading, ...]


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    match = _WIKILINK.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = match.group(1)
        token.meta = {"offset": state.pos, "raw": match.group(0)}
    state.pos = match.end()
    return True


@cache
def _parser() -> MarkdownIt:
    # No indented code blocks: MkDocs extensions (admonitions, tabs, details) nest prose by
    # indentation, and reading it as code would hide its links and citations. Examples belong in
    # fenced code, which stays code.
    md = MarkdownIt("commonmark", {"html": True}).enable("table").disable("code")
    # Before `link`, so `[[a]]` is not read as a shortcut reference link `[a]` in brackets.
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    return md


def slugify(text: str) -> str:
    """Heading anchors as MkDocs' default `toc` extension makes them, so `[[key#Heading]]` matches."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """`target#anchor|label` → (target, anchor, label)."""
    target, _, label = inner.partition("|")
    target, _, anchor = target.partition("#")
    return target.strip(), (anchor.strip() or None), (label.strip() or None)


class _Locator:
    """File positions of inline items, found in the raw body after the previous item.

    markdown-it gives line numbers per block only; searching the raw text from a cursor gets the
    line and column right after multi-line code spans and comments too.

    Each search result is remembered, so a search that fails, or finds something far ahead, is
    not run again for the next item: with thousands of reference links (`[text][label]`, no
    `](` to find) one body scan per link made locating them quadratic.
    """

    def __init__(self, body: str, rel_path: str, first_line: int) -> None:
        self.body = body
        self.rel_path = rel_path
        self.first_line = first_line
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", body)]
        self.cursor = 0
        self._found: dict[str, tuple[int, int]] = {}  # needle -> (searched from, found at or -1)

    def start_block(self, line_index: int) -> None:
        self.cursor = self.line_starts[min(line_index, len(self.line_starts) - 1)]

    def _search(self, needle: str) -> int:
        """`body.find(needle, cursor)`, reusing the last search for `needle` when it still holds:
        it started at or before the cursor and found nothing, or found something at or after it."""
        searched_from, at = self._found.get(needle, (-1, -1))
        if searched_from < 0 or self.cursor < searched_from or -1 < at < self.cursor:
            at = self.body.find(needle, self.cursor)
            self._found[needle] = (self.cursor, at)
        return at

    def find(self, needle: str) -> Location:
        position = self._search(needle) if needle else -1
        if position < 0:
            position = self.cursor
        else:
            self.cursor = position + len(needle)
        return self._location(position)

    def find_link(self) -> Location:
        """A Markdown link's `[`: the bracket that the next `](` closes."""
        close = self._search("](")
        if close < 0:
            return self._location(self.cursor)
        depth, position = 0, close
        # Not back past the cursor: the link starts after the previous item, and walks that
        # cannot overlap keep the cost linear.
        while position > self.cursor:
            position -= 1
            char = self.body[position]
            if char == "]":
                depth += 1
            elif char == "[":
                if depth == 0:
                    break
                depth -= 1
        self.cursor = close + 2
        return self._location(position)

    def _location(self, position: int) -> Location:
        line = bisect_right(self.line_starts, position) - 1
        column = position - self.line_starts[line] + 1
        return Location(self.rel_path, self.first_line + line, column)


def parse_body(body: str, rel_path: str, first_line: int) -> BodyStructure:
    """Links, comments and headings of a body whose first line is file line `first_line`."""
    tokens = _parser().parse(body)
    locator = _Locator(body, rel_path, first_line)
    links: list[Link] = []
    comments: list[Comment] = []
    headings: list[Heading] = []
    for i, token in enumerate(tokens):
        if token.map:
            locator.start_block(token.map[0])
        if token.type == "html_block" and token.map:
            for match in _COMMENT.finditer(token.content):
                at = locator.find(match.group(0).split("\n", 1)[0])
                comments.append(Comment(match.group(1), match.group(0), at.line, at.column))
        elif token.type == "heading_open" and token.map:
            text = _plain_text(tokens[i + 1])
            headings.append(
                Heading(int(token.tag[1]), text, slugify(text), first_line + token.map[0])
            )
        elif token.type == "inline" and token.map:
            _read_inline(token, locator, links, comments)
    return BodyStructure(tuple(links), tuple(comments), tuple(headings))


def _plain_text(inline: Token) -> str:
    """A heading's text as a reader sees it: a wikilink shows as its label, else its target."""
    parts: list[str] = []
    for child in inline.children or []:
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type == "wikilink":
            target, _, label = split_wikilink(child.content)
            parts.append(label or target)
    return " ".join("".join(parts).split())


def _read_inline(
    token: Token, locator: _Locator, links: list[Link], comments: list[Comment]
) -> None:
    for child in token.children or []:
        if child.type == "wikilink":
            target, anchor, label = split_wikilink(child.content)
            raw = child.meta["raw"]
            links.append(Link("wikilink", target, locator.find(raw), label, anchor, raw))
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            if _is_page_link(href):
                path, _, anchor = href.partition("#")
                at = locator.find_link()
                # markdown-it percent-encodes destinations; files are named in plain text.
                links.append(Link("link", unquote(path), at, None, anchor or None, unquote(href)))
        elif child.type == "html_inline":
            match = _COMMENT.fullmatch(child.content)
            if match:
                at = locator.find(child.content.split("\n", 1)[0])
                comments.append(Comment(match.group(1), child.content, at.line, at.column))


def _is_page_link(href: str) -> bool:
    path = href.partition("#")[0].partition("?")[0]
    if not path or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
        return False  # in-page anchors and external URLs (http:, mailto:) are not wiki links
    return path.lower().endswith(".md")
