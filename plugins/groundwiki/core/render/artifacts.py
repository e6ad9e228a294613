"""The files agents and CI read next to the site: the graph, the lint report, the knowledge index.

Their shapes are published as JSON Schemas in `schemas/` (graph, lint, pages).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groundwiki.core.model.records import Page
from groundwiki.core.model.site_paths import LOCAL_GRAPHS, local_graph_file
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.graph import Edge, Graph, Node


def pages_index(wiki: Wiki) -> dict[str, Any]:
    """The knowledge index: what an agent needs to pick a page and drill into its evidence."""
    entries = [_index_entry(wiki, key, page) for key, page in sorted(wiki.pages.items())]
    # Version 2: a pointer is written as everywhere else (Pointer.to_json), its source relative
    # to the raw-sources folder named once here (version 1 had `lines` and a prefixed source).
    return {"version": 2, "raw_sources": wiki.config.raw_prefix, "pages": entries}


def _index_entry(wiki: Wiki, key: str, page: Page) -> dict[str, Any]:
    return {
        "key": key,
        "title": page.title,
        "summary": page.summary,
        "summary_derived": page.summary_derived,
        "tags": list(page.tags),
        "url": wiki.layout.url(page.doc_path),
        "path": page.rel_path,
        "kind": page.kind,
        "usage_mode": page.usage_mode,
        "stale_since": page.stale_since,
        "archived_since": page.archived_since,
        "refs": _refs(wiki, page),
        "aliases": list(page.aliases),
        "content_hash": page.content_hash,
        "pointers": [p.to_json() for p in wiki.pointers[key]],
    }


def _refs(wiki: Wiki, page: Page) -> list[str]:
    return [r.key for link in page.refs if (r := wiki.resolve(link, page)) is not None]


def graph_json(graph: Graph) -> dict[str, Any]:
    data = graph.to_json()
    data["nodes"] = [{**node, "key": node["id"]} for node in data["nodes"]]
    return data


def _graph_text(nodes: list[str], edges: list[str]) -> str:
    """graph.json's shape, from its nodes' and edges' texts."""
    return f'{{"version":1,"nodes":[{",".join(nodes)}],"edges":[{",".join(edges)}]}}'


def dumps(content: object) -> str:
    """An artifact's text: compact JSON, Unicode as it is."""
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


