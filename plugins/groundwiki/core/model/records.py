"""The in-memory model of a compiled wiki: pages, raw sources, chunks, passages, citations and
links."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from groundwiki.core.model.scopes import scoped_name

LinkKind = Literal["wikilink", "link", "ref"]
UsageMode = Literal["always", "auto", "never"]


@dataclass(frozen=True)
class Location:
    """A place in a file, 1-based line and column, as compilers print them."""

    path: str
    line: int = 1
    column: int = 1


@dataclass(frozen=True)
class Link:
    """An outgoing link as written: `[[target#anchor|label]]`, a Markdown link, or a `refs` entry."""

    kind: LinkKind
    target: str
    at: Location
    label: str | None = None
    anchor: str | None = None  # after the first `#`: a heading, a chain `H1#H2`, or `^block-id`
    raw: str = ""
    embed: bool = False  # `![[...]]`: shown in place (media, or a note or section transcluded)


@dataclass(frozen=True)
class Citation:
    """A provenance citation: a raw-source path, optionally narrowed to a line range."""

    source: str  # path relative to the raw-sources folder, forward slashes
    at: Location
    start: int | None = None
    end: int | None = None
    origin: Literal["inline", "frontmatter"] = "inline"
    raw: str = ""

    @property
    def is_range(self) -> bool:
        return self.start is not None

    @property
    def spec(self) -> str:
        """The citation as written after `raw-sources/`, e.g. `notes.md#L3-L9`."""
        if self.start is None:
            return self.source
        if self.end in (None, self.start):
            return f"{self.source}#L{self.start}"
        return f"{self.source}#L{self.start}-L{self.end}"


@dataclass(frozen=True)
class Problem:
    """Something wrong in a page file, found while reading it; lint reports it under `rule`."""

    rule: str  # e.g. invalid-frontmatter, schema-violation, invalid-citation, source-outside-raw
    at: Location
    message: str
    hint: str
    detail: str  # what identifies it when lines move (for the lint baseline)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # as a reader sees it
    slug: str  # the HTML id MkDocs' `toc` gives it, unique in the page (`name_1` on a repeat)
    line: int
    source: str = ""  # as written, Markdown included: Obsidian links may quote it so


@dataclass(frozen=True)
class Block:
    """An Obsidian block id: `^id` closing a paragraph, list item or quote; `[[page#^id]]`."""

    id: str
    line: int  # the file line the marker is on


@dataclass(frozen=True)
class BodyMap:
    """Where a body's blocks and comments are, as the compile's parse found them: the page's
    lead reads its prose from this rather than parsing the body a second time. Lines are the
    body's, 0-based."""

    block_starts: tuple[int, ...]  # where each top-level block starts
    code_and_headings: tuple[tuple[int, int], ...]  # [first, end) lines of fences and headings
    comments: tuple[int, ...]  # offset in the body of each `<!--` read as a comment
    # False when four spaces of indentation make code somewhere for the site's renderer (the
    # compile reads them as prose): then these blocks are not the site's.
    site_blocks: bool


@dataclass(frozen=True)
class Page:
    key: str
    path: Path  # absolute
    rel_path: str  # relative to the wiki root, as printed in findings
    doc_path: str  # relative to docs_dir, as MkDocs names the file
    title: str
    summary: str | None
    tags: tuple[str, ...]
    refs: tuple[Link, ...]
    aliases: tuple[str, ...]
    usage_mode: UsageMode
    kind: str
    stale_since: str | None
    archived_since: str | None
    extra: dict[str, Any]
    body: str
    body_line: int  # file line on which the body starts (1-based)
    links: tuple[Link, ...]  # wikilinks and Markdown links found in the body
    citations: tuple[Citation, ...]  # frontmatter `sources` first, then inline comments
    headings: tuple[Heading, ...]
    problems: tuple[Problem, ...]  # frontmatter first, then citations, in file order
    content_hash: str
    field_lines: dict[str, int] = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    summary_derived: bool = False  # the summary is the body's first sentence, not the writer's
    body_map: BodyMap | None = None  # None: the body was not parsed (an unreadable page)
    scope: str = "global"  # or `user:<id>` for a page under user/<id>/ (see scopes.py)

    @property
    def outgoing(self) -> tuple[Link, ...]:
        return self.refs + self.links

    @property
    def uid(self) -> str:
        """The page's name across scopes, as the lock and the sidecar's indexes record it: its
        key for a shared page, `user:<id>/<key>` for a user's (which may share its key with the
        shared page it shadows)."""
        return scoped_name(self.scope, self.key)


