"""A page's body as the site shows it: the positions the compiler found rewritten (wikilinks to
finished links, embeds transcluded or shown as media, Markdown links only Obsidian resolves given
the path MkDocs reads, citation comments marked, block ids anchored), then Obsidian's block
syntax (callouts, highlights, deep lists, tag hashes) turned into MkDocs' own.

The body is edited only at those positions, so everything else, code included, reaches MkDocs
byte for byte. What is HTML goes into slots (`body.slots`), filled in after Markdown. The chrome
around the body (summary, tags, backlinks, sources) is `render.page`'s.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from html import escape
from itertools import count
from urllib.parse import quote, unquote

from groundwiki.core.links.anchors import anchor_id
from groundwiki.core.model.records import Citation, Link, Page
from groundwiki.core.model.site_paths import SiteLayout
from groundwiki.core.read.summary import link_text
from groundwiki.core.render.body.callouts import convert_callouts
from groundwiki.core.render.body.convert import MarkdownConverter
from groundwiki.core.render.body.embeds import file_url, media_html, relocated_url, section_lines
from groundwiki.core.render.body.facts import PageFacts, span_chars
from groundwiki.core.render.body.fences import separate_fences
from groundwiki.core.render.body.hashes import escape_tag_hashes
from groundwiki.core.render.body.highlights import mark_highlights
from groundwiki.core.render.body.nesting import flatten_deep_lists
from groundwiki.core.render.body.positions import claim_line, link_destination, within_heading
from groundwiki.core.render.body.slots import Slots, fill_slots
from groundwiki.core.render.generated import UNPUBLISHED
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.transclusion import MAX_EMBED_DEPTH, TransclusionBudget


def body_markdown(
    wiki: Wiki,
    page: Page,
    layout: SiteLayout,
    slots: Slots,
    *,
    raw_source_pages: bool,
    markdown: MarkdownConverter,
) -> str:
    """The Markdown MkDocs gets for `page`'s body, its HTML put in `slots`; every URL is
    relative to the page. `raw_source_pages`: a citation links to its source's page;
    `markdown` converts what a note embed transcludes."""
    context = _Context(wiki, layout, page, ((page.key, ""),), raw_source_pages, markdown)
    return _markdown(context, page, slots)


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
    host: Page  # the page being built: every URL is relative to it
    # (page key, anchor) of the page and the embeds being rendered, outermost first
    embedding: tuple[tuple[str, str], ...]
    raw_source_pages: bool  # a citation links to its source's page
    # Markdown to HTML for transcluded notes; the plugin passes one with the site's extensions.
    markdown: MarkdownConverter
    # What each page's body gives (lines, block ids, links by line), by the page's id, for this
    # render: a page embedding n sections of one note reads that note once, not n times.
    facts: dict[int, PageFacts] = field(default_factory=dict, compare=False)
    # Numbers the transclusions of this render: their ids are prefixed to stay unique in it.
    serial: Iterator[int] = field(default_factory=lambda: count(1), compare=False)
    # What this render has transcluded, nested transclusions included: depth alone let seven
    # small pages make a 26 MB page.
    budget: TransclusionBudget = field(default_factory=TransclusionBudget, compare=False)

    def anchor(self, page: Page, anchor: str) -> str | None:
        """`anchor_id`, from the page's lookup table: a page of n links to n headings of one
        note searched its headings n times."""
        return self.facts_of(page).text.anchor(anchor)

    def facts_of(self, page: Page) -> PageFacts:
        found = self.facts.get(id(page))
        if found is None or found.page is not page:
            found = self.facts[id(page)] = PageFacts(page)
        return found


def _markdown(
    context: _Context, page: Page, slots: Slots, span: tuple[int, int] | None = None
) -> str:
    """The Markdown MkDocs gets for a page's body (or the lines `span` of it): positions the
    compiler found rewritten, then Obsidian's block syntax turned into MkDocs' own."""
    body = _rewrite_body(context, page, slots, span)
    separated = separate_fences(escape_tag_hashes(body))
    return flatten_deep_lists(mark_highlights(convert_callouts(separated)))


def _rewrite_body(context: _Context, page: Page, slots: Slots, span: tuple[int, int] | None) -> str:
    body = page.body
    facts = context.facts_of(page)
    starts, lines = facts.text.starts, facts.text.lines
    first, last = span or (0, len(lines))
    wiki, layout, host = context.wiki, context.layout, context.host

    def inline(html: str, line: int, *, block: bool = False) -> str:
        index = line - page.body_line
        return html if within_heading(lines, index) else slots.put_inline(html, block=block)

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
                heading = within_heading(lines, link.at.line - page.body_line)
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
        marker = _citation_marker(wiki, citation, number, layout, context.raw_source_pages, host)
        # A comment on its own line under a paragraph is a block of its own to Markdown: its
        # marker goes to the end of the paragraph's last line, where the reader sees the claim.
        claimed = claim_line(lines, citation.at.line - page.body_line, citation.at.column)
        if claimed is not None:
            position = starts[claimed] + len(lines[claimed])
            edits.append(_Edit(position, position, inline(marker, claimed + page.body_line)))
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
    span = link_destination(body, at)
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
    # The text as written, as Obsidian shows it (`[[Note#Part]]` reads `Note > Part`,
    # `[[#^block]]` the block's name: the caret is syntax), not the target's title.
    label = link.label or link_text(link.target, link.anchor) or target.title
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
    if context.raw_source_pages and attachment.path in wiki.sources:
        href = context.layout.href(host.doc_path, context.layout.source_url(attachment.path))
        return f'<a class="gw-embed gw-embed-file" href="{escape(href)}">{escape(name)}</a>', False
    return media_html(link, None, name), False


def _transclusion(
    context: _Context, page: Page, link: Link, target: Page, in_heading: bool = False
) -> tuple[str, bool]:
    """The target's body, or the section or block the anchor names, in a box that links to it
    (a link alone in a heading), and whether that is a block: a broken section is inline, as a
    broken link is."""
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
    elif (capped := context.budget.take(span_chars(text, span))) is not None:
        # Past the page's budget: a note, and the box's link to the note (lint reports it).
        note = "gw-transclusion-note gw-transclusion-capped"
        body = f'<p class="{note}">Not shown here: {escape(capped)}.</p>'
    else:
        inner = Slots()
        nested = replace(context, embedding=(*context.embedding, embedding))
        markdown = _markdown(nested, target, inner, span)
        # Written in the target's folder, read in the host's: Markdown links and images move.
        relink = partial(
            relocated_url, page_doc=target.doc_path, host_doc=host.doc_path, layout=layout
        )
        try:
            prefix = f"gw-t{next(context.serial)}-"
            converted = context.markdown.transclusion(markdown, relink, prefix)
            body = fill_slots(converted, inner.html)
        except Exception as exc:  # an extension's bug: this embed shows a link, the page builds
            body = f'<p class="gw-transclusion-note">Could not be shown: {escape(str(exc))}</p>'
    return (
        f'<div class="gw-transclusion"><div class="gw-transclusion-source">{source}</div>'
        f'<div class="gw-transclusion-body">{body}</div></div>'
    ), True


def _citation_marker(
    wiki: Wiki,
    citation: Citation,
    number: int,
    layout: SiteLayout,
    raw_source_pages: bool,
    host: Page,
) -> str:
    spec = f"{wiki.config.raw_prefix}/{citation.spec}"
    if citation.source not in wiki.sources or not raw_source_pages:
        return f'<sup class="gw-cite" title="{escape(spec)}">[{number}]</sup>'
    href = layout.href(host.doc_path, layout.source_url(citation.source), lines_fragment(citation))
    return (
        f'<sup class="gw-cite"><a href="{escape(href)}" title="{escape(spec)}">[{number}]</a></sup>'
    )


def lines_fragment(citation: Citation) -> str | None:
    if citation.start is None:
        return None
    if citation.end is None or citation.end == citation.start:
        return f"L{citation.start}"
    return f"L{citation.start}-L{citation.end}"
