"""A page's Markdown as the site shows it: its body (`render.page_body`) with the chrome around
it: the scope banner, the drift banner and the summary under the title, the tags and refs, and
the footer (backlinks, sources, local graph) from its template. The chrome is plain HTML with
final URLs, put in slots, because MkDocs does not rewrite links inside raw HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape

from markupsafe import Markup

from groundwiki.core.model.records import Link, Page
from groundwiki.core.model.scopes import user_of
from groundwiki.core.model.site_paths import TAGS_PAGE, SiteLayout, local_graph_file
from groundwiki.core.render.body.convert import MarkdownConverter
from groundwiki.core.render.body.slots import Rendered, Slots
from groundwiki.core.render.generated import tag_anchor
from groundwiki.core.render.page_body import body_markdown, lines_fragment
from groundwiki.core.render.summaries import inline_summary, shown_summary, summary_attributes
from groundwiki.core.render.templates import Templates, default_templates, slot_functions
from groundwiki.core.wiki.compiled import Wiki


@dataclass(frozen=True)
class RenderOptions:
    """What the site shows of each page besides its body, and how it converts Markdown."""

    backlinks: bool = True
    sources: bool = True
    local_graph: bool = True
    raw_source_pages: bool = True
    # A derived summary (the body's first sentence) shown under the title and in backlinks.
    derived_summaries: bool = False
    # Markdown to HTML for transcluded notes; the plugin passes one with the site's extensions.
    markdown: MarkdownConverter = field(default_factory=MarkdownConverter, compare=False)
    # The footer's template; the plugin passes the site's, overrides in its theme's folders.
    templates: Templates = field(default_factory=default_templates, compare=False)


def render_page(
    wiki: Wiki,
    page: Page,
    layout: SiteLayout,
    backlinks: Mapping[str, tuple[str, ...]],
    options: RenderOptions = RenderOptions(),
) -> Rendered:
    """`page`'s Markdown for MkDocs, with the HTML of its slots: the body, the header and the
    chips under its title, the footer after it; `backlinks` by page key."""
    slots = Slots()
    body = body_markdown(
        wiki,
        page,
        layout,
        slots,
        raw_source_pages=options.raw_source_pages,
        markdown=options.markdown,
    )
    header = "\n\n".join(
        part for part in (_scope_banner(wiki, page, layout), _header(wiki, page, options)) if part
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


def _header(wiki: Wiki, page: Page, options: RenderOptions) -> str:
    """The banner and the summary: what the page says about itself, searchable."""
    parts: list[str] = []
    banner = _banner(wiki, page)
    if banner:
        parts.append(banner)
    summary = shown_summary(page, options.derived_summaries)
    if summary:
        attributes = summary_attributes(page, "gw-summary")  # a derived summary says it is one
        parts.append(f"<p{attributes}>{escape(summary)}</p>")
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
    shared = wiki.scopes.shadowed(page)
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
            linking.append(
                _Backlink(
                    to, source.title, Markup(inline_summary(source, options.derived_summaries))
                )
            )
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
                    page.doc_path, layout.source_url(citation.source), lines_fragment(citation)
                )
            cited.append(_Cited(spec, href, citation.origin == "frontmatter"))
    graph: _LocalGraph | None = None
    if options.local_graph:
        data = layout.href(page.doc_path, local_graph_file(page.key))
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
