"""The pages groundwiki adds to a site: the graph, the lint report, tags and an A–Z index."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from html import escape

from markupsafe import Markup

from groundwiki.core.lint.findings import SEVERITY_ORDER, LintReport
from groundwiki.core.model.records import Page
from groundwiki.core.model.site_paths import (
    GRAPH_JSON,
    GRAPH_PAGE,
    INDEX_PAGE,
    LINT_PAGE,
    TAGS_PAGE,
    SiteLayout,
)
from groundwiki.core.read.markdown import slugify
from groundwiki.core.render.body.slots import Rendered, Slots
from groundwiki.core.render.summaries import inline_summary, shown_summary, summary_attributes
from groundwiki.core.render.templates import Templates, default_templates, slot_functions
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.dependencies import same_facts


def _href(layout: SiteLayout, from_doc: str, to_doc: str) -> str:
    return layout.href(from_doc, layout.url(to_doc))


def _link(
    layout: SiteLayout, from_doc: str, to_doc: str, text: str, fragment: str | None = None
) -> str:
    href = layout.href(from_doc, layout.url(to_doc), fragment)
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def graph_page(layout: SiteLayout, templates: Templates | None = None) -> str:
    return (templates or default_templates()).render(
        "graph.html",
        graph=layout.href(GRAPH_PAGE, GRAPH_JSON),
        root=layout.root_from(GRAPH_PAGE),
    )


@dataclass(frozen=True)
class _Finding:
    severity: str
    where: str  # path:line:column
    href: str | None  # the page's URL, when the finding is on a page
    message: Markup
    hint: Markup


@dataclass(frozen=True)
class _RuleGroup:
    rule: str
    findings: list[_Finding]


@dataclass(frozen=True)
class _PageRow:
    path: str
    href: str | None
    text: str


def lint_page(
    wiki: Wiki, report: LintReport, layout: SiteLayout, templates: Templates | None = None
) -> str:
    counts = report.counts
    rows = [(severity, counts[severity]) for severity in SEVERITY_ORDER]
    rows.append(("silenced by the baseline", report.baselined))
    # Every scope's pages: the report given is the one the site may show (a site of the shared
    # scope gets none on a user's page), and a finding on a published page links to it.
    by_path = {page.rel_path: page for page in wiki.scopes.every_page}

    def href(path: str) -> str | None:
        page = by_path.get(path)
        return _href(layout, LINT_PAGE, page.doc_path) if page else None

    by_rule: dict[str, list[_Finding]] = defaultdict(list)
    per_path: dict[str, list[str]] = defaultdict(list)
    for f in report.findings:
        by_rule[f.rule].append(
            _Finding(
                f.severity,
                f"{f.path}:{f.line}:{f.column}",
                href(f.path),
                Markup(quoted_as_code(f.message)),
                Markup(quoted_as_code(f.hint)),
            )
        )
        per_path[f.path].append(f"{f.severity} {f.rule} (line {f.line})")
    return (templates or default_templates()).render(
        "lint.html",
        counts=rows,
        rules=[_RuleGroup(rule, by_rule[rule]) for rule in sorted(by_rule)],
        pages=[_PageRow(path, href(path), "; ".join(per_path[path])) for path in sorted(per_path)],
    )


@dataclass(frozen=True)
class _Listed:
    """A page in a listing: the tags page's, the A–Z index's."""

    href: str
    title: str
    summary: str | Markup  # text, or HTML (the tags page marks a derived summary inline)
    attributes: Markup  # the summary's class and title (the A–Z index's `<dd>`)


def _listed(page: Page, layout: SiteLayout, from_doc: str, inline: bool, derived: bool) -> _Listed:
    """`derived`: a derived summary is listed (marked), not left out."""
    shown = shown_summary(page, derived)
    summary = Markup(inline_summary(page, derived)) if inline else shown or ""
    attributes = Markup("" if inline or not shown else summary_attributes(page))
    return _Listed(_href(layout, from_doc, page.doc_path), page.title, summary, attributes)


@dataclass(frozen=True)
class _Group:
    """A tag with its pages, or a letter with its pages."""

    name: str
    anchor: str
    pages: list[_Listed]

    @property
    def letter(self) -> str:
        return self.name


def tag_anchor(tag: str) -> str:
    """The id of a tag's heading on the tags page, which each page's tag chips link to."""
    return "tag-" + (slugify(tag) or "untitled")


def listing_facts(page: Page) -> tuple[object, ...]:
    """What the A–Z index and the tags page show of a page."""
    return (page.key, page.doc_path, page.title, page.summary, page.summary_derived, page.tags)


@dataclass
class Listings:
    """The A–Z index and the tags page of a long-running build's last build, with the pages
    they listed: a rebuild after an edit that changed no page's listing facts (a body edit, a
    new link) reuses them instead of listing every page again."""

    layout: SiteLayout | None = None
    templates: tuple[object, ...] | None = None  # `Templates.signature()`
    derived: bool = False  # whether they listed derived summaries
    pages: dict[str, Page] = field(default_factory=dict)
    made: dict[str, Rendered] = field(default_factory=dict)

    def of(
        self, wiki: Wiki, layout: SiteLayout, templates: Templates, derived: bool = False
    ) -> dict[str, Rendered]:
        """`derived`: derived summaries are listed (`show_derived_summaries`)."""
        signature = templates.signature()
        if not self._same(wiki, layout, signature, derived):
            self.made = {
                INDEX_PAGE: index_page(wiki, layout, templates, derived),
                TAGS_PAGE: tags_page(wiki, layout, templates, derived),
            }
        self.layout, self.templates, self.pages = layout, signature, dict(wiki.pages)
        self.derived = derived
        return self.made

    def _same(
        self, wiki: Wiki, layout: SiteLayout, signature: tuple[object, ...], derived: bool
    ) -> bool:
        if not self.made or layout != self.layout or signature != self.templates:
            return False
        if derived != self.derived:
            return False
        return same_facts(self.pages, wiki.pages, listing_facts)


def tags_page(
    wiki: Wiki, layout: SiteLayout, templates: Templates | None = None, derived: bool = False
) -> Rendered:
    """Every tag with its pages. The lists are late slots: a search for a page should find the
    page, not the tags page that lists it; the tag headings stay searchable. `derived`: derived
    summaries are listed too."""
    slots = Slots()
    by_tag: dict[str, list[Page]] = defaultdict(list)
    for page in wiki.pages.values():
        for tag in page.tags:
            by_tag[tag].append(page)
    tags = [
        _Group(
            tag,
            tag_anchor(tag),
            [
                _listed(p, layout, TAGS_PAGE, inline=True, derived=derived)
                for p in sorted(by_tag[tag], key=lambda p: p.title.casefold())
            ],
        )
        for tag in sorted(by_tag, key=str.casefold)
    ]
    markdown = (templates or default_templates()).render(
        "tags.html", tags=tags, **slot_functions(slots)
    )
    return Rendered(markdown, slots.html, slots.late)


def index_page(
    wiki: Wiki, layout: SiteLayout, templates: Templates | None = None, derived: bool = False
) -> Rendered:
    """Every page by title with its summary, in late slots like the tags page's lists.
    `derived`: derived summaries are listed too."""
    slots = Slots()
    by_letter: dict[str, list[Page]] = defaultdict(list)
    for page in wiki.pages.values():
        first = page.title[:1].upper()
        by_letter[first if first.isalpha() else "#"].append(page)
    letters = [
        _Group(
            letter,
            f"letter-{letter}",
            [
                _listed(p, layout, INDEX_PAGE, inline=False, derived=derived)
                for p in sorted(by_letter[letter], key=lambda p: (p.title.casefold(), p.key))
            ],
        )
        for letter in sorted(by_letter)
    ]
    markdown = (templates or default_templates()).render(
        "index.html", letters=letters, **slot_functions(slots)
    )
    return Rendered(markdown, slots.html, slots.late)


# Page files the site shows a notice for instead of their text: unreadable (not UTF-8, no
# permission), or a symlink out of the wiki folder, whose target must not be published.
UNPUBLISHED = frozenset({"unreadable-page", "page-outside-wiki"})


def unpublished_notice(page: Page) -> str | None:
    """The Markdown that stands in for a page file the site cannot show, or None for a page
    that is shown. The link to the page still lands; the reader learns what to fix."""
    problems = [p for p in page.problems if p.rule in UNPUBLISHED]
    if not problems:
        return None
    items = "".join(
        f"<p><code>{escape(p.at.path)}</code>: {escape(p.message)}.<br>"
        f"<small>fix: {escape(p.hint)}</small></p>"
        for p in problems
    )
    return (
        f"---\ntitle: {json.dumps(page.key)}\nsearch:\n  exclude: true\n---\n"
        '<div class="admonition danger gw-unpublished"><p class="admonition-title">'
        f"This page is not published</p>{items}</div>\n"
    )


def home_links(wiki: Wiki, root: str, others: tuple[str, ...], layout: SiteLayout) -> str:
    """Links from the site root to the other home pages at the top of the wiki (a README.md
    beside the index.md, a Home.md), which no link of the wiki may reach otherwise."""
    pages = {page.doc_path: page for page in wiki.all_pages}
    links = [_link(layout, root, doc, pages[doc].title) for doc in others if doc in pages]
    if not links:
        return ""
    return f'\n\n<p class="gw-home-links">Also at the top of this wiki: {" · ".join(links)}</p>\n'


_QUOTED = re.compile(r"'([^'\n]+)'")


def quoted_as_code(message: str) -> str:
    """A finding's message as HTML, what it quotes from a page (`'![[x.png]]'`) as code: it is
    the writer's syntax, shown as written, not text that reads as unrendered markup."""
    pieces: list[str] = []
    cursor = 0
    for match in _QUOTED.finditer(message):
        pieces.append(escape(message[cursor : match.start()]))
        pieces.append(f"<code>{escape(match.group(1))}</code>")
        cursor = match.end()
    pieces.append(escape(message[cursor:]))
    return "".join(pieces)