@dataclass
class ArtifactTexts:
    """The graph and the knowledge index as text, each item's JSON kept across the rebuilds of
    a server: a rebuild writes again only the items a change reached, and the text equals
    `dumps` of `graph_json` and `pages_index` (tests/core/test_artifact_texts.py)."""

    # id of a node or an edge -> (it, its JSON): a graph kept across compiles holds the same
    # objects for the pages a change did not reach (comparing by value would hash every one).
    nodes: dict[int, tuple[object, str]] = field(default_factory=dict)
    edges: dict[int, tuple[object, str]] = field(default_factory=dict)
    # doc path -> (page, url, refs, pointers, JSON of its entry)
    entries: dict[str, tuple[Page, str, list[str], object, str]] = field(default_factory=dict)

    source_pages: bool | None = None  # the option the nodes' texts were written for
    # A node by value -> its JSON: the source nodes are made anew by every compile.
    node_values: dict[Node, str] = field(default_factory=dict)
    # The last compile `entries` were made from: the next may trust its stale pages.
    wiki: Wiki | None = None
    # Each artifact's item texts and whole text, the last time: an edit that reached no item
    # gives the same text object, which a writer compares without reading it.
    _last: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    # The local graphs' shards (`local_graphs`): each node's and edge's text, by id, as above.
    shard_nodes: dict[int, tuple[object, str]] = field(default_factory=dict)
    shard_edges: dict[int, tuple[object, str]] = field(default_factory=dict)
    shard_source_pages: bool | None = None

    def graph(self, graph: Graph, source_pages: bool = True) -> str:
        """`dumps(graph_json(graph))`; without raw-source pages, a source node has no URL."""
        if source_pages != self.source_pages:
            self.nodes, self.node_values, self.source_pages = {}, {}, source_pages
        nodes, self.nodes = _items(
            self.nodes, graph.nodes, _node_json, source_pages, values=self.node_values
        )
        if len(self.node_values) > 2 * len(nodes) + 64:
            self.node_values = {}
        if graph.edge_groups is None:
            edges, self.edges = _items(self.edges, graph.edges, _edge_json, source_pages)
        else:  # one text per page's edges, kept while the page's edges are
            edges, self.edges = _items(
                self.edges, graph.edge_groups, _group_text, source_pages, json=False
            )
        edges = [text for text in edges if text]
        return self._joined(
            "graph",
            [*nodes, "", *edges],
            lambda: f'{{"version":1,"nodes":[{",".join(nodes)}],"edges":[{",".join(edges)}]}}',
        )

    def index(self, wiki: Wiki) -> str:
        kept = self.entries
        made: dict[str, tuple[Page, str, list[str], object, str]] = {}
        texts: list[str] = []
        last, layout = self.wiki, wiki.layout
        # Where a page's links land is kept from the last compile unless it is stale, its URL
        # unless the layout changed: such a page's entry is its last one while it is the same
        # object with the same pointers.
        trusted = (
            last is not None
            and wiki.previous is last
            and wiki.stale is not None
            and layout == last.layout
        )
        stale = wiki.stale or frozenset()
        pointers_of = wiki.pointers
        for key, page in sorted(wiki.pages.items()):
            before = kept.get(page.doc_path)
            pointers = pointers_of[key]
            if (
                trusted
                and before is not None
                and before[0] is page
                and before[3] is pointers
                and page.doc_path not in stale
            ):
                made[page.doc_path] = before
                texts.append(before[4])
                continue
            url, refs = layout.url(page.doc_path), _refs(wiki, page)
            if (
                before is not None
                and before[0] is page
                and before[1] == url
                and before[2] == refs
                and before[3] is pointers
            ):
                text = before[4]
            else:
                text = dumps(_index_entry(wiki, key, page))
            made[page.doc_path] = (page, url, refs, pointers, text)
            texts.append(text)
        self.entries, self.wiki = made, wiki
        prefix = dumps(wiki.config.raw_prefix)
        return self._joined(
            "index",
            [prefix, *texts],
            lambda: f'{{"version":2,"raw_sources":{prefix},"pages":[{",".join(texts)}]}}',
        )

    def local_graphs(self, graph: Graph, source_pages: bool = True) -> dict[str, str]:
        """Each shard of the pages' local graphs (`local_graph_file`) as text, in graph.json's
        shape: for every page whose shard it is, the page, its neighbours and the edges that
        touch it, which is what its local graph draws (a star). Nodes by id, edges in the
        graph's order; each node's and edge's text is kept across rebuilds like the graph's."""
        if source_pages != self.shard_source_pages:
            self.shard_nodes, self.shard_edges = {}, {}
            self.shard_source_pages = source_pages
        node_texts, self.shard_nodes = _items(
            self.shard_nodes, graph.nodes, _node_json, source_pages
        )
        edge_texts, self.shard_edges = _items(
            self.shard_edges, graph.edges, _edge_json, source_pages
        )
        text_of = {node.id: text for node, text in zip(graph.nodes, node_texts, strict=True)}
        touching: dict[str, list[int]] = {}  # node id -> the places of the edges touching it
        for at, edge in enumerate(graph.edges):
            touching.setdefault(edge.source, []).append(at)
            if edge.target != edge.source:
                touching.setdefault(edge.target, []).append(at)
        shards: dict[str, tuple[set[str], set[int]]] = {}
        for node in graph.nodes:
            if node.type != "page":
                continue
            ids, edges = shards.setdefault(local_graph_file(node.id), (set(), set()))
            ids.add(node.id)
            for at in touching.get(node.id, ()):
                edges.add(at)
                edge = graph.edges[at]
                ids.update(end for end in (edge.source, edge.target) if end in text_of)
        made: dict[str, str] = {}
        for name in sorted(shards):
            ids, edges = shards[name]
            nodes = [text_of[i] for i in sorted(ids)]
            links = [edge_texts[at] for at in sorted(edges)]
            # A shard an edit did not reach has the same item texts: its last text, unjoined.
            made[name] = self._joined(
                name,
                [*nodes, "", *links],
                functools.partial(_graph_text, nodes, links),
            )
        for name in [name for name in self._last if name.startswith(LOCAL_GRAPHS)]:
            if name not in made:
                del self._last[name]
        return made

    def _joined(self, name: str, parts: list[str], join: Callable[[], str]) -> str:
        """The artifact's text: the last one when its parts are the same."""
        before = self._last.get(name)
        if before is not None and before[0] == parts:
            return before[1]
        text = join()
        self._last[name] = (parts, text)
        return text


def _items(
    kept: dict[int, tuple[object, str]],
    items: tuple[Any, ...],
    to_json: Callable[[Any, bool], Any],
    source_pages: bool,
    json: bool = True,
    values: dict[Any, str] | None = None,
) -> tuple[list[str], dict[int, tuple[object, str]]]:
    """Each item's text: kept while the item is the same object (or, with `values`, an equal
    one); `to_json` gives the JSON value to write (`json`) or the text itself."""
    made: dict[int, tuple[object, str]] = {}
    texts: list[str] = []
    for item in items:
        before = kept.get(id(item))
        text = before[1] if before is not None and before[0] is item else None
        if text is None and values is not None:
            text = values.get(item)
        if text is None:
            value = to_json(item, source_pages)
            text = dumps(value) if json else value
            if values is not None:
                values[item] = text
        made[id(item)] = (item, text)
        texts.append(text)
    return texts, made


def _node_json(node: Node, source_pages: bool) -> dict[str, Any]:
    url = None if node.type == "source" and not source_pages else node.url
    return {
        "id": node.id,
        "type": node.type,
        "title": node.title,
        "kind": node.kind,
        "tags": list(node.tags),
        "path": node.path,
        "url": url,
        "key": node.id,
    }


def _group_text(edges: tuple[Edge, ...], source_pages: bool) -> str:
    return ",".join(dumps(_edge_json(edge, source_pages)) for edge in edges)


def _edge_json(edge: Edge, source_pages: bool) -> dict[str, Any]:
    return {
        "source": edge.source,
        "target": edge.target,
        "type": edge.type,
        "line": edge.line,
        "via": edge.via,
    }
