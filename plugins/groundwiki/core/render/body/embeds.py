"""Obsidian embeds, `![[...]]`: files shown as media, and what a note embed transcludes.

A file embed becomes the element a browser shows it with (image, audio, video, a PDF viewer) or
a link for any other file; `|400` and `|400x300` size it. A note embed shows the target's body,
or one heading's section, or one block: `section_lines` says which lines of the body that is;
the renderer renders them (see render/page_body.py, which guards against cycles).

File names and labels are the writers' text: every one is escaped here.
"""

from __future__ import annotations

import posixpath
import re
from functools import cached_property
from html import escape
from urllib.parse import quote, unquote, urlsplit

from groundwiki.core.links.anchors import Anchors
from groundwiki.core.model.records import Attachment, Link, Page
from groundwiki.core.model.site_paths import SiteLayout, relative_url
from groundwiki.core.render.body.code import protected_lines

IMAGE = frozenset({"png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif"})
AUDIO = frozenset({"mp3", "wav", "m4a", "ogg", "flac", "3gp"})
VIDEO = frozenset({"mp4", "webm", "ogv", "mov", "mkv"})
PDF = frozenset({"pdf"})

_SIZE = re.compile(r"^(\d{1,5})(?:x(\d{1,5}))?$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+]|\d+[.)])[ \t]")
_HEADING = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)*#{1,6}(?:[ \t]|$)")


def file_url(attachment: Attachment) -> str:
    """The URL of a file MkDocs publishes at its doc path, from the site root (as MkDocs quotes
    it)."""
    return quote(attachment.path)


def kind_of(path: str) -> str:
    extension = posixpath.splitext(path)[1].lstrip(".").lower()
    for kind, extensions in (("image", IMAGE), ("audio", AUDIO), ("video", VIDEO), ("pdf", PDF)):
        if extension in extensions:
            return kind
    return "file"


def size_and_alt(link: Link) -> tuple[str, str | None]:
    """`![[a.png|alt|400x300]]`: the size attributes and the alt text, from the label."""
    parts = [part.strip() for part in (link.label or "").split("|")]
    size = ""
    if parts and (match := _SIZE.match(parts[-1])):
        parts.pop()
        size = f' width="{match[1]}"' + (f' height="{match[2]}"' if match[2] else "")
    alt = "|".join(part for part in parts if part) or None
    return size, alt


def media_html(link: Link, url: str | None, name: str) -> str:
    """The element that shows a file: `url` is relative to the page, None when the file is not
    published (then its name is shown)."""
    size, alt = size_and_alt(link)
    label = escape(alt or name)
    if url is None:
        return f'<span class="gw-embed gw-embed-file">{label}</span>'
    kind = kind_of(name)
    href = escape(url)
    if kind == "image":
        return f'<img class="gw-embed gw-embed-image" src="{href}" alt="{label}"{size}>'
    if kind == "audio":
        return f'<audio class="gw-embed gw-embed-audio" controls src="{href}"{size}></audio>'
    if kind == "video":
        return f'<video class="gw-embed gw-embed-video" controls src="{href}"{size}></video>'
    if kind == "pdf":
        # `#page=3` from `![[a.pdf#page=3]]` is the viewer's; the fallback is a plain link.
        viewer = escape(url + (f"#{quote(link.anchor, safe='=&')}" if link.anchor else ""))
        return (
            f'<object class="gw-embed gw-embed-pdf" data="{viewer}" type="application/pdf"{size}>'
            f'<a href="{href}">{label}</a></object>'
        )
    return f'<a class="gw-embed gw-embed-file" href="{href}">{label}</a>'


