"""The files agents and CI read next to the site: the graph, the lint report, the knowledge index.

Their shapes are published as JSON Schemas in `schemas/` (graph, lint, pages).
"""

from __future__ import annotations

from typing import Any

from .graph import Graph
from .wiki import Wiki


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
                "pointers": [
                    {
                        "chunk_id": p.chunk_id,
                        "source": f"{wiki.config.raw_prefix}/{p.source}",
                        "lines": [p.start_line, p.end_line],
                        "weight": p.weight,
                        "content_hash": p.content_hash,
                    }
                    for p in wiki.pointers[key]
                ],
            }
        )
    return {"version": 1, "pages": entries}


def graph_json(graph: Graph) -> dict[str, Any]:
    data = graph.to_json()
    data["nodes"] = [{**node, "key": node["id"]} for node in data["nodes"]]
    return data
