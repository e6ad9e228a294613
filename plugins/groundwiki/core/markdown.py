"""Read the structure of a page body from markdown-it-py's token stream.

Working on tokens rather than on raw text is what keeps `[[links]]` and `<!-- from: -->`
comments inside code spans and fenced code from counting: code never becomes a link token.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

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


def parse_body(body: str, rel_path: str, first_line: int) -> BodyStructure:
    """Links, comments and headings of a body whose first line is file line `first_line`."""
    lines = body.split("\n")
    tokens = _parser().parse(body)
    links: list[Link] = []
    comments: list[Comment] = []
    headings: list[Heading] = []

    def locate(line_index: int, needle: str) -> Location:
        line_index = max(0, min(line_index, len(lines) - 1))
        column = lines[line_index].find(needle) if lines else -1
        return Location(rel_path, first_line + line_index, column + 1 if column >= 0 else 1)

    for i, token in enumerate(tokens):
        if token.type == "html_block" and token.map:
            for match in _COMMENT.finditer(token.content):
                index = token.map[0] + token.content.count("\n", 0, match.start())
                at = locate(index, match.group(0).split("\n", 1)[0])
                comments.append(Comment(match.group(1), match.group(0), at.line, at.column))
        elif token.type == "heading_open" and token.map:
            inline = tokens[i + 1]
            text = (
                "".join(
                    child.content
                    for child in inline.children or []
                    if child.type in {"text", "code_inline"}
                )
                or inline.content
            )
            headings.append(
                Heading(int(token.tag[1]), text.strip(), slugify(text), first_line + token.map[0])
            )
        elif token.type == "inline" and token.map:
            _read_inline(token, locate, links, comments)
    return BodyStructure(tuple(links), tuple(comments), tuple(headings))


def _read_inline(token: Token, locate, links: list[Link], comments: list[Comment]) -> None:
    assert token.map is not None
    line_index = token.map[0]
    for child in token.children or []:
        if child.type in {"softbreak", "hardbreak"}:
            line_index += 1
        elif child.type == "wikilink":
            offset = child.meta["offset"]
            index = token.map[0] + token.content.count("\n", 0, offset)
            target, anchor, label = split_wikilink(child.content)
            raw = child.meta["raw"]
            links.append(Link("wikilink", target, locate(index, raw), label, anchor, raw))
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            if _is_page_link(href):
                path, _, anchor = href.partition("#")
                links.append(
                    Link("link", path, locate(line_index, f"]({href}"), None, anchor or None, href)
                )
        elif child.type == "html_inline":
            match = _COMMENT.fullmatch(child.content)
            if match:
                at = locate(line_index, child.content.split("\n", 1)[0])
                comments.append(Comment(match.group(1), child.content, at.line, at.column))
        elif child.type in {"text", "code_inline"}:
            line_index += child.content.count("\n")


def _is_page_link(href: str) -> bool:
    path = href.partition("#")[0].partition("?")[0]
    if not path or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
        return False  # in-page anchors and external URLs (http:, mailto:) are not wiki links
    return path.lower().endswith(".md")