def relocated_url(url: str, page_doc: str, host_doc: str, layout: SiteLayout) -> str:
    """A Markdown link or image URL written in the page `page_doc`, as the page built from
    `host_doc` that transcludes it must write it to land on the same place.

    A path with an extension is a file next to the writer's file, as MkDocs reads it: a `.md`
    file becomes its page's URL. MkDocs leaves a path without one as written, for the browser to
    read from the page's URL, so it is read from there. An `#anchor` alone is a place in the
    embedded page, whose headings have no ids in the host: it goes to that page's URL. URLs with
    a scheme or a host and absolute paths are the same from every page."""
    parts = urlsplit(url)
    if url.startswith("#") and parts.fragment and host_doc != page_doc:
        return quote(relative_url(layout.url(host_doc), layout.url(page_doc))) + url
    if parts.scheme or parts.netloc or url.startswith(("/", "\\")) or not parts.path:
        return url
    path = unquote(parts.path)
    if posixpath.splitext(path)[1]:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page_doc), path))
        if target.lower().endswith(".md"):
            target = layout.url(target)
    else:
        base = layout.url(page_doc)
        folder = base if base.endswith("/") or not base else posixpath.dirname(base)
        target = posixpath.normpath(posixpath.join(folder, path))
        target += "/" if path.endswith("/") and target != "." else ""
        target = "" if target in {".", "./"} else target
    if target == ".." or target.startswith("../"):
        return url  # above the site: the link was broken where it was written, and stays so
    link = quote(relative_url(layout.url(host_doc), target))
    return (
        link
        + (f"?{parts.query}" if parts.query else "")
        + (f"#{parts.fragment}" if parts.fragment else "")
    )


class PageText:
    """What the renderer reads off a page's body, worked out once per render however often the
    page is embedded: a page of 3,000 section embeds of one note redid all of it per embed."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.lines = page.body.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    @cached_property
    def protected(self) -> list[bool]:
        return protected_lines(self.lines)

    @cached_property
    def anchors(self) -> Anchors:
        return Anchors(self.page)

    @property
    def blocks_by_id(self) -> dict[str, int]:
        return self.anchors.blocks_by_id

    def anchor(self, anchor: str) -> str | None:
        """`anchor_id(page, anchor)`, from the page's lookup tables."""
        return self.anchors.find(anchor)

    @cached_property
    def heading_index_by_slug(self) -> dict[str, int]:
        # The first heading with a slug wins, as a search in order would find it.
        found: dict[str, int] = {}
        for index, heading in enumerate(self.page.headings):
            found.setdefault(heading.slug, index)
        return found


def section_lines(
    page: Page, anchor: str | None, text: PageText | None = None
) -> tuple[int, int] | None:
    """The body lines (start, end) index range an embed of `page#anchor` shows: the whole body,
    a heading's section down to the next heading of its level or higher, or one block (its
    paragraph or list item; a marker alone under a table or list names the block above it).
    None when the page has no such heading or block. `text` is the page's `PageText`, when the
    caller keeps one."""
    text = text or PageText(page)
    lines = text.lines
    if not anchor:
        return 0, len(lines)
    target = text.anchor(anchor)
    if target is None:
        return None
    if anchor.strip().startswith("^"):
        block = page.blocks[text.blocks_by_id[target[1:].casefold()]]
        return _block_lines(lines, block.line - page.body_line, text)
    headings = page.headings
    at = text.heading_index_by_slug[target]
    heading = headings[at]
    start = heading.line - page.body_line
    end = len(lines)
    for other in headings[at + 1 :]:
        if other.line > heading.line and other.level <= heading.level:
            end = other.line - page.body_line
            break
    return max(start, 0), end


def _block_lines(lines: list[str], index: int, text: PageText) -> tuple[int, int] | None:
    if not 0 <= index < len(lines):
        return None
    protected = text.protected
    alone = lines[index].strip(" \t>").startswith("^")
    if not alone or (index > 0 and continues_text(lines[index - 1], protected[index - 1])):
        return block_start(lines, index - 1 if alone else index), index + 1
    end = index  # the marker names the block above it
    index -= 1
    while index >= 0 and not lines[index].strip():
        index -= 1
    if index < 0:
        return None
    if protected[index]:  # fenced code or a formula: up to its opening line
        while index > 0 and protected[index - 1]:
            index -= 1
        return index, end
    while index > 0 and lines[index - 1].strip() and not protected[index - 1]:
        index -= 1
    return index, end


def continues_text(line: str, protected: bool) -> bool:
    """Whether a line is paragraph text that a line under it continues (not code, a heading, a
    table row or HTML: a block id alone under those names them)."""
    stripped = line.strip(" \t>")
    return bool(stripped) and not protected and not _HEADING.match(line) and stripped[0] not in "|<"


def block_start(lines: list[str], index: int) -> int:
    """The first line of the paragraph or list item that line `index` ends."""
    while (
        index > 0
        and lines[index - 1].strip()
        and not _LIST_ITEM.match(lines[index])
        and not _HEADING.match(lines[index - 1])
        and not lines[index - 1].lstrip(" \t>").startswith(("```", "~~~", "|"))
    ):
        index -= 1
    return index
