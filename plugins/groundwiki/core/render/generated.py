"""The pages groundwiki adds to a site: the graph, the lint report, tags and an A–Z index.

An overview page heavier than the site's `page_bytes` (its Markdown and slots) is split, so no
page of a wiki of thousands grows past what a browser opens at once: the lint report into a
summary and a page per top folder (a big folder cut into several, at points an edit elsewhere
does not move); the A–Z index into a page per letter; the tags page keeps every tag's heading
(where the tag chips link) with its first pages, and a long listing gets pages of its own. The
parts are made from the same report and pages as the whole page: what the site may show."""

from __future__ import annotations

import json
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import TypeVar

from markupsafe import Markup

from groundwiki.core.config.site_options import GRAPH_NODES, PAGE_BYTES
from groundwiki.core.lint.findings import SEVERITY_ORDER, Finding, LintReport
from groundwiki.core.model.records import Page
from groundwiki.core.model.site_paths import (
    GRAPH_JSON,
    GRAPH_PAGE,
    INDEX_PAGE,
    INDEX_PARTS,
    LINT_PAGE,
    LINT_PARTS,
    TAGS_PAGE,
    TAGS_PARTS,
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


def graph_page(
    layout: SiteLayout, templates: Templates | None = None, nodes: int = GRAPH_NODES
) -> str:
    """`nodes`: the most-linked nodes the graph draws at first (0: all of them)."""
    return (templates or default_templates()).render(
        "graph.html",
        graph=layout.href(GRAPH_PAGE, GRAPH_JSON),
        root=layout.root_from(GRAPH_PAGE),
        limit=str(nodes),
    )


# --- pages split into parts -------------------------------------------------------------------

T = TypeVar("T")


def rendered_bytes(page: Rendered | str) -> int:
    """What a generated page weighs: its Markdown and the HTML of its slots, in UTF-8."""
    if isinstance(page, str):
        return len(page.encode("utf-8", "surrogatepass"))
    texts = [page.markdown, *page.slots.values(), *page.late_slots.values()]
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)


def fitted(
    items: Sequence[T], weigh: Callable[[Sequence[T]], int], budget: int
) -> list[Sequence[T]]:
    """`items` in runs, in their order, each weighing at most `budget` (`weigh` renders a run
    and measures it); a single item heavier than that is a run of its own. Halving: a run too
    heavy is cut in two, so a list is rendered about log2(weight / budget) times in all."""
    if len(items) <= 1 or weigh(items) <= budget:
        return [items]
    middle = len(items) // 2
    return fitted(items[:middle], weigh, budget) + fitted(items[middle:], weigh, budget)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


def frontmatter_title(text: str) -> Markup:
    """A title made of the wiki's names (a folder, a tag) as a YAML string in a generated
    page's frontmatter: HTML-escaped, as themes print a page's title as HTML; no backslash or
    control character, so the string holds no escape."""
    return Markup(json.dumps(_CONTROL.sub(" ", escape(text)), ensure_ascii=False))


def _part_names(labels: Sequence[str], prefix: str) -> list[str]:
    """A file name for each label, unique, never `index` or `README`: `prefix-<slug>`, with
    `.alt2`... after a slug taken already (two labels that differ only in case or accents). A
    slug holds no `.`: a part after a label's first is `<name>.2.md`, which no name is."""
    names: list[str] = []
    taken: set[str] = set()
    for label in labels:
        base = f"{prefix}-{slugify(label) or 'other'}"
        name, n = base, 1
        while name.casefold() in taken:
            n += 1
            name = f"{base}.alt{n}"
        taken.add(name.casefold())
        names.append(name)
    return names


@dataclass(frozen=True)
class _PartLink:
    """A link to one part of a split page, from the page it is listed on."""

    label: str  # the folder, letter or tag, with `(2 of 3)` when it has several parts
    href: str
    counts: tuple[int, ...] = ()  # a lint part's findings by severity
    severity: str = "info"  # the most severe among them (the rows the severity filter hides)
    current: bool = False  # the part this link is on


@dataclass(frozen=True)
class _Finding:
    severity: str
    where: str  # path:line:column
    href: str | None  # the page's URL, when the finding is on a page
    message: Markup
    hint: Markup
    rule: str = ""


@dataclass(frozen=True)
class _RuleGroup:
    rule: str
    findings: list[_Finding]


