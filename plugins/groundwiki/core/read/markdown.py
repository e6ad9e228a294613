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
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock, table
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType

from groundwiki.core.model.records import Block, BodyMap, Heading, Link, Location

_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
# Obsidian's block id: `^id` closing a line, after a space, alone on it, or right after an
# embed or link (`![[image.png]]^id`, which Obsidian reads as the embed's id).
_BLOCK_ID = re.compile(r"(?:^|[ \t]|(?<=\]\]))\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)
# An inline tag: `#` after a space or a line start, then letters, digits, `_`, `-` or `/`
# (nested tags), with at least one that is not a digit (`#1` is not a tag in Obsidian).
_TAG = re.compile(r"(?:^|(?<=[\s(\[{,;]))#([\w/-]*[^\W\d][\w/-]*|[\w/-]*[_/-][\w/-]*)")
_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
# Lists nest at most this deep on the site (render/nesting.py): twenty levels of four spaces,
# Python-Markdown's list indent, more than any note nests and far from the ~450 at which
# Python-Markdown runs out of stack.
MAX_LIST_DEPTH = 20
MAX_INDENT = 4 * MAX_LIST_DEPTH
_LEADING_SPACE = re.compile(r"[ \t]*")
# Set in a parse's env when indented code would have changed its blocks (see `_CodeWatch`).
_INDENTED_CODE = "groundwiki_indented_code"


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
    blocks: tuple[Block, ...] = ()
    tags: tuple[str, ...] = ()  # inline `#tags`, without the `#`, in order of appearance
    body_map: BodyMap | None = None


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    embed = state.src.startswith("![[", state.pos)
    start = state.pos + 1 if embed else state.pos
    if not state.src.startswith("[[", start):
        return False
    match = _WIKILINK.match(state.src, start)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = match.group(1)
        token.meta = {"raw": ("!" if embed else "") + match.group(0), "embed": embed}
    state.pos = match.end()
    return True


class _CodeWatch(StateBlock):
    """The page parser's block state. Indented code is off in it (see `_parser`); every place
    where a parser with it on (the site's, as `block_tokens` reads it) would see code, and so
    might read the blocks otherwise, is noted: a body without one has the site's blocks, which
    `BodyMap` records once."""

    indented_code = False

    def is_code_block(self, line: int) -> bool:
        if self.sCount[line] - self.blkIndent >= 4:
            self.indented_code = True
        return False


class _WatchedBlocks(ParserBlock):
    def parse(
        self, src: str, md: MarkdownIt, env: EnvType, outTokens: list[Token]
    ) -> list[Token] | None:
        if not src:
            return None
        state = _CodeWatch(src, md, env, outTokens)
        self.tokenize(state, state.line, state.lineMax)
        env[_INDENTED_CODE] = state.indented_code
        return state.tokens


def _code_watch_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """Where the disabled `code` rule would run: it asks only this, and reads nothing."""
    state.is_code_block(start_line)
    return False


def _table_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`table`, which probes every block's next line: where it finds no table, indented code
    would have found none either, so what it saw on the way changes nothing."""
    seen = getattr(state, "indented_code", False)
    if table(state, start_line, end_line, silent):
        return True
    if isinstance(state, _CodeWatch):
        state.indented_code = seen
    return False


@cache
def _parser() -> MarkdownIt:
    # No indented code blocks: MkDocs extensions (admonitions, tabs, details) nest prose by
    # indentation, and reading it as code would hide its links and citations. Examples belong in
    # fenced code, which stays code.
    md = MarkdownIt("commonmark", {"html": True}).enable("table").disable("code")
    watched = _WatchedBlocks()
    watched.ruler = md.block.ruler
    md.block = watched
    md.block.ruler.at("table", _table_rule)
    # In the disabled `code` rule's place (after `table`, before `fence`).
    md.block.ruler.before("fence", "code_watch", _code_watch_rule)
    # Escapes and entities stay tokens of their own (`text_special`), so `\\#not-a-tag` and
    # `&#35;x` are told apart from a tag; readers of the text join them back.
    md.core.ruler.disable("text_join")
    # Before `image` and `link`, so `![[a]]` and `[[a]]` are not read as an image or a shortcut
    # reference link `[a]` in brackets.
    md.inline.ruler.before("image", "wikilink", _wikilink_rule)
    return md


@cache
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.core.ruler.disable("inline")  # blocks only: where code and paragraphs are, not their insides
    return md


def block_tokens(body: str) -> list[Token]:
    """The body's blocks as CommonMark reads them (inline tokens keep their source lines, not
    parsed). Unlike the page's parser, four spaces of indentation make code here, so a fence
    indented that far is no fence (as in Python-Markdown, which renders the site)."""
    return _block_parser().parse(body)


def slugify(text: str) -> str:
    """Heading anchors as MkDocs' default `toc` extension makes them, so `[[key#Heading]]` matches."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def indent_width(line: str) -> int:
    """The columns a line's leading whitespace takes, tabs at stops of four."""
    return len(_LEADING_SPACE.match(line).group(0).expandtabs(4))  # type: ignore[union-attr]


