"""The semantic lane: cosine over the page vectors (title, summary, tags and, by default, the
body's lead) or the chunk vectors in Chroma.

It can rank only what has vectors: it is `unavailable` without an embedding model or a vector
store, and for chunks with `embed_chunks: false`; `warming` while vectors of the kind are
still to be computed. In a scoped wiki, the vectors of the viewer's pages: Bob's pages waiting
for theirs neither hold Alice's lane back nor show in its count (raw-source chunks are
everyone's, so their vectors count for every viewer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundwiki_sidecar.lanes.adaptive import SIMILARITY
from groundwiki_sidecar.lanes.base import (
    BaseLane,
    LaneQuery,
    LaneState,
    Scored,
    not_indexed_yet,
    ranks_kind,
)
from groundwiki_sidecar.lanes.passage_scores import MAX_FETCH, rank_pages, semantic_passages
from groundwiki_sidecar.lanes.reading import LaneIndexer, LaneView


@dataclass(frozen=True)
class SemanticLane(BaseLane):
    def state(
        self, indexer: LaneIndexer, kind: str | None, view: LaneView | None = None
    ) -> LaneState:
        if (unranked := ranks_kind(self, kind)) is not None:
            return unranked
        if (unindexed := not_indexed_yet(self, indexer, kind)) is not None:
            return unindexed
        if indexer.vectors is None or indexer.embedder is None:
            return LaneState("unavailable", indexer.semantic_problem or "no vector store")
        if kind == "chunk" and not indexer.sidecar.settings.embed_chunks:
            return LaneState("unavailable", "chunk vectors are off (sidecar.embed_chunks)")
        # Per kind: the store counts once per write, not per call (every search and /status
        # ask); the lane as a whole adds its kinds up (a kind without vectors counts none).
        if kind is None:
            pending = sum(_pending(indexer, each, view) for each in self.kinds)
            what = "vectors"
        else:
            pending = _pending(indexer, kind, view)
            what = f"{kind} vectors"
        if pending:
            return LaneState("warming", f"{pending} {what} to compute")
        return LaneState("ok")

    def rank(self, query: LaneQuery) -> Scored:
        vectors, embedder = query.indexer.vectors, query.indexer.embedder
        if vectors is None or embedder is None or not query.text.strip():
            return ()
        vector, left_out = embedder.embed_query_bounded(query.text)
        query.bound(self.name, left_out)
        where: dict[str, Any] | None = None
        fetch = query.depth
        filters = query.filters
        if query.kind == "page":
            if filters.tags or filters.kind or query.hidden > query.depth:
                # Chroma's metadata filter first reads every matching ID from SQLite, which
                # costs more than the vector search itself when most pages match; so it is
                # used for real filters only, and otherwise the few hidden pages are fetched
                # as extra neighbours and dropped here.
                clauses: list[dict[str, Any]] = [{"usage_mode": {"$ne": "never"}}]
                clauses += [{f"tag:{t}": True} for t in filters.tags]
                if filters.kind:
                    clauses.append({"kind": filters.kind})
                where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
                # Pages of scopes the viewer does not see pass the filter: in a scoped wiki
                # they are fetched as extra neighbours too (bounded by MAX_FETCH).
                fetch = query.depth + (query.hidden if query.scopes else 0)
            else:
                fetch = query.depth + query.hidden
        found = vectors.query(query.kind, vector, min(fetch, MAX_FETCH), where)
        if query.kind == "chunk" and query.indexer.sidecar.settings.embed_passages:
            # Chunk search ranks page passages with raw-source chunks: one model, one space.
            fetch = query.depth + query.hidden_passages
            found += vectors.query("passage", vector, min(fetch, MAX_FETCH))
        found.sort(key=lambda pair: (round(pair[1], 9), pair[0]))
        # Cosine similarity (Chroma answers the distance, 1 - similarity).
        scored = tuple((i, 1.0 - d) for i, d in found if i in query.allowed)[: query.depth]
        if query.kind == "page":
            if scored:  # the best page's cosine, before the passages are blended in
                query.measured(self.name, **{SIMILARITY: scored[0][1]})
            return rank_pages(self.name, query, scored, semantic_passages(query, vector))
        return scored


def _pending(indexer: LaneIndexer, kind: str, view: LaneView | None) -> int:
    """Vectors of `kind` still to be computed: in a scoped wiki, of `view`'s pages (counted
    once per write and view, like the store's own count); raw-source chunks and a wiki
    without scopes, every one."""
    if view is None or not view.wiki.scoped or kind == "chunk":
        return indexer.store.pending_count_of(kind)
    return indexer.store.counts_of(view.item_ids)[f"{kind}_pending"]


SEMANTIC = SemanticLane(
    name="semantic",
    kinds=("page", "chunk"),
    weight=0.7,
    doc="cosine similarity of the embedding model's vectors (pages, and chunks by default)",
    embeds=True,
    grid=(0.0, 0.25, 0.5, 0.6, 0.7, 0.8, 1.0, 1.5, 2.0),
)