@dataclass(frozen=True)
class _PageRow:
    path: str
    href: str | None
    text: str
    severity: str = "info"  # its most severe finding (the severity filter hides the row below)


@dataclass(frozen=True)
class _RuleCount:
    rule: str
    severity: str
    count: int


@dataclass(frozen=True)
class _FileFindings:
    """A file's findings on a part of the lint report."""

    path: str
    href: str | None
    severity: str  # the most severe
    findings: list[_Finding]


def _most_severe(severities: Sequence[str]) -> str:
    return min(severities, key=SEVERITY_ORDER.__getitem__, default="info")


def _count_rows(report: LintReport) -> list[tuple[str, int]]:
    counts = report.counts
    rows = [(severity, counts[severity]) for severity in SEVERITY_ORDER]
    rows.append(("silenced by the baseline", report.baselined))
    return rows


class _LintLinks:
    """Each finding's link to its page, from a page of the report."""

    def __init__(self, wiki: Wiki, layout: SiteLayout) -> None:
        # Every scope's pages: the report given is the one the site may show (a site of the
        # shared scope gets none on a user's page), and a finding on a published page links to it.
        self.by_path = {page.rel_path: page for page in wiki.scopes.every_page}
        self.layout = layout

    def href(self, from_doc: str, path: str) -> str | None:
        page = self.by_path.get(path)
        return _href(self.layout, from_doc, page.doc_path) if page else None

    def finding(self, from_doc: str, f: Finding) -> _Finding:
        return _Finding(
            f.severity,
            f"{f.path}:{f.line}:{f.column}",
            self.href(from_doc, f.path),
            Markup(quoted_as_code(f.message)),
            Markup(quoted_as_code(f.hint)),
            f.rule,
        )

    def folder(self, path: str) -> str:
        """The top folder of the docs a finding's file is in: what the report is split by.
        `(top)` for a page at the top, `(other files)` for a file that is no page (a raw
        source, the lock, mkdocs.yml)."""
        page = self.by_path.get(path)
        if page is None:
            return "(other files)"
        folder, _, rest = page.doc_path.partition("/")
        return folder if rest else "(top)"


def lint_page(
    wiki: Wiki, report: LintReport, layout: SiteLayout, templates: Templates | None = None
) -> str:
    """The whole report on one page."""
    links = _LintLinks(wiki, layout)
    by_rule: dict[str, list[_Finding]] = defaultdict(list)
    per_path: dict[str, list[str]] = defaultdict(list)
    severities: dict[str, list[str]] = defaultdict(list)
    for f in report.findings:
        by_rule[f.rule].append(links.finding(LINT_PAGE, f))
        per_path[f.path].append(f"{f.severity} {f.rule} (line {f.line})")
        severities[f.path].append(f.severity)
    return (templates or default_templates()).render(
        "lint.html",
        counts=_count_rows(report),
        rules=[_RuleGroup(rule, by_rule[rule]) for rule in sorted(by_rule)],
        pages=[
            _PageRow(
                path,
                links.href(LINT_PAGE, path),
                "; ".join(per_path[path]),
                _most_severe(severities[path]),
            )
            for path in sorted(per_path)
        ],
    )


# The least a finding weighs on a page (its list item's markup, its path, message and hint):
# a report with more findings than the budget holds of those is split without being rendered
# whole first.
_FINDING_BYTES = 150