def too_deep_lines(body: str, code: tuple[tuple[int, int], ...] = ()) -> list[int]:
    """The body lines (0-based) indented past `MAX_INDENT` columns, outside the line ranges
    `code` (a `BodyMap`'s fences and headings)."""
    if " " * (MAX_INDENT + 1) not in body and "\t" not in body:
        return []
    lines = body.split("\n")
    in_code = [False] * len(lines)
    for first, end in code:
        in_code[first:end] = [True] * (min(end, len(lines)) - first)
    # A line of whitespace only is blank, not nested: a blanked `%% comment %%` is one.
    return [
        i
        for i, line in enumerate(lines)
        if not in_code[i] and line.strip() and indent_width(line) > MAX_INDENT
    ]


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """`target#anchor|label` → (target, anchor, label). In a table the pipe is written `\\|`
    (the README's advice, and Obsidian's), so a backslash before the first pipe is not text."""
    target, _, label = inner.partition("|")
    target = target.removesuffix("\\")
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
        return self._location(self.find_offset(needle)[0])

    def find_offset(self, *needles: str) -> tuple[int, str]:
        """The first of these spellings after the cursor, and which one it was (the cursor
        moves past it); the cursor itself when none is found."""
        best, found = -1, needles[0] if needles else ""
        for needle in needles:
            position = self._search(needle) if needle else -1
            if position >= 0 and (best < 0 or position < best):
                best, found = position, needle
        if best < 0:
            return self.cursor, found
        self.cursor = best + len(found)
        return best, found

    def skip_code_span(self, markup: str) -> None:
        """Move past the next code span opened by `markup` (its backtick run), so a link
        quoted in code is not taken for the real one after it on the same line."""
        opening = self._search(markup)
        if opening < 0:
            return
        position = opening + len(markup)
        body = self.body
        while True:
            position = body.find(markup, position)
            if position < 0:
                return
            end = position + len(markup)
            # The closing run has exactly the opening's length: a longer run is text.
            if body[position - 1] != "`" and (end >= len(body) or body[end] != "`"):
                self.cursor = end
                return
            while end < len(body) and body[end] == "`":
                end += 1
            position = end

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
    env: EnvType = {}
    tokens = _parser().parse(body, env)
    locator = _Locator(body, rel_path, first_line)
    links: list[Link] = []
    comments: list[Comment] = []
    headings: list[Heading] = []
    blocks: list[Block] = []
    tags: list[str] = []
    slugs = Slugs()
    starts: list[int] = []
    code_and_headings: list[tuple[int, int]] = []
    for i, token in enumerate(tokens):
        if token.map:
            locator.start_block(token.map[0])
            if token.level == 0:
                starts.append(token.map[0])
            if token.type == "fence" or token.type == "heading_open":
                code_and_headings.append((token.map[0], token.map[1]))
        if token.type == "html_block" and token.map:
            for match in _COMMENT.finditer(token.content):
                at = locator.find(match.group(0).split("\n", 1)[0])
                comments.append(Comment(match.group(1), match.group(0), at.line, at.column))
        elif token.type == "heading_open" and token.map:
            inline = tokens[i + 1]
            text = _plain_text(inline)
            line = first_line + token.map[0]
            slug = slugs.unique(slugify(text))
            headings.append(Heading(int(token.tag[1]), text, slug, line, inline.content.strip()))
        elif token.type == "inline" and token.map:
            _read_inline(token, locator, links, comments, tags)
            for match in _BLOCK_ID.finditer(token.content):
                line = first_line + token.map[0] + token.content.count("\n", 0, match.start(1))
                blocks.append(Block(match.group(1), line))
    body_map = BodyMap(
        tuple(starts),
        tuple(code_and_headings),
        tuple(locator.line_starts[c.line - first_line] + c.column - 1 for c in comments),
        site_blocks=not env.get(_INDENTED_CODE),
    )
    return BodyStructure(
        tuple(links),
        tuple(comments),
        tuple(headings),
        tuple(blocks),
        tuple(dict.fromkeys(tags)),
        body_map,
    )


