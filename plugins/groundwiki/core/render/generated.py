"""The pages groundwiki adds to a site: the graph, the lint report, tags and an A–Z index."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from html import escape

from ..lint.findings import SEVERITY_ORDER, LintReport
from ..model import Page
from ..site import GRAPH_JSON, GRAPH_PAGE, INDEX_PAGE, LINT_PAGE, TAGS_PAGE, SiteLayout
from ..wiki import Wiki
from .page import tag_anchor
from .slots import Rendered, Slots
from .summaries import inline_summary, summary_attributes


def _link(
    layout: SiteLayout, from_doc: str, to_doc: str, text: str, fragment: str | None = None
) -> str:
    href = layout.href(from_doc, layout.url(to_doc), fragment)
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def graph_page(layout: SiteLayout) -> str:
    data = layout.href(GRAPH_PAGE, GRAPH_JSON)
    root = layout.root_from(GRAPH_PAGE)
    return (
        "---\ntitle: Graph\n---\n# Graph\n\n"
        '<p class="gw-summary">Every page and raw source, and the links and citations between '
        "them. Click a node to open it.</p>\n\n"
        f'<div class="gw-graph" id="gw-graph" data-graph="{escape(data)}" '
        f'data-base="{escape(root)}"></div>\n'
    )


def lint_page(wiki: Wiki, report: LintReport, layout: SiteLayout) -> str:
    counts = report.counts
    rows = "".join(
        f"<tr><td>{severity}</td><td>{counts[severity]}</td></tr>" for severity in SEVERITY_ORDER
    )
    rows += f"<tr><td>silenced by the baseline</td><td>{report.baselined}</td></tr>"
    parts = [
        "---\ntitle: Lint report\n---\n# Lint report\n",
        f'<table class="gw-lint-counts"><tr><th>severity</th><th>findings</th></tr>{rows}</table>\n',
    ]
    if not report.findings:
        parts.append("<p>No findings: every page, link and citation checks out.</p>\n")
        return "\n".join(parts)
    by_path = {page.rel_path: page for page in wiki.all_pages}
    by_rule = defaultdict(list)
    for finding in report.findings:
        by_rule[finding.rule].append(finding)
    parts.append("## By rule\n")
    for rule in sorted(by_rule):
        found = by_rule[rule]
        parts.append(f"### {rule} ({len(found)})\n")
        items = []
        for f in found:
            page = by_path.get(f.path)
            where = f"{f.path}:{f.line}:{f.column}"
            place = (
                _link(layout, LINT_PAGE, page.doc_path, where)
                if page
                else f"<code>{escape(where)}</code>"
            )
            items.append(
                f'<li class="gw-finding gw-{f.severity}">{place} <strong>{f.severity}</strong>: '
                f"{quoted_as_code(f.message)}<br><small>hint: {quoted_as_code(f.hint)}</small></li>"
            )
        parts.append("<ul>\n" + "\n".join(items) + "\n</ul>\n")
    parts.append("## By page\n")
    per_path: dict[str, list[str]] = defaultdict(list)
    for f in report.findings:
        per_path[f.path].append(f"{f.severity} {f.rule} (line {f.line})")
    rows = []
    for path in sorted(per_path):
        page = by_path.get(path)
        name = (
            _link(layout, LINT_PAGE, page.doc_path, path)
            if page
            else f"<code>{escape(path)}</code>"
        )
        rows.append(f"<tr><td>{name}</td><td>{escape('; '.join(per_path[path]))}</td></tr>")
    parts.append('<table class="gw-lint-pages">' + "".join(rows) + "</table>\n")
    return "\n".join(parts)


def tags_page(wiki: Wiki, layout: SiteLayout) -> Rendered:
    """Every tag with its pages. The lists are late slots: a search for a page should find the
    page, not the tags page that lists it; the tag headings stay searchable."""
    slots = Slots()
    by_tag: dict[str, list] = defaultdict(list)
    for page in wiki.pages.values():
        for tag in page.tags:
            by_tag[tag].append(page)
    parts = ["---\ntitle: Tags\n---\n# Tags\n"]
    for tag in sorted(by_tag, key=str.casefold):
        pages = sorted(by_tag[tag], key=lambda p: p.title.casefold())
        items = "".join(
            f"<li>{_link(layout, TAGS_PAGE, p.doc_path, p.title)}"
            + (f" — {inline_summary(p)}" if p.summary else "")
            + "</li>"
            for p in pages
        )
        parts.append(
            f'<h2 id="{escape(tag_anchor(tag))}">{escape(tag)} <small>({len(pages)})</small></h2>\n\n'
            f"{slots.put(f'<ul>{items}</ul>', searchable=False)}\n"
        )
    return Rendered("\n".join(parts), slots.html, slots.late)


def index_page(wiki: Wiki, layout: SiteLayout) -> Rendered:
    """Every page by title with its summary, in late slots like the tags page's lists."""
    slots = Slots()
    by_letter: dict[str, list] = defaultdict(list)
    for page in wiki.pages.values():
        first = page.title[:1].upper()
        by_letter[first if first.isalpha() else "#"].append(page)
    letters = sorted(by_letter)
    jump = " ".join(f'<a href="#letter-{escape(x)}">{escape(x)}</a>' for x in letters)
    parts = ["---\ntitle: A–Z index\n---\n# A–Z index\n", f'<p class="gw-az">{jump}</p>\n']
    for letter in letters:
        pages = sorted(by_letter[letter], key=lambda p: (p.title.casefold(), p.key))
        items = "".join(
            f"<dt>{_link(layout, INDEX_PAGE, p.doc_path, p.title)}</dt>"
            f"<dd{summary_attributes(p)}>{escape(p.summary or '')}</dd>"
            for p in pages
        )
        listing = slots.put(f"<dl>{items}</dl>", searchable=False)
        parts.append(f'<h2 id="letter-{escape(letter)}">{escape(letter)}</h2>\n\n{listing}\n')
    return Rendered("\n".join(parts), slots.html, slots.late)


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