def is_unpublished(page: Page) -> bool:
    """Whether the writer keeps this note out of the published wiki: `publish: false` in its
    frontmatter, as Obsidian Publish reads it (a quoted "false" too)."""
    flag = page.extra.get("publish", True)
    return flag is False or (isinstance(flag, str) and flag.strip().lower() in ("false", "no"))


@dataclass(frozen=True)
class Chunk:
    id: str
    source: str  # path relative to the raw-sources folder
    start_line: int
    end_line: int
    text: str
    content_hash: str
    tokens: int
    # What the characters say (core/sources/hygiene.py): junk is cut but not indexed. The shares
    # are measured only in a text that can be binary or encoded (`may_hold_junk`), else None.
    entropy: float = 0.0  # bits per character
    words: int = 0
    letters: float | None = None  # share of visible characters that are letters
    encoded: float | None = None  # share of visible characters in base64- or hex-like runs
    controls: float | None = None  # share of visible characters that are control characters
    cut_as: str = ""  # "encoded" or "binary": the chunker packed it from junk units only

    def to_json(self) -> dict[str, Any]:
        """The chunk as the sidecar serves it: verbatim text, where it is, and its hash (the
        token count is the chunker's business)."""
        return {
            "id": self.id,
            "source": self.source,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "content_hash": self.content_hash,
            "text": self.text,
        }


@dataclass(frozen=True)
class Passage:
    """A piece of a page's body, cut by the same chunker as raw sources: what a search matches
    inside a long page and shows as a hit's snippet. Lines are the page file's, so an editor
    (or `sed -n`) shows the passage at them."""

    id: str  # pa_<16 hex>: the chunk policy, the page file's path and the text, hashed
    page: str  # the page's key
    path: str  # the page file, relative to the wiki root
    heading_path: tuple[str, ...]  # the texts of the headings it sits under, outermost first
    start_line: int  # 1-based, in the page file (frontmatter included)
    end_line: int
    text: str  # verbatim, as in the page's body
    content_hash: str
    tokens: int

    def to_json(self) -> dict[str, Any]:
        """The passage as the sidecar serves it: verbatim text, where it is, and its hash."""
        return {
            "id": self.id,
            "page": self.page,
            "path": self.path,
            "heading_path": list(self.heading_path),
            "start_line": self.start_line,
            "end_line": self.end_line,
            "content_hash": self.content_hash,
            "text": self.text,
        }


# Between an archive's path and a member's in a source's path: `bundle.zip!/notes/a.md`.
MEMBER_SEPARATOR = "!/"


@dataclass(frozen=True)
class Source:
    """A raw source file, or a member of an archive, and what could be extracted from it."""

    path: str  # relative to the raw-sources folder, forward slashes
    abs_path: Path  # the file on disk; for an archive's member, the archive
    format: str
    text: str | None  # extracted text; None when unreadable
    content_hash: str | None
    heading_lines: frozenset[int] = frozenset()  # lines that open a section, for chunking
    problem: str | None = None  # why it could not be read, for `unreadable-source`
    hint: str | None = None  # how to make it readable

    @cached_property
    def lines(self) -> list[str]:
        """The text's lines as an editor numbers them: a final newline ends a line, not starts one."""
        lines = (self.text or "").split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        return lines

    @property
    def line_count(self) -> int:
        return len(self.lines) if self.text is not None else 0

    @property
    def in_archive(self) -> bool:
        """Whether it is an archive's member: its lines are not the lines of `abs_path`."""
        return MEMBER_SEPARATOR in self.path


@dataclass(frozen=True)
class Pointer:
    """A chunk that a page's provenance points at, with how much of the citation it covers."""

    chunk_id: str
    source: str  # as its chunk's: relative to the raw-sources folder
    start_line: int
    end_line: int
    weight: float
    content_hash: str

    def to_json(self) -> dict[str, Any]:
        """The one shape of a pointer, in pages.json and in the sidecar's answers alike: its
        fields are the chunk's own (`source`, `start_line`, `end_line`), so a pointer reads
        like the chunk it leads to."""
        return {
            "chunk_id": self.chunk_id,
            "source": self.source,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "weight": round(self.weight, 6),
            "content_hash": self.content_hash,
        }


@dataclass(frozen=True)
class Resolution:
    """Where a link landed: the page key, and whether it went through an alias or a title."""

    key: str
    via: Literal["key", "alias", "title", "path", "name"]
    # Other pages the same name fits, when Obsidian would have to pick one (`[[Note]]` with a
    # `Note.md` in two folders): lint names them.
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attachment:
    """A file that is not a page, that a link or embed lands on (`![[diagram.png]]`)."""

    path: str  # relative to its folder, forward slashes
    where: Literal["docs", "raw"]  # under docs_dir (published as is) or under raw-sources
