"""The files agents and CI read next to the site: the graph, the lint report, the knowledge index.

Their shapes are published as JSON Schemas in `schemas/` (graph, lint, pages).
"""

from __future__ import annotations

from typing import Any

from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.graph import Graph


def pages_index(wiki: Wiki) -> dict[str, Any]:
    """The knowledge index: what an agent needs to pick a page and drill into its evidence."""
    layout = wiki.layout
    entries = []
    for key, page in sorted(wiki.pages.items()):
        entries.append(
            {
                "key": key,
                "title": page.title,
                "summary": page.summary,
                "summary_derived": page.summary_derived,
                "tags": list(page.tags),
                "url": layout.url(page.doc_path),
                "path": page.rel_path,
                "kind": page.kind,
                "usage_mode": page.usage_mode,
                "stale_since": page.stale_since,
                "archived_since": page.archived_since,
                "refs": [
                    r.key for link in page.refs if (r := wiki.resolve(link, page)) is not None
                ],
                "aliases": list(page.aliases),
                "content_hash": page.content_hash,
                "pointers": [p.to_json() for p in wiki.pointers[key]],
            }
        )
    # Version 2: a pointer is written as everywhere else (Pointer.to_json), its source relative
    # to the raw-sources folder named once here (version 1 had `lines` and a prefixed source).
    return {"version": 2, "raw_sources": wiki.config.raw_prefix, "pages": entries}


def graph_json(graph: Graph) -> dict[str, Any]:
    data = graph.to_json()
    data["nodes"] = [{**node, "key": node["id"]} for node in data["nodes"]]
    return data
