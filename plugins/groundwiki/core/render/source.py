"""The page of a raw source: its text with line numbers, an anchor per line and per chunk, and
the pages that cite it, so every citation lands on the exact lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from ..model import Chunk, Citation, Page, Source
from ..site import SiteLayout
from .slots import Rendered, Slots
from .text import markdown_text


def render_source(
    source: Source,
    chunks: Sequence[Chunk],
    cited_by: Sequence[tuple[Page, Citation]],
    raw_prefix: str,
    layout: SiteLayout,
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
    if chunks:
        parts += ["## Chunks", ""]
        rows = [
            f'<li><a href="#{c.id}"><code>{c.id}</code></a> lines {c.start_line}–{c.end_line}, '
            f"{c.tokens} word pieces</li>"
            for c in chunks
        ]
        parts += [slots.put('<ul class="gw-chunks">' + "".join(rows) + "</ul>"), ""]
    parts += ["## Text", "", slots.put(numbered_text(source, chunks))]
    return Rendered("\n".join(parts) + "\n", slots.html)


def numbered_text(source: Source, chunks: Sequence[Chunk]) -> str:
    starts: dict[int, list[str]] = {}
    for chunk in chunks:
        starts.setdefault(chunk.start_line, []).append(chunk.id)
    rows: list[str] = []
    for number, line in enumerate(source.lines, start=1):
        marks = "".join(
            f'<span class="gw-chunk-start" id="{cid}" title="chunk {cid}"></span>'
            for cid in starts.get(number, [])
        )
        rows.append(
            f'{marks}<span class="gw-line" id="L{number}"><a class="gw-ln" href="#L{number}">'
            f"{number}</a>{escape(line)}</span>"
        )
    return '<pre class="gw-source">' + "\n".join(rows) + "</pre>"