def lint_pages(
    wiki: Wiki,
    report: LintReport,
    layout: SiteLayout,
    templates: Templates | None = None,
    budget: int = PAGE_BYTES,
) -> dict[str, str]:
    """The lint report: one page while it weighs at most `budget` bytes, else a summary page
    (counts by severity and rule, the folders with theirs) and the findings of each top folder
    on pages of their own, a folder cut into parts of at most `budget` each."""
    templates = templates or default_templates()
    if len(report.findings) * _FINDING_BYTES <= budget:
        whole = lint_page(wiki, report, layout, templates)
        if rendered_bytes(whole) <= budget:
            return {LINT_PAGE: whole}
    links = _LintLinks(wiki, layout)
    by_folder: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        by_folder[links.folder(f.path)].append(f)
    folders = sorted(by_folder, key=lambda name: (name.startswith("("), name.casefold(), name))
    # Each folder's findings (by file, as the parts list them) in runs estimated to fit, cut
    # where an edit elsewhere does not move the cuts (`stable_runs`); each run rendered once,
    # and cut in two again while it weighs more than the budget (an estimate too low).
    runs: list[tuple[str, Sequence[Finding]]] = []
    for folder in folders:
        found = sorted(by_folder[folder], key=lambda f: f.sort_key)
        runs += [(folder, run) for run in stable_runs(found, budget * 4 // 5)]
    while True:
        docs = _run_docs(folders, runs)
        pairs = [(folder, doc) for (folder, _), doc in zip(runs, docs, strict=True)]
        labels = _run_labels(pairs, totals=False)
        listed = [(folder, doc, run) for (folder, run), doc in zip(runs, docs, strict=True)]
        pages: dict[str, str] = {}
        heavy: set[int] = set()
        for i, (folder, doc, run) in enumerate(listed):
            # A part links to the summary (which links to all) and to the parts before and
            # after it: an edit rewrites the parts whose findings changed and their neighbours.
            parts = _part_links(layout, doc, listed[max(i - 1, 0) : i + 2], labels)
            pages[doc] = _lint_part(links, templates, doc, folder, run, parts)
            if len(run) > 1 and rendered_bytes(pages[doc]) > budget:
                heavy.add(i)
        if not heavy:
            break
        runs = [
            cut for i, (folder, run) in enumerate(runs) for cut in _halves(folder, run, i in heavy)
        ]
    rules: dict[tuple[str, str], int] = defaultdict(int)
    for f in report.findings:
        rules[(f.rule, f.severity)] += 1
    pages[LINT_PAGE] = templates.render(
        "lint-summary.html",
        counts=_count_rows(report),
        rules=[
            _RuleCount(rule, severity, count)
            for (rule, severity), count in sorted(
                rules.items(), key=lambda item: (SEVERITY_ORDER[item[0][1]], item[0][0])
            )
        ],
        parts=_part_links(layout, LINT_PAGE, listed, _run_labels(pairs)),
    )
    return pages


def stable_runs(found: Sequence[Finding], budget: int) -> list[Sequence[Finding]]:
    """A folder's findings (sorted by file) in runs of estimated weight at most `budget`, a
    file's findings together, cut where an edit does not move the cuts: after a file whose
    path hashes to a multiple of `every`, once the run is two thirds full (content-defined
    chunking),
    or where the next file would overflow it. An edit that changes one file's findings changes
    the run holding it, and the cuts after it come back to where they were within a run or two:
    a server's rebuild writes those parts again, not every part after it."""
    files: list[tuple[str, list[Finding], int]] = []
    for f in found:
        if not files or files[-1][0] != f.path:
            files.append((f.path, [], 0))
        path, held, weight = files[-1]
        held.append(f)
        files[-1] = (path, held, weight + _finding_bytes(f))
    if not files:
        return []
    # A cut point every twelfth of the budget or so, four in the last third of a run (a cut
    # forced by the budget, which moves with the edits before it, about one run in fifty);
    # rounded to a power of two, so that the average moving with an edit rarely moves `every`.
    average = max(1, sum(weight for _, _, weight in files) // len(files))
    every = max(1, 1 << max(0, (budget // 12 // average).bit_length() - 1))
    runs: list[Sequence[Finding]] = []
    run: list[Finding] = []
    total = 0
    for path, held, weight in files:
        if run and total + weight > budget:
            runs.append(run)
            run, total = [], 0
        run += held
        total += weight
        if (
            total >= budget * 2 // 3
            and zlib.crc32(path.encode("utf-8", "surrogatepass")) % every == 0
        ):
            runs.append(run)
            run, total = [], 0
    if run:
        runs.append(run)
    return runs


def _halves(folder: str, run: Sequence[Finding], cut: bool) -> list[tuple[str, Sequence[Finding]]]:
    if not cut:
        return [(folder, run)]
    middle = len(run) // 2
    return [(folder, run[:middle]), (folder, run[middle:])]


def _finding_bytes(f: Finding) -> int:
    """About what a finding weighs on a part of the report: its list item (the path twice, in
    the link and its text), the message and hint escaped, and the file's heading above it."""
    return 160 + 3 * len(f.path) + len(f.rule) + (len(f.message) + len(f.hint)) * 6 // 5


def _run_docs(folders: Sequence[str], runs: Sequence[tuple[str, Sequence[Finding]]]) -> list[str]:
    """Each run's page: `lint/folder-<slug>.md` for a folder's first, `.2`, `.3`... after."""
    names = dict(zip(folders, _part_names(folders, "folder"), strict=True))
    seen: dict[str, int] = defaultdict(int)
    docs: list[str] = []
    for folder, _ in runs:
        seen[folder] += 1
        n = seen[folder]
        docs.append(f"{LINT_PARTS}/{names[folder]}{'' if n == 1 else f'.{n}'}.md")
    return docs


def _run_labels(runs: Sequence[tuple[str, str]], totals: bool = True) -> dict[str, str]:
    """Each part's label by doc: its name, with `(2 of 3)` when the name has several parts
    (`totals`; else `(part 2)`, which another part coming does not change)."""
    total: dict[str, int] = defaultdict(int)
    for name, _ in runs:
        total[name] += 1
    seen: dict[str, int] = defaultdict(int)
    labels: dict[str, str] = {}
    for name, doc in runs:
        seen[name] += 1
        many = total[name] > 1
        if not many:
            labels[doc] = name
        elif totals:
            labels[doc] = f"{name} ({seen[name]} of {total[name]})"
        else:
            labels[doc] = f"{name} (part {seen[name]})"
    return labels


def _part_links(
    layout: SiteLayout,
    from_doc: str,
    runs: Sequence[tuple[str, str, Sequence[Finding]]],
    labels: dict[str, str],
) -> list[_PartLink]:
    links: list[_PartLink] = []
    for _, doc, found in runs:
        counted = [0] * len(SEVERITY_ORDER)
        for f in found:
            counted[SEVERITY_ORDER[f.severity]] += 1
        severity = _most_severe([f.severity for f in found])
        href = _href(layout, from_doc, doc)
        links.append(_PartLink(labels[doc], href, tuple(counted), severity, doc == from_doc))
    return links


def _lint_part(
    links: _LintLinks,
    templates: Templates,
    doc: str,
    folder: str,
    found: Sequence[Finding],
    parts: list[_PartLink],
) -> str:
    """A part of the lint report: a folder's findings (or a run of them), by file."""
    by_file: dict[str, list[_Finding]] = defaultdict(list)
    for f in found:
        by_file[f.path].append(links.finding(doc, f))
    files = [
        _FileFindings(
            path,
            links.href(doc, path),
            _most_severe([f.severity for f in shown]),
            shown,
        )
        for path, shown in by_file.items()
    ]
    label = next((part.label for part in parts if part.current), folder)
    return templates.render(
        "lint-part.html",
        title=frontmatter_title(f"Lint report: {label}"),
        heading=f"Lint report: {label}",
        summary=_href(links.layout, doc, LINT_PAGE),
        files=files,
        parts=parts,
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
    total: int = 0  # how many pages it has (a split tags page lists the first few)
    more: str | None = None  # the link to all of them, when they are listed elsewhere

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
    """The A–Z index and the tags page (with their parts, when split) of a long-running
    build's last build, with the pages they listed: a rebuild after an edit that changed no
    page's listing facts (a body edit, a new link) reuses them instead of listing every page
    again."""

    layout: SiteLayout | None = None
    templates: tuple[object, ...] | None = None  # `Templates.signature()`
    derived: bool = False  # whether they listed derived summaries
    budget: int = PAGE_BYTES
    pages: dict[str, Page] = field(default_factory=dict)
    made: dict[str, Rendered] = field(default_factory=dict)

    def of(
        self,
        wiki: Wiki,
        layout: SiteLayout,
        templates: Templates,
        derived: bool = False,
        budget: int = PAGE_BYTES,
    ) -> dict[str, Rendered]:
        """`derived`: derived summaries are listed (`show_derived_summaries`); `budget`: the
        most bytes a page holds before it is split (`page_bytes`)."""
        signature = templates.signature()
        if not self._same(wiki, layout, signature, derived, budget):
            self.made = {
                **index_pages(wiki, layout, templates, derived, budget),
                **tags_pages(wiki, layout, templates, derived, budget),
            }
        self.layout, self.templates, self.pages = layout, signature, dict(wiki.pages)
        self.derived, self.budget = derived, budget
        return self.made

    def _same(
        self,
        wiki: Wiki,
        layout: SiteLayout,
        signature: tuple[object, ...],
        derived: bool,
        budget: int,
    ) -> bool:
        if not self.made or layout != self.layout or signature != self.templates:
            return False
        if derived != self.derived or budget != self.budget:
            return False
        return same_facts(self.pages, wiki.pages, listing_facts)


def _by_tag(wiki: Wiki) -> dict[str, list[Page]]:
    by_tag: dict[str, list[Page]] = defaultdict(list)
    for page in wiki.pages.values():
        for tag in page.tags:
            by_tag[tag].append(page)
    return {
        tag: sorted(by_tag[tag], key=lambda p: p.title.casefold())
        for tag in sorted(by_tag, key=str.casefold)
    }


def tags_page(
    wiki: Wiki,
    layout: SiteLayout,
    templates: Templates | None = None,
    derived: bool = False,
    preview: int | None = None,
    more: dict[str, str] | None = None,
) -> Rendered:
    """Every tag with its pages. The lists are late slots: a search for a page should find the
    page, not the tags page that lists it; the tag headings stay searchable. `derived`: derived
    summaries are listed too. `preview`: each tag lists its first pages only, and links to the
    page listing them all (`more`, by tag) when it has more."""
    slots = Slots()
    more = more or {}
    tags = [
        _Group(
            tag,
            tag_anchor(tag),
            [
                _listed(p, layout, TAGS_PAGE, inline=True, derived=derived)
                for p in (pages if preview is None else pages[:preview])
            ],
            len(pages),
            more.get(tag),
        )
        for tag, pages in _by_tag(wiki).items()
    ]
    markdown = (templates or default_templates()).render(
        "tags.html", tags=tags, **slot_functions(slots)
    )
    return Rendered(markdown, slots.html, slots.late)


# What each tag lists on a tags page too large for one page; the rest is on the tag's own pages.
TAG_PREVIEW = 10


def tags_pages(
    wiki: Wiki,
    layout: SiteLayout,
    templates: Templates | None = None,
    derived: bool = False,
    budget: int = PAGE_BYTES,
) -> dict[str, Rendered]:
    """The tags page, whole while it weighs at most `budget` bytes. Else every tag keeps its
    heading there (where each page's tag chips link to, `tag_anchor`) with its first
    `TAG_PREVIEW` pages, and a tag with more gets pages of its own listing them all."""
    templates = templates or default_templates()
    whole = tags_page(wiki, layout, templates, derived)
    if rendered_bytes(whole) <= budget:
        return {TAGS_PAGE: whole}
    by_tag = {tag: pages for tag, pages in _by_tag(wiki).items() if len(pages) > TAG_PREVIEW}
    tags = list(by_tag)
    runs: list[tuple[str, str, Sequence[Page]]] = []  # (tag, doc, pages)
    for tag, name in zip(tags, _part_names(tags, "tag"), strict=True):
        doc = f"{TAGS_PARTS}/{name}.md"

        def weigh(run: Sequence[Page], doc: str = doc, tag: str = tag) -> int:
            return rendered_bytes(_listing_part(layout, templates, doc, tag, run, [], derived))

        for n, piece in enumerate(fitted(by_tag[tag], weigh, budget), 1):
            runs.append((tag, doc if n == 1 else f"{TAGS_PARTS}/{name}.{n}.md", piece))
    made = _listing_parts(layout, templates, runs, derived, own=True)
    first = {tag: doc for tag, doc, _ in reversed(runs)}
    more = {tag: _href(layout, TAGS_PAGE, doc) for tag, doc in first.items()}
    made[TAGS_PAGE] = tags_page(wiki, layout, templates, derived, TAG_PREVIEW, more)
    return made


def _by_letter(wiki: Wiki) -> dict[str, list[Page]]:
    by_letter: dict[str, list[Page]] = defaultdict(list)
    for page in wiki.pages.values():
        first = page.title[:1].upper()
        by_letter[first if first.isalpha() else "#"].append(page)
    return {
        letter: sorted(by_letter[letter], key=lambda p: (p.title.casefold(), p.key))
        for letter in sorted(by_letter)
    }


def index_page(
    wiki: Wiki, layout: SiteLayout, templates: Templates | None = None, derived: bool = False
) -> Rendered:
    """Every page by title with its summary, in late slots like the tags page's lists.
    `derived`: derived summaries are listed too."""
    slots = Slots()
    letters = [
        _Group(
            letter,
            f"letter-{letter}",
            [_listed(p, layout, INDEX_PAGE, inline=False, derived=derived) for p in pages],
            len(pages),
        )
        for letter, pages in _by_letter(wiki).items()
    ]
    markdown = (templates or default_templates()).render(
        "index.html", letters=letters, **slot_functions(slots)
    )
    return Rendered(markdown, slots.html, slots.late)


# The least a page weighs in the A–Z index (its link and title).
_LISTED_BYTES = 40


def index_pages(
    wiki: Wiki,
    layout: SiteLayout,
    templates: Templates | None = None,
    derived: bool = False,
    budget: int = PAGE_BYTES,
) -> dict[str, Rendered]:
    """The A–Z index, whole while it weighs at most `budget` bytes; else a page of letters
    linking to a page per letter, a letter cut into parts of at most `budget` each."""
    templates = templates or default_templates()
    if len(wiki.pages) * _LISTED_BYTES <= budget:  # else it is too heavy without a doubt
        whole = index_page(wiki, layout, templates, derived)
        if rendered_bytes(whole) <= budget:
            return {INDEX_PAGE: whole}
    by_letter = _by_letter(wiki)
    letters = list(by_letter)
    names = _part_names(["other" if letter == "#" else letter for letter in letters], "letter")
    runs: list[tuple[str, str, Sequence[Page]]] = []  # (letter, doc, pages)
    for letter, name in zip(letters, names, strict=True):
        doc = f"{INDEX_PARTS}/{name}.md"

        def weigh(run: Sequence[Page], doc: str = doc, letter: str = letter) -> int:
            return rendered_bytes(_listing_part(layout, templates, doc, letter, run, [], derived))

        for n, piece in enumerate(fitted(by_letter[letter], weigh, budget), 1):
            runs.append((letter, doc if n == 1 else f"{INDEX_PARTS}/{name}.{n}.md", piece))
    made = _listing_parts(layout, templates, runs, derived)
    made[INDEX_PAGE] = Rendered(
        templates.render("index-summary.html", parts=_listing_links(layout, INDEX_PAGE, runs)),
        {},
    )
    return made


def _listing_links(
    layout: SiteLayout, from_doc: str, runs: Sequence[tuple[str, str, Sequence[Page]]]
) -> list[_PartLink]:
    labels = _run_labels([(name, doc) for name, doc, _ in runs])
    return [
        _PartLink(labels[doc], _href(layout, from_doc, doc), (len(pages),), current=doc == from_doc)
        for _, doc, pages in runs
    ]


def _listing_parts(
    layout: SiteLayout,
    templates: Templates,
    runs: Sequence[tuple[str, str, Sequence[Page]]],
    derived: bool,
    own: bool = False,
) -> dict[str, Rendered]:
    """The pages of a split A–Z index (by letter) or tags page (by tag); `own`: each page
    links to the parts of its own name only (a tag's), not to every part."""
    made: dict[str, Rendered] = {}
    for name, doc, pages in runs:
        linked = [run for run in runs if run[0] == name] if own else runs
        parts = _listing_links(layout, doc, linked)
        made[doc] = _listing_part(layout, templates, doc, name, pages, parts, derived)
    return made


def _listing_part(
    layout: SiteLayout,
    templates: Templates,
    doc: str,
    name: str,
    pages: Sequence[Page],
    parts: list[_PartLink],
    derived: bool,
) -> Rendered:
    """One part of the A–Z index (`name` a letter) or of a tag's listing (`name` the tag):
    its pages by title with their summaries, in a late slot like the whole page's."""
    slots = Slots()
    of_tags = doc.startswith(TAGS_PARTS + "/")
    label = next((part.label for part in parts if part.current), name)
    heading = f"Tag: {label}" if of_tags else f"A–Z index: {label}"
    if of_tags:  # back to the tag's heading on the tags page
        overview = layout.href(doc, layout.url(TAGS_PAGE), tag_anchor(name))
    else:
        overview = _href(layout, doc, INDEX_PAGE)
    markdown = templates.render(
        "listing-part.html",
        title=frontmatter_title(heading),
        heading=heading,
        overview=overview,
        overview_title="Tags" if of_tags else "A–Z index",
        pages=[_listed(p, layout, doc, inline=False, derived=derived) for p in pages],
        parts=parts if len(parts) > 1 else [],
        **slot_functions(slots),
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


# A quote opens after no letter and closes before none: the apostrophe of "a page's" is no
# quote, and a quoted link may hold one ('[[Bob's notes]]').
_QUOTED = re.compile(r"(?<!\w)'([^\n]+?)'(?!\w)")


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
