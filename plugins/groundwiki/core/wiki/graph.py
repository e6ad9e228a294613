"""The link graph: pages and raw sources as nodes; refs, wikilinks, Markdown links and citations as edges."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from groundwiki.core.model.records import Page
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
    # The backlinks, when the graph was made from the last compile's (build_graph): equal to
    # what `backlinks` computes from the edges.
    known_backlinks: dict[str, tuple[str, ...]] | None = field(default=None, compare=False)
    # `edges` cut by source page, each group the page's own tuple (kept across compiles while
    # the page is not stale): lets a writer of the graph keep each page's text (artifacts.py).
    edge_groups: tuple[tuple[Edge, ...], ...] | None = field(default=None, compare=False)

    def backlinks(self) -> dict[str, tuple[str, ...]]:
        if self.known_backlinks is not None:
            return dict(self.known_backlinks)
        inbound: dict[str, set[str]] = defaultdict(set)
        for edge in self.edges:
            if _is_backlink(edge):
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
    """The graph of the shared view (or one user's). After a change, each page's node and
    edges are kept from the last compile's graph unless the page is stale (its links may land
    elsewhere, or its citations' sources changed) or the site's URLs moved; the backlinks are
    updated for the edges that changed."""
    layout = wiki.layout
    kept = wiki.kept_for(_DERIVED) if wiki.user is None else None
    before: dict[str, _Part] = {}
    stale: frozenset[str] = frozenset()
    inbound: dict[str, set[str]] | None = None
    if kept is not None and kept[0][0] == layout:
        before, stale = kept[0][1], kept[1]
        inbound = kept[0][2]
    parts: dict[str, _Part] = {}
    nodes: list[Node] = []
    edges: list[Edge] = []
    changed: list[tuple[tuple[Edge, ...], tuple[Edge, ...]]] = []
    # Nodes by key, each page's edges sorted by target: the edges come out sorted by source.
    for _, page in sorted(wiki.pages.items()):
        doc = page.doc_path
        part = before.get(doc) if doc not in stale else None
        if part is None or part[0] is not page:
            old = before.get(doc)
            part = (page, _page_node(wiki, page), _page_edges(wiki, page))
            changed.append((old[2] if old is not None else (), part[2]))
        parts[doc] = part
        nodes.append(part[1])
        edges.extend(part[2])
    if inbound is not None:
        for doc in before.keys() - parts.keys():  # pages gone, or no longer owning their key
            changed.append((before[doc][2], ()))
        backlinks = _updated_backlinks(kept[0][3], inbound, changed) if kept else None
    else:
        inbound = defaultdict(set)
        for edge in edges:
            if _is_backlink(edge):
                inbound[edge.target].add(edge.source)
        backlinks = {key: tuple(sorted(sources)) for key, sources in inbound.items()}
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
    if wiki.user is None:
        wiki.derived[_DERIVED] = (layout, parts, inbound, backlinks)
    groups = tuple(part[2] for part in parts.values())
    return Graph(tuple(nodes), tuple(edges), backlinks, groups)


def _is_backlink(edge: Edge) -> bool:
    return edge.type != "provenance" and edge.source != edge.target


def _updated_backlinks(
    backlinks: dict[str, tuple[str, ...]],
    inbound: dict[str, set[str]],
    changed: list[tuple[tuple[Edge, ...], tuple[Edge, ...]]],
) -> dict[str, tuple[str, ...]]:
    """The last compile's backlinks (`inbound` is updated in place: the last compile's is
    not read again) with each changed page's old edges out and its new edges in."""
    touched: set[str] = set()
    for old, new in changed:
        for edge in old:
            if _is_backlink(edge):
                inbound.get(edge.target, set()).discard(edge.source)
                touched.add(edge.target)
        for edge in new:
            if _is_backlink(edge):
                inbound.setdefault(edge.target, set()).add(edge.source)
                touched.add(edge.target)
    found = dict(backlinks)
    for target in touched:
        sources = inbound.get(target)
        if sources:
            found[target] = tuple(sorted(sources))
        else:
            found.pop(target, None)
            inbound.pop(target, None)
    return found


_DERIVED = "graph"
_Part = tuple[Page, Node, tuple[Edge, ...]]  # a canonical page, its node, its edges


def _page_node(wiki: Wiki, page: Page) -> Node:
    url = wiki.layout.url(page.doc_path)
    return Node(page.key, "page", page.title, page.kind, page.tags, page.rel_path, url)


def _page_edges(wiki: Wiki, page: Page) -> tuple[Edge, ...]:
    """The page's edges, one per target and kind: the first link's line."""
    key = page.key
    edges: dict[tuple[str, str], Edge] = {}
    for item in wiki.links_by_page.get(page.doc_path, ()):
        if item.resolution is not None:
            target = item.resolution.key
            edges.setdefault(
                (target, item.link.kind),
                Edge(key, target, item.link.kind, item.link.at.line, item.resolution.via),
            )
    for citation in page.citations:
        if citation.source in wiki.sources:
            target = source_node_id(wiki, citation.source)
            edges.setdefault(
                (target, "provenance"),
                Edge(key, target, "provenance", citation.at.line, "citation"),
            )
    return tuple(sorted(edges.values(), key=lambda e: (e.target, e.type)))
