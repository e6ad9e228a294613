"""A page's Markdown as the site shows it: links resolved, citations marked, context added.

The body is edited only at the positions the compiler found (wikilinks, citation comments, the
destinations of Markdown links only Obsidian's reading resolves), so everything else, code
included, reaches MkDocs byte for byte. Added context (summary, tags,
banner, backlinks, sources, local graph) is plain HTML with final URLs, because MkDocs does not
rewrite links inside raw HTML.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from html import escape
from itertools import count
from urllib.parse import quote, unquote

from markupsafe import Markup

from groundwiki.core.links.anchors import anchor_id
from groundwiki.core.model.records import Citation, Link, Page
from groundwiki.core.model.scopes import user_of
from groundwiki.core.model.site_paths import GRAPH_JSON, TAGS_PAGE, SiteLayout
from groundwiki.core.read.markdown import slugify
from groundwiki.core.render.body.blocks import BlockPlace, block_places
from groundwiki.core.render.body.callouts import convert_callouts
from groundwiki.core.render.body.convert import MarkdownConverter
from groundwiki.core.render.body.embeds import (
    PageText,
    file_url,
    media_html,
    relocated_url,
    section_lines,
)
from groundwiki.core.render.body.hashes import escape_tag_hashes
from groundwiki.core.render.body.highlights import mark_highlights
from groundwiki.core.render.body.nesting import flatten_deep_lists
from groundwiki.core.render.body.slots import Rendered, Slots, fill_slots
from groundwiki.core.render.summaries import inline_summary
from groundwiki.core.render.templates import Templates, default_templates, slot_functions
from groundwiki.core.wiki.compiler import Wiki
from groundwiki.core.wiki.transclusion import MAX_EMBED_DEPTH, TransclusionBudget


@dataclass(frozen=True)
class RenderOptions:
    backlinks: bool = True
    sources: bool = True
    local_graph: bool = True
    raw_source_pages: bool = True
    # Markdown to HTML for transcluded notes; the plugin passes one with the site's extensions.
    markdown: MarkdownConverter = field(default_factory=MarkdownConverter, compare=False)
    # The footer's template; the plugin passes the site's, overrides in its theme's folders.
    templates: Templates = field(default_factory=default_templates, compare=False)


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class _Context:
    """What a render shares down into its transclusions."""

    wiki: Wiki
    layout: SiteLayout
    options: RenderOptions
    host: Page  # the page being built: every URL is relative to it
    # (page key, anchor) of the page and the embeds being rendered, outermost first
    embedding: tuple[tuple[str, str], ...]
    # What each page's body gives (lines, block ids, links by line), by the page's id, for this
    # render: a page embedding n sections of one note reads that note once, not n times.
    facts: dict[int, _PageFacts] = field(default_factory=dict, compare=False)
    # Numbers the transclusions of this render: their ids are prefixed to stay unique in it.
    serial: Iterator[int] = field(default_factory=lambda: count(1), compare=False)
    # What this render has transcluded, nested transclusions included: depth alone let seven
    # small pages make a 26 MB page.
    budget: TransclusionBudget = field(default_factory=TransclusionBudget, compare=False)

    def anchor(self, page: Page, anchor: str) -> str | None:
        """`anchor_id`, from the page's lookup table: a page of n links to n headings of one
        note searched its headings n times."""
        return self.facts_of(page).text.anchor(anchor)

    def facts_of(self, page: Page) -> _PageFacts:
        found = self.facts.get(id(page))
        if found is None or found.page is not page:
            found = self.facts[id(page)] = _PageFacts(page)
        return found


class _PageFacts:
    """A page's body as `_rewrite_body` reads it, sorted by line so that a span of it costs
    what the span holds, not what the page holds."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.text = PageText(page)

    @cached_property
    def places(self) -> list[BlockPlace]:
        text = self.text
        protected = text.protected if self.page.blocks else None
        return sorted(block_places(self.page, text.lines, protected), key=lambda p: p.line)

    @cached_property
    def _place_lines(self) -> list[int]:
        return [place.line for place in self.places]

    @cached_property
    def links(self) -> list[Link]:
        kept = [link for link in self.page.links if link.kind in {"link", "wikilink"}]
        return sorted(kept, key=lambda link: link.at.line)  # stable: a line keeps its order

    @cached_property
    def _link_lines(self) -> list[int]:
        return [link.at.line for link in self.links]

    @cached_property
    def comments(self) -> list[tuple[int, Citation]]:
        """Inline citation comments with their number on the page, by line."""
        numbered = enumerate((c for c in self.page.citations if c.origin == "inline"), start=1)
        return sorted(numbered, key=lambda item: item[1].at.line)

    @cached_property
    def _comment_lines(self) -> list[int]:
        return [citation.at.line for _, citation in self.comments]

    def places_in(self, first: int, last: int) -> list[BlockPlace]:
        """Block ids whose marker is on body lines [first, last)."""
        lines = self._place_lines
        return self.places[bisect_left(lines, first) : bisect_left(lines, last)]

    def links_in(self, first: int, last: int) -> list[Link]:
        """Links on file lines [first, last)."""
        lines = self._link_lines
        return self.links[bisect_left(lines, first) : bisect_left(lines, last)]

    def comments_in(self, first: int, last: int) -> list[tuple[int, Citation]]:
        lines = self._comment_lines
        return self.comments[bisect_left(lines, first) : bisect_left(lines, last)]


