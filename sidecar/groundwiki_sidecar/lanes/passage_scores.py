"""How a page's score in a lane draws on its passages as well as on the page itself.

A lane ranks pages on the page-level document (title, summary, tags, lead or whole body) and,
apart, the passages of page bodies; a page then scores by `combine`, from both lists, each
first normalised by its own best score (a BM25F score over weighted fields and a BM25 score
over one passage are not on one scale; cosine similarities of page and passage vectors are,
nearly). A page the page-level list missed can still come in through its best passage, which
is how a fact deep in a long page is found.

`combine` is the one place that decides how: the evaluation (`groundwiki eval`) measures it.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any

from groundwiki_sidecar.lanes.base import Best, LaneQuery, Scored

Passages = list[tuple[str, str, float]]  # (passage ID, page key, the lane's score), best first
# Passages fetched per page asked for: a page's passages compete with each other for places,
# and the page-level list is cut at the same depth.
PASSAGES_PER_PAGE = 3
# The most neighbours a vector query fetches to make up for items its viewer may not see.
MAX_FETCH = 5_000


def combine(page: float | None, passage: float | None, passages: int) -> float:
    """A page's score from its page-level score and its best passage's, both normalised to
    [0, 1] by their lists' best (0 where the page is not in that list), and how many passages
    its body has. The passage weighs more the more passages the body has, up to half: a one-
    passage body is the page-level document again and adds nothing, while in a long page the
    page-level score (over the whole body, or its lead) says little about the place that
    matches (Callan, passage-level evidence, SIGIR 1994). Measured on Cranfield and LISA,
    whose pages are one or two passages: the lexical lane within 0.003 nDCG@10 of the pages
    alone (a blend of every page at half weight lost 0.006 on Cranfield)."""
    weight = 0.5 * (1.0 - 1.0 / max(passages, 1))
    return (1.0 - weight) * (page or 0.0) + weight * (passage or 0.0)


def with_passages(
    pages: Scored,
    passages: Passages,
    depth: int,
    allowed: Container[str],
    count: Callable[[str], int],
) -> tuple[Scored, dict[str, Best]]:
    """Pages ranked by `combine`, at most `depth`, and each ranked page's best passage.
    `pages` are (key, score) best first; `passages` (passage ID, page key, score) best first;
    `count` gives a page's number of passages; only pages in `allowed` are ranked. Equal scores
    go to the smaller key."""
    page_part = _normalised({key: score for key, score in pages if key in allowed})
    best: dict[str, Best] = {}
    found = [(pid, key, score) for pid, key, score in passages if key in allowed]
    top = max((score for _, _, score in found), default=0.0)
    for passage_id, key, score in found:
        if key not in best:  # the list is best first: a page's first passage is its best
            best[key] = Best(passage_id, score / top if top > 0 else 0.0)
    keys = page_part.keys() | best.keys()
    scored = [
        (key, combine(page_part.get(key), best[key].score if key in best else None, count(key)))
        for key in keys
    ]
    scored.sort(key=lambda pair: (-round(pair[1], 12), pair[0]))
    ranked = tuple(scored[:depth])
    return ranked, {key: best[key] for key, _ in ranked if key in best}


def rank_pages(lane: str, query: LaneQuery, pages: Scored, passages: Passages) -> Scored:
    """A lane's page ranking from its page-level ranking and its passage ranking; each ranked
    page's best passage is left on the query for the hit's snippet."""
    snapshot = query.snapshot
    scored, best = with_passages(
        pages, passages, query.depth, query.allowed, lambda key: len(snapshot.passages_of(key))
    )
    query.found_passages(lane, best)
    return scored


def lexical_passages(query: LaneQuery) -> Passages:
    """The passages BM25 ranks best for the query, best first."""
    hits = query.indexer.lexical.rank(
        "chunk",
        query.text,
        query.depth * PASSAGES_PER_PAGE,
        require=[("kind", "passage")],
        scopes=query.scopes,
        hidden=[("page", uid) for uid in query.shadowed],
    )
    return _on_pages(query, hits)


def semantic_passages(query: LaneQuery, vector: Any) -> Passages:
    """The passages whose vectors are nearest the query's, best first (none without passage
    vectors: `embed_passages: false`, or while they are computed)."""
    vectors = query.indexer.vectors
    if vectors is None or not query.indexer.sidecar.settings.embed_passages:
        return []
    # Passages of pages the viewer does not see are dropped below: fetched as extra neighbours.
    fetch = min(query.depth * PASSAGES_PER_PAGE + query.hidden_passages, MAX_FETCH)
    found = vectors.query("passage", vector, fetch)
    found.sort(key=lambda pair: (round(pair[1], 9), pair[0]))
    return _on_pages(query, [(item, 1.0 - distance) for item, distance in found])


def _on_pages(query: LaneQuery, hits: Iterable[tuple[str, float]]) -> Passages:
    # Only the snapshot's passages: an index can briefly hold one of a newer or older batch.
    passages = query.snapshot.passages
    return [(pid, passages[pid].page, score) for pid, score in hits if pid in passages]


def _normalised(scores: Mapping[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {key: 0.0 for key in scores}
    return {key: score / top for key, score in scores.items()}