class Slugs:
    """The ids a page's headings have taken so far, and the number each name's next repeat
    tries first: counting up from `_1` for every repeat made 16,000 `# same` quadratic (over
    60 s of lint for a 112 KB page)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next_number: dict[str, int] = {}

    def unique(self, slug: str) -> str:
        """The id `toc` gives a repeated heading: `name`, then `name_1`, `name_2`; a heading
        with no letters it keeps (CJK, emoji) has no name, so it is `_1`, `_2`, ... from the
        first."""
        candidate, number = slug, self.next_number.get(slug, 0)
        if number:
            candidate = f"{slug}_{number}"
        while candidate in self.taken or not candidate:
            number += 1
            candidate = f"{slug}_{number}"
        # Every number below this one is taken for this name, and ids are never given back.
        self.next_number[slug] = number + 1
        self.taken.add(candidate)
        return candidate


def _plain_text(inline: Token) -> str:
    """A heading's text as a reader sees it: a wikilink shows as its label, else its target, and
    a block id closing it (`## Setup ^id`) is no text: the site shows and slugs it without."""
    parts: list[str] = []
    children = inline.children or []
    for index, child in enumerate(children):
        if child.type in {"text", "code_inline", "text_special"}:
            content = child.content
            if child.type == "text" and index == len(children) - 1:
                content = _BLOCK_ID.sub("", content.rstrip())  # `^` in code is text
            parts.append(content)
        elif child.type == "wikilink":
            target, _, label = split_wikilink(child.content)
            parts.append(label or target)
    return " ".join("".join(parts).split())


def _read_inline(
    token: Token, locator: _Locator, links: list[Link], comments: list[Comment], tags: list[str]
) -> None:
    for child in token.children or []:
        if child.type == "wikilink":
            target, anchor, label = split_wikilink(child.content)
            parsed = child.meta["raw"]
            # A table cell reaches the parser with `\\|` unescaped: the file has the backslash.
            position, raw = locator.find_offset(parsed, parsed.replace("|", "\\|", 1))
            at = locator._location(position)
            embed = child.meta["embed"]
            links.append(Link("wikilink", target, at, label, anchor, raw, embed))
        elif child.type == "code_inline":
            locator.skip_code_span(child.markup)
        elif child.type == "text":
            found = (match.group(1) for match in _TAG.finditer(child.content))
            tags.extend(tag for tag in found if any(c.isalnum() for c in tag))
        elif child.type == "text_special" and child.markup:
            locator.find(child.markup)  # `\\[[a]]` is text: the link is the next `[[a]]`
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            if _is_page_link(href):
                path, _, anchor = href.partition("#")
                at = locator.find_link()
                # markdown-it percent-encodes destinations; files are named in plain text.
                links.append(
                    Link("link", unquote(path), at, None, unquote(anchor) or None, unquote(href))
                )
        elif child.type == "html_inline":
            match = _COMMENT.fullmatch(child.content)
            if match:
                at = locator.find(child.content.split("\n", 1)[0])
                comments.append(Comment(match.group(1), child.content, at.line, at.column))
            else:  # a tag's attributes may quote a link (`title="[[a]]"`): not the link itself
                locator.find(child.content)


def _is_page_link(href: str) -> bool:
    path = href.partition("#")[0].partition("?")[0]
    if not path or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
        return False  # in-page anchors and external URLs (http:, mailto:) are not wiki links
    return path.lower().endswith(".md")