def render_page(
    wiki: Wiki,
    page: Page,
    layout: SiteLayout,
    backlinks: Mapping[str, tuple[str, ...]],
    options: RenderOptions = RenderOptions(),
) -> Rendered:
    slots = Slots()
    context = _Context(wiki, layout, options, page, ((page.key, ""),))
    body = _page_markdown(context, page, slots)
    header = "\n\n".join(
        part for part in (_scope_banner(wiki, page, layout), _header(wiki, page)) if part
    )
    chips = _chips(wiki, page, layout)
    placeholders: list[str] = []
    if header:
        placeholders.append(slots.put(header))
    if chips:
        placeholders.append(slots.put(chips, searchable=False))
    footer = _footer(wiki, page, layout, backlinks.get(page.key, ()), options, slots)
    markdown = _insert_after_title(body, "\n\n".join(placeholders)) + footer
    return Rendered(markdown, slots.html, slots.late)


# --- The body ---------------------------------------------------------------------------------


def _page_markdown(
    context: _Context, page: Page, slots: Slots, span: tuple[int, int] | None = None
) -> str:
    """The Markdown MkDocs gets for a page's body (or the lines `span` of it): positions the
    compiler found rewritten, then Obsidian's block syntax turned into MkDocs' own."""
    body = _rewrite_body(context, page, slots, span)
    return flatten_deep_lists(mark_highlights(convert_callouts(escape_tag_hashes(body))))


