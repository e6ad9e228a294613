"""The link graph: pages and raw sources as nodes; refs, wikilinks, Markdown links and citations as edges."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from groundwiki.core.wiki.compiled import Wiki


@dataclass(frozen=True)
class Node:
    id: str
    type: str  # page | source
    title: str
    kind: str
    tags: tuple[str, ...]
    path: str
    url: str | None


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    type: str  # ref | wikilink | link | provenance
    line: int
    via: str  # key | alias | title | path | citation


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def backlinks(self) -> dict[str, tuple[str, ...]]:
        inbound: dict[str, set[str]] = defaultdict(set)
        for edge in self.edges:
            if edge.type != "provenance" and edge.source != edge.target:
                inbound[edge.target].add(edge.source)
        return {key: tuple(sorted(sources)) for key, sources in inbound.items()}

    def to_json(self) -> dict[str, Any]:
        # Field by field rather than dataclasses.asdict, which deep-copies: ~10x faster here.
        return {
            "version": 1,
            "nodes": [
                {
                    "id": n.id,
                    "type": n.type,
                    "title": n.title,
                    "kind": n.kind,
                    "tags": list(n.tags),
                    "path": n.path,
                    "url": n.url,
                }
                for n in self.nodes
            ],
            "edges": [
                {
                    "source": e.source,
                    "target": e.target,
                    "type": e.type,
                    "line": e.line,
                    "via": e.via,
                }
                for e in self.edges
            ],
        }


def source_node_id(wiki: Wiki, path: str) -> str:
    return f"{wiki.config.raw_prefix}/{path}"


def build_graph(wiki: Wiki) -> Graph:
    layout = wiki.layout
    nodes = [
        Node(
            key,
            "page",
            page.title,
            page.kind,
            page.tags,
            page.rel_path,
            layout.url(page.doc_path),
        )
        for key, page in sorted(wiki.pages.items())
    ]
    nodes += [
        Node(
            source_node_id(wiki, path),
            "source",
            path,
            source.format,
            (),
            wiki.config.rel(source.abs_path),
            layout.source_url(path),
        )
        for path, source in sorted(wiki.sources.items())
    ]
    edges: dict[tuple[str, str, str], Edge] = {}
    for item in wiki.resolved_links:
        if item.resolution is not None and wiki.is_canonical(item.page):
            key, target = item.page.key, item.resolution.key
            edges.setdefault(
                (key, target, item.link.kind),
                Edge(key, target, item.link.kind, item.link.at.line, item.resolution.via),
            )
    for key, page in sorted(wiki.pages.items()):
        for citation in page.citations:
            if citation.source in wiki.sources:
                target = source_node_id(wiki, citation.source)
                edges.setdefault(
                    (key, target, "provenance"),
                    Edge(key, target, "provenance", citation.at.line, "citation"),
                )
    return Graph(tuple(nodes), tuple(edges[k] for k in sorted(edges)))
