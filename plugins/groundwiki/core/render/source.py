"""The page of a raw source: its text with line numbers, an anchor per line and per chunk, and
the pages that cite it, so every citation lands on the exact lines.

A source longer than the page's cap (`source_page_lines`) shows its first lines and every cited
range, and links its full text, written beside the page as plain text: the whole of a 50 MB log
made a 131 MB page. Lint's `large-source` says so.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from groundwiki.core.model.records import Chunk, Citation, Page, Source
from groundwiki.core.model.site_paths import SiteLayout
from groundwiki.core.render.body.slots import Rendered, Slots
from groundwiki.core.render.body.text import markdown_text
from groundwiki.core.render.source_sheet import SHEET_FORMATS, chunk_marks, numbered_sheet

# The default of `source_page_lines` (declared in site_options.py, where its measure is).
MAX_LINES = 10_000
# Lines shown on either side of a cited range past the cap, so the citation reads in context.
CONTEXT = 3


@dataclass(frozen=True)
class FullText:
    """The text of a source too long for its page, as a file beside the page."""

    path: str  # in the site, from its root
    text: str


def shown_ranges(
    line_count: int, citations: Sequence[Citation], max_lines: int
) -> list[tuple[int, int]]:
    """The line ranges a source's page shows, in order and apart: every line when there are at
    most `max_lines`, else the first `max_lines` and each cited range with its context (a cited
    range longer than `max_lines` shows that many of its lines: the full text has the rest)."""
    if line_count <= max_lines:
        return [(1, line_count)] if line_count else []
    spans = [(1, max_lines)]
    for citation in citations:
        if citation.start is None or citation.start > line_count:
            continue  # the whole file, or lines it does not have (lint says so)
        end = min(citation.end or citation.start, line_count, citation.start + max_lines - 1)
        spans.append((max(1, citation.start - CONTEXT), min(line_count, end + CONTEXT)))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def full_text(source: Source, layout: SiteLayout, max_lines: int = MAX_LINES) -> FullText | None:
    """The file to write beside the page of a source longer than `max_lines`. Plain text
    (`.txt`), whatever the source's type: it is the writer's untrusted content, and as `.html`
    it would run as a page of the site."""
    if source.text is None or source.line_count <= max_lines:
        return None
    url = layout.source_url(source.path)
    # Beside the page: in its folder (`a.log/index.html`) or next to it (`a.log.html`).
    folder = url.rstrip("/") if url.endswith("/") else posixpath.dirname(url)
    return FullText(posixpath.join(folder, _text_name(source)), source.text)


def _text_name(source: Source) -> str:
    return posixpath.basename(source.path) + ".txt"


def render_source(
    source: Source,
    chunks: Sequence[Chunk],
    cited_by: Sequence[tuple[Page, Citation]],
    raw_prefix: str,
    layout: SiteLayout,
    max_lines: int = MAX_LINES,
) -> Rendered:
    slots = Slots()
    doc = layout.source_doc(source.path)
    name = f"{raw_prefix}/{source.path}"
    # Raw text is for agents (the sidecar) and for following citations, not for site search,
    # whose index it would multiply. The name is the writer's: plain text in the title (a JSON
    # string is a YAML string; the plugin escapes titles for HTML) and in the heading.
    parts = ["---", "search:", "  exclude: true", f"title: {json.dumps(name)}", "---"]
    parts += [f"# {markdown_text(name)}", ""]
    facts = [source.format]
    if source.text is not None:
        facts += [f"{source.line_count} lines", f"{len(chunks)} chunks"]
    parts.append(f'<p class="gw-summary">Raw source · {escape(" · ".join(facts))}</p>')
    parts.append("")
    spans = shown_ranges(source.line_count, [c for _, c in cited_by], max_lines)
    capped = source.text is not None and source.line_count > max_lines
    if capped:
        # Relative to the page, the file is its own name (see `full_text`); quoted, so a name
        # like `javascript:x.log` stays a path.
        href = "./" + quote(_text_name(source))
        cited = " and the cited ranges" if len(spans) > 1 else ""
        note = (
            f"Showing lines 1–{max_lines:,}{cited} of {source.line_count:,} lines; the full "
            f'text is <a class="gw-full-text" href="{escape(href)}">'
            f"{escape(_text_name(source))}</a>."
        )
        parts += [slots.put(f'<p class="gw-note">{note}</p>'), ""]
    if cited_by:
        parts += ["## Cited by", ""]
        ranges: dict[str, list[str]] = {}
        pages: dict[str, Page] = {}
        for page, citation in cited_by:
            pages[page.key] = page
            ranges.setdefault(page.key, [])
            if citation.start is None:
                label = "the whole file"
            else:
                end = citation.end or citation.start
                span = f"L{citation.start}" + (f"-L{end}" if end != citation.start else "")
                label = f'<a href="#{span}">lines {citation.start}' + (
                    f"–{end}</a>" if end != citation.start else "</a>"
                )
            if label not in ranges[page.key]:
                ranges[page.key].append(label)
        items = [
            f'<li><a href="{escape(layout.href(doc, layout.url(pages[key].doc_path)))}">'
            f"{escape(pages[key].title)}</a> <small>({', '.join(labels)})</small></li>"
            for key, labels in ranges.items()
        ]
        parts += [slots.put('<ul class="gw-cited-by">' + "".join(items) + "</ul>"), ""]
    if source.text is None:
        parts.append(f"<p><strong>Not readable:</strong> {escape(source.problem or 'unknown')}</p>")
        return Rendered("\n".join(parts) + "\n", slots.html)
    # A chunk is listed, and anchored, where its first line is shown.
    shown = [c for c in chunks if any(a <= c.start_line <= b for a, b in spans)]
    if chunks:
        parts += ["## Chunks", ""]
        rows = [
            f'<li><a href="#{c.id}"><code>{c.id}</code></a> lines {c.start_line}–{c.end_line}, '
            f"{c.tokens} word pieces</li>"
            for c in shown
        ]
        if len(shown) < len(chunks):
            rows.append(f"<li>{len(chunks) - len(shown):,} more start in lines not shown</li>")
        parts += [slots.put('<ul class="gw-chunks">' + "".join(rows) + "</ul>"), ""]
    if source.format in SHEET_FORMATS:
        parts += ["## Sheets", "", slots.put(numbered_sheet(source, shown, spans))]
    else:
        parts += ["## Text", "", slots.put(numbered_text(source, shown, spans))]
    return Rendered("\n".join(parts) + "\n", slots.html)


def numbered_text(
    source: Source, chunks: Sequence[Chunk], ranges: Sequence[tuple[int, int]] | None = None
) -> str:
    """The lines of `ranges` (every line by default), numbered, with a row for each gap."""
    marks_at = chunk_marks(chunks)
    lines = source.lines
    rows: list[str] = []
    after = 0  # the last line shown so far
    for first, last in [(1, len(lines))] if ranges is None else ranges:
        if first > after + 1:
            rows.append(_gap(after + 1, first - 1))
        for number in range(first, last + 1):
            marks = marks_at.get(number, "")
            rows.append(
                f'{marks}<span class="gw-line" id="L{number}"><a class="gw-ln" '
                f'href="#L{number}">{number}</a>{escape(lines[number - 1])}</span>'
            )
        after = last
    if after < len(lines):
        rows.append(_gap(after + 1, len(lines)))
    return '<pre class="gw-source">' + "\n".join(rows) + "</pre>"


def _gap(first: int, last: int) -> str:
    span = f"line {first:,}" if first == last else f"lines {first:,}–{last:,}"
    return f'<span class="gw-gap">⋯ {span} not shown: see the full text</span>'