def _rewrite_body(context: _Context, page: Page, slots: Slots, span: tuple[int, int] | None) -> str:
    body = page.body
    facts = context.facts_of(page)
    starts, lines = facts.text.starts, facts.text.lines
    first, last = span or (0, len(lines))
    wiki, layout, options, host = context.wiki, context.layout, context.options, context.host

    def inline(html: str, line: int, *, block: bool = False) -> str:
        index = line - page.body_line
        return html if _in_heading(lines, index) else slots.put_inline(html, block=block)

    def offset(line: int, column: int) -> int | None:
        index = line - page.body_line
        if not first <= index < last:
            return None
        return starts[index] + column - 1

    edits: list[_Edit] = []
    # Block anchors first: one at the start of a line goes before a link that starts it.
    anchors = span is None  # a transcluded block keeps its id in its own page only
    for place in facts.places_in(first, last):
        edits.append(_Edit(starts[place.line] + place.start, starts[place.line] + place.end, ""))
        if anchors:
            kind = "gw-block-anchor gw-block-after" if place.after else "gw-block-anchor"
            html = f'<span class="{kind}" id="^{escape(place.id)}"></span>'
            anchor_at = starts[place.anchor_line] + place.anchor_column
            line = place.anchor_line + page.body_line
            edits.append(_Edit(anchor_at, anchor_at, inline(html, line, block=place.after)))
    for link in facts.links_in(first + page.body_line, last + page.body_line):
        if link.kind == "link":
            # MkDocs resolves a page's own Markdown links and `_transclusion` an embed's; those
            # only Obsidian finds (from the root, by name) get a path MkDocs reads the same way.
            at = offset(link.at.line, link.at.column)
            edit = None
            if at is not None:
                edit = _obsidian_link_edit(wiki, page, link, body, at, context.anchor)
            if edit is not None:
                edits.append(edit)
            continue
        if link.kind != "wikilink":
            continue
        at = offset(link.at.line, link.at.column)
        if at is not None and body.startswith(link.raw, at):
            if link.embed:
                heading = _in_heading(lines, link.at.line - page.body_line)
                html, block = _embed(context, page, link, in_heading=heading)
            else:
                html = _wikilink(wiki, page, link, layout, host, context.anchor)
                block = False
            edits.append(_Edit(at, at + len(link.raw), inline(html, link.at.line, block=block)))
    for number, citation in facts.comments_in(first + page.body_line, last + page.body_line):
        at = offset(citation.at.line, citation.at.column)
        end = body.find("-->", at) if at is not None else -1
        if at is None or end < 0:
            continue
        marker = _citation_marker(wiki, page, citation, number, layout, options, host)
        # A comment on its own line under a paragraph is a block of its own to Markdown: its
        # marker goes to the end of the paragraph's last line, where the reader sees the claim.
        claim_line = _claim_line(lines, citation.at.line - page.body_line, citation.at.column)
        if claim_line is not None:
            position = starts[claim_line] + len(lines[claim_line])
            edits.append(_Edit(position, position, inline(marker, claim_line + page.body_line)))
        else:
            edits.append(_Edit(end + 3, end + 3, inline(marker, citation.at.line)))
    # Built in one pass from pieces: splicing the body once per edit made a page with 100,000
    # links quadratic. At one position, edits go in the order they were made, which leaves
    # markers in reading order ([1][2], not [2][1]).
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[0]))
    pieces: list[str] = []
    cursor = starts[first] if first < len(starts) else len(body)
    for _, edit in ordered:
        pieces.append(body[cursor : edit.start])  # empty when edits touch
        pieces.append(edit.text)
        cursor = max(cursor, edit.end)
    stop = starts[last] - 1 if last < len(starts) else len(body)  # without the last newline
    pieces.append(body[cursor:stop])
    return "".join(pieces)


def _obsidian_link_edit(
    wiki: Wiki,
    page: Page,
    link: Link,
    body: str,
    at: int,
    anchors: Callable[[Page, str], str | None] = anchor_id,
) -> _Edit | None:
    """The destination of a Markdown link that only Obsidian's reading resolves, or that is
    written from the wiki's root (`/Notes/Note.md`, which MkDocs leaves as it is), rewritten as
    the path from `page` MkDocs needs (`[a](Note.md)` in `Sub/` to `../Notes/Note.md`)."""
    resolution = wiki.resolve(link, page)
    if resolution is None or (resolution.via == "path" and not link.target.startswith("/")):
        return None  # MkDocs finds it as written, or nobody does (lint says so)
    span = _link_destination(body, at)
    if span is None:
        return None  # a reference link, or a form this reading does not know: left as written
    start, end = span
    written = body[start:end]
    if unquote(written) != link.raw:
        return None  # not the destination the compiler read (escapes, entities): leave it
    target = wiki.pages[resolution.key]
    path = posixpath.relpath(target.doc_path, posixpath.dirname(page.doc_path) or ".")
    destination = quote(path)
    if link.anchor:
        # MkDocs keeps a fragment as written: the heading's or block's id, as `[[Note#H]]` gets.
        fragment = anchors(target, link.anchor)
        destination += "#" + (quote(fragment, safe="^") if fragment else written.partition("#")[2])
    return _Edit(start, end, destination)


def _link_destination(body: str, at: int) -> tuple[int, int] | None:
    """Where the destination of the inline link whose `[` is at `at` is written, without the
    angle brackets of `<...>`; None when no `](` closes the text (`[text][label]`)."""
    position = _closing_bracket(body, at)
    if position is None or not body.startswith("(", position + 1):
        return None
    position += 2
    while position < len(body) and body[position] in " \t":
        position += 1
    if body.startswith("\n", position):  # one line ending may come before the destination
        position += 1
        while position < len(body) and body[position] in " \t>":
            position += 1
    if body.startswith("<", position):
        end = body.find(">", position + 1)
        if end < 0 or "\n" in body[position + 1 : end]:
            return None
        return position + 1, end
    start, depth = position, 0
    while position < len(body):
        char = body[position]
        if char == "\\":
            position += 2
            continue
        if char.isspace():
            break
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        position += 1
    return (start, position) if position > start else None


def _closing_bracket(body: str, at: int) -> int | None:
    """The `]` that closes the `[` at `at`, skipping escaped and nested brackets."""
    if not body.startswith("[", at):
        return None
    depth, position = 0, at
    while position < len(body):
        char = body[position]
        if char == "\\":
            position += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return position
        position += 1
    return None


_ATX_HEADING = re.compile(r" {0,3}(?:> ?)*#{1,6}(?:[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def _in_heading(lines: list[str], index: int) -> bool:
    if not 0 <= index < len(lines):
        return True  # unknown position: inline HTML is always safe
    if _ATX_HEADING.match(lines[index]):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return bool(lines[index].strip()) and bool(_SETEXT_UNDERLINE.match(following))


def _claim_line(lines: list[str], index: int, column: int) -> int | None:
    """The text line a standalone citation comment belongs to: the nearest line above it that is
    neither blank nor another comment, when that line is prose."""
    if column != 1 and lines[index][: column - 1].strip():
        return None  # the comment stands inside a line of text: mark it in place
    above = index - 1
    while above >= 0 and (not lines[above].strip() or lines[above].strip().startswith("<!--")):
        above -= 1
    if above < 0:
        return None
    line = lines[above]
    if len(line) - len(line.lstrip()) >= 4:
        return None  # Python-Markdown may read it as indented code (or it is nested content)
    if line.lstrip().startswith(("```", "~~~", "#", "|", "<", "---", "***", "___")):
        return None  # not prose: fences, headings, tables, HTML and rules keep it in place
    return above


def _wikilink(
    wiki: Wiki,
    page: Page,
    link: Link,
    layout: SiteLayout,
    host: Page,
    anchors: Callable[[Page, str], str | None] = anchor_id,
) -> str:
    """A link of `page` as it shows in `host` (the same page, or one that embeds it)."""
    resolution = wiki.resolve(link, page)
    if resolution is None:
        return _broken(link.label or link.target, f"No page named '{link.target}'")
    target = wiki.pages[resolution.key]
    fragment = None
    if link.anchor:
        fragment = anchors(target, link.anchor)
        if fragment is None and not link.target:
            # `[[#Heading]]` with no such heading: a link to nowhere on the same page.
            return _broken(link.label or link.anchor, f"No heading '{link.anchor}' on this page")
    # `[[#^block]]` reads as the block's name; the caret is syntax.
    label = link.label or (
        link.anchor.lstrip("^") if link.anchor and not link.target else target.title
    )
    if target.key == host.key and not link.target:
        href = f"#{fragment}"
    else:
        href = layout.href(host.doc_path, layout.url(target.doc_path), fragment)
    # Finished HTML with the final URL rather than a Markdown link: Python-Markdown's link
    # processing is the costliest part of rendering a page, and lint has checked the target.
    return f'<a href="{escape(href)}">{escape(label)}</a>'


def _broken(label: str, why: str) -> str:
    tip = f"{why}: create it, or fix the link"
    return f'<span class="gw-broken" title="{escape(tip)}">{escape(label)}</span>'


def _embed(
    context: _Context, page: Page, link: Link, *, in_heading: bool = False
) -> tuple[str, bool]:
    """`![[...]]` of `page` as it shows in the host: the HTML, and whether it is a block. In a
    heading a note becomes a link to it: a heading holds no block, and its text is its id and
    its line in the table of contents."""
    wiki = context.wiki
    resolution = wiki.resolve(link, page)
    if resolution is not None:
        return _transclusion(context, page, link, wiki.pages[resolution.key], in_heading)
    attachment = wiki.attachment(link, page)
    name = posixpath.basename(attachment.path if attachment else link.target) or link.target
    if attachment is None:
        return _broken(link.target or "embed", f"No file or page named '{link.target}'"), False
    host = context.host
    if attachment.where == "docs":
        url = context.layout.href(host.doc_path, file_url(attachment))
        return media_html(link, url, name), False
    # A raw source is no file on the site: its page stands in for it, when there is one.
    if context.options.raw_source_pages and attachment.path in wiki.sources:
        href = context.layout.href(host.doc_path, context.layout.source_url(attachment.path))
        return f'<a class="gw-embed gw-embed-file" href="{escape(href)}">{escape(name)}</a>', False
    return media_html(link, None, name), False


def _transclusion(
    context: _Context, page: Page, link: Link, target: Page, in_heading: bool = False
) -> tuple[str, bool]:
    """The target's body, or the section or block the anchor names, in a box that links to it
    (a link alone in a heading), and whether that is a block: a broken section is inline, as a
    broken link is."""
    from groundwiki.core.render.generated import UNPUBLISHED  # generated.py imports this module

    anchor = (link.anchor or "").strip()
    fragment = context.facts_of(target).text.anchor(anchor) if anchor else None
    layout, host = context.layout, context.host
    href = layout.href(host.doc_path, layout.url(target.doc_path), fragment)
    name = target.title + (f" › {anchor.lstrip('^') if fragment else anchor}" if anchor else "")
    source = f'<a class="gw-transclusion-link" href="{escape(href)}">{escape(name)}</a>'
    embedding = (target.key, anchor.casefold())
    text = context.facts_of(target).text
    span = section_lines(target, anchor or None, text)
    if span is None:
        return _broken(link.label or f"{link.target}#{anchor}", f"No section '{anchor}'"), False
    if in_heading:
        return f'<a class="gw-embed gw-embed-note" href="{escape(href)}">{escape(name)}</a>', False
    if any(p.rule in UNPUBLISHED for p in target.problems):
        body = '<p class="gw-transclusion-note">This page is not published.</p>'
    elif embedding in context.embedding or len(context.embedding) > MAX_EMBED_DEPTH:
        # A embeds B embeds A: shown once, then a link.
        why = "embeds itself" if embedding in context.embedding else "is embedded too deep"
        body = f'<p class="gw-transclusion-note">Not shown here: it {why}.</p>'
    elif (capped := context.budget.take(_span_chars(text, span))) is not None:
        # Past the page's budget: a note, and the box's link to the note (lint reports it).
        note = "gw-transclusion-note gw-transclusion-capped"
        body = f'<p class="{note}">Not shown here: {escape(capped)}.</p>'
    else:
        inner = Slots()
        nested = replace(context, embedding=(*context.embedding, embedding))
        markdown = _page_markdown(nested, target, inner, span)
        # Written in the target's folder, read in the host's: Markdown links and images move.
        relink = partial(
            relocated_url, page_doc=target.doc_path, host_doc=host.doc_path, layout=layout
        )
        try:
            prefix = f"gw-t{next(context.serial)}-"
            converted = context.options.markdown.transclusion(markdown, relink, prefix)
            body = fill_slots(converted, inner.html)
        except Exception as exc:  # an extension's bug: this embed shows a link, the page builds
            body = f'<p class="gw-transclusion-note">Could not be shown: {escape(str(exc))}</p>'
    return (
        f'<div class="gw-transclusion"><div class="gw-transclusion-source">{source}</div>'
        f'<div class="gw-transclusion-body">{body}</div></div>'
    ), True


def _span_chars(text: PageText, span: tuple[int, int]) -> int:
    """The characters of the body lines `span` (as lint's `transclusion._Facts` counts them)."""
    start, end = span
    starts = text.starts
    stop = starts[end] if end < len(starts) else len(text.page.body) + 1
    return stop - starts[start] if start < len(starts) else 0


def _citation_marker(
    wiki: Wiki,
    page: Page,
    citation: Citation,
    number: int,
    layout: SiteLayout,
    opts: RenderOptions,
    host: Page,
) -> str:
    spec = f"{wiki.config.raw_prefix}/{citation.spec}"
    if citation.source not in wiki.sources or not opts.raw_source_pages:
        return f'<sup class="gw-cite" title="{escape(spec)}">[{number}]</sup>'
    href = layout.href(host.doc_path, layout.source_url(citation.source), _lines_fragment(citation))
    return (
        f'<sup class="gw-cite"><a href="{escape(href)}" title="{escape(spec)}">[{number}]</a></sup>'
    )


def _lines_fragment(citation: Citation) -> str | None:
    if citation.start is None:
        return None
    if citation.end is None or citation.end == citation.start:
        return f"L{citation.start}"
    return f"L{citation.start}-L{citation.end}"


# --- What the page shows around its body -------------------------------------------------------


def _header(wiki: Wiki, page: Page) -> str:
    """The banner and the summary: what the page says about itself, searchable."""
    parts: list[str] = []
    banner = _banner(wiki, page)
    if banner:
        parts.append(banner)
    if page.summary:
        from groundwiki.core.render.summaries import (
            summary_attributes,  # a derived summary says it is one
        )

        attributes = summary_attributes(page, "gw-summary")
        parts.append(f"<p{attributes}>{escape(page.summary)}</p>")
    return "\n\n".join(parts)


def _chips(wiki: Wiki, page: Page, layout: SiteLayout) -> str:
    """Tags and refs under the summary: navigation, kept out of site search."""
    parts: list[str] = []
    if page.tags:
        tags_url = layout.url(TAGS_PAGE)
        chips = " ".join(
            f'<a class="gw-tag" href="{escape(layout.href(page.doc_path, tags_url, tag_anchor(tag)))}">'
            f"{escape(tag)}</a>"
            for tag in page.tags
        )
        parts.append(f'<p class="gw-tags">{chips}</p>')
    if page.refs:
        parts.append(
            f'<p class="gw-refs">Builds on: {_page_list(wiki, page, page.refs, layout)}</p>'
        )
    return "\n\n".join(parts)


def tag_anchor(tag: str) -> str:
    return "tag-" + (slugify(tag) or "untitled")


def _page_list(wiki: Wiki, page: Page, links: tuple[Link, ...], layout: SiteLayout) -> str:
    items: list[str] = []
    for link in links:
        resolution = wiki.resolve(link, page)
        if resolution is None:
            tip = f"No page named '{link.target}'"
            items.append(
                f'<span class="gw-broken" title="{escape(tip)}">{escape(link.target)}</span>'
            )
            continue
        target = wiki.pages[resolution.key]
        href = layout.href(page.doc_path, layout.url(target.doc_path))
        items.append(f'<a href="{escape(href)}">{escape(target.title)}</a>')
    return ", ".join(items)


def _scope_banner(wiki: Wiki, page: Page, layout: SiteLayout) -> str:
    """On a user's page (published with `scopes: all`): whose it is, and the shared page it
    takes the place of in that user's view."""
    user = user_of(page.scope)
    if user is None:
        return ""
    text = f"A page of {escape(user)}'s own, not one of the shared pages."
    shared = wiki.shadowed(page)
    if shared is not None:
        href = layout.href(page.doc_path, layout.url(shared.doc_path))
        text += (
            f' For {escape(user)} it takes the place of the shared page <a href="{escape(href)}">'
            f"{escape(shared.title)}</a>."
        )
    return (
        '<div class="admonition info gw-scope"><p class="admonition-title">Personal page</p>'
        f"<p>{text}</p></div>"
    )


def _banner(wiki: Wiki, page: Page) -> str:
    drifted = [s for s in wiki.states_of(page) if s.status in {"drifted", "moved"}]
    lines: list[str] = []
    if page.archived_since:
        lines.append(f"Archived since {escape(page.archived_since)}: kept for the record only.")
    if page.stale_since:
        lines.append(f"Known to be out of date since {escape(page.stale_since)}.")
    if drifted:
        names = ", ".join(f"<code>{escape(s.name)}</code>" for s in drifted)
        lines.append(f"Evidence changed since this page was checked: {names}.")
    if not lines:
        return ""
    kind = "danger" if page.archived_since else "warning"
    title = "Archived" if page.archived_since else "Check before relying on this page"
    paragraphs = "".join(f"<p>{line}</p>" for line in lines)
    return (
        f'<div class="admonition {kind} gw-banner"><p class="admonition-title">{title}</p>'
        f"{paragraphs}</div>"
    )


@dataclass(frozen=True)
class _Backlink:
    href: str
    title: str
    summary: Markup  # HTML: a derived summary is marked


@dataclass(frozen=True)
class _Cited:
    spec: str  # as written after the raw-sources folder
    href: str | None  # the source's page, when the site has one
    whole_page: bool  # cited in the frontmatter, not at a place in the body


@dataclass(frozen=True)
class _LocalGraph:
    data: str
    root: str
    key: str


def _footer(
    wiki: Wiki,
    page: Page,
    layout: SiteLayout,
    backlinks: tuple[str, ...],
    options: RenderOptions,
    slots: Slots,
) -> str:
    linking: list[_Backlink] = []
    if options.backlinks:
        for key in backlinks:
            source = wiki.pages[key]
            to = layout.href(page.doc_path, layout.url(source.doc_path))
            linking.append(_Backlink(to, source.title, Markup(inline_summary(source))))
    cited: list[_Cited] = []
    href: str | None
    if options.sources:
        seen: set[str] = set()
        for citation in page.citations:
            spec = f"{wiki.config.raw_prefix}/{citation.spec}"
            if spec in seen:
                continue
            seen.add(spec)
            href = None
            if citation.source in wiki.sources and options.raw_source_pages:
                href = layout.href(
                    page.doc_path, layout.source_url(citation.source), _lines_fragment(citation)
                )
            cited.append(_Cited(spec, href, citation.origin == "frontmatter"))
    graph: _LocalGraph | None = None
    if options.local_graph:
        data = layout.href(page.doc_path, GRAPH_JSON)
        graph = _LocalGraph(data, layout.root_from(page.doc_path), page.key)
    footer = options.templates.render(
        "footer.html", backlinks=linking, sources=cited, graph=graph, **slot_functions(slots)
    ).strip("\n")
    return f"\n\n{footer}\n" if footer else ""


def _insert_after_title(body: str, header: str) -> str:
    """The header goes right under the page's `# ` title, or first when there is none."""
    if not header:
        return body
    lines = body.split("\n")
    fence = None
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fence = None if fence else stripped[:3]
            continue
        if fence is None and stripped.strip():
            if stripped.startswith("# "):
                return "\n".join([*lines[: index + 1], "", header, "", *lines[index + 1 :]])
            break
    return header + "\n\n" + body
