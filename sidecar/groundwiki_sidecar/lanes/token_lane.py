"""The token lane: overlap of the query's terms with each page's key, title, summary and tags,
computed from the snapshot in memory. It needs no index of its own, so it is always available
and short or odd queries (an identifier, a misspelling, stop words only) still find pages. By
default (`token_lane: fallback`) it is fused only when the lexical lane finds nothing: fusing
it always cost the hybrid 0.01-0.04 nDCG@10 on Cranfield.

In a scoped wiki its terms and their page counts are those of the viewer's pages only: which
words a long question keeps, and what its `bounded` says, must not tell a word of another
user's title or summary from a word no page has (issue 27).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from groundwiki_sidecar.lanes.base import BaseLane, LaneQuery, Scored
from groundwiki_sidecar.lanes.lexical_lane import LEXICAL
from groundwiki_sidecar.lanes.reading import LaneSnapshot

FIELD_WEIGHTS = {"key": 1.0, "title": 1.0, "summary": 0.5, "tags": 0.75}
# A whole question holds hundreds of distinct words, and every page holding any of them is a
# candidate: the lane matches at most this many, the rarest among the pages (what tells pages
# apart), as the lexical lane bounds its terms.
MAX_TOKEN_TERMS = 64
_TERM = re.compile(r"[^\W_]+", re.UNICODE)


def normalise(text: str) -> tuple[str, ...]:
    """Lower-case word terms in first-seen order, each once."""
    seen: dict[str, None] = {}
    for term in _TERM.findall(text.casefold()):
        seen.setdefault(term, None)
    return tuple(seen)


@dataclass(frozen=True)
class TokenLane(BaseLane):
    def prepare(self, snapshot: LaneSnapshot) -> None:
        """The lane's index of a batch's records, made by the sync that published them: from
        nothing (the first after a start) it takes seconds at 10,000 pages, which the first
        query would otherwise wait for."""
        _token_index(snapshot)

    def rank(self, query: LaneQuery) -> Scored:
        seen = _viewer(query.snapshot, query.scopes, query.shadowed)
        terms, left_out = bound_terms(query.snapshot, normalise(query.text), seen=seen)
        if left_out:
            query.bound(self.name, left_out)
        # Only the viewer's pages are ranked (`allowed`): their scores are their own matches.
        return rank_pages(query.snapshot, terms, query.depth, query.allowed)


@dataclass(frozen=True)
class _TokenIndex:
    fields: dict[str, dict[str, frozenset[str]]]  # page key -> field -> its terms
    postings: dict[str, frozenset[str]]  # term -> page keys having it in any field


@lru_cache(maxsize=4)
def _token_index(snapshot: LaneSnapshot) -> _TokenIndex:
    """The lane's terms per page and an inverted index over them, once per snapshot: from the
    last snapshot's index when there is one, for the pages whose record changed (an unchanged
    page keeps its very record object across batches), since building it whole took longer
    than the rest of an edit's batch at 10,000 pages."""
    global _last
    before = _last[0]() if _last is not None else None
    if _last is not None and before is not None and before is not snapshot:
        index = _patched(_last[1], before.pages, snapshot.pages)
    else:
        index = _built(snapshot.pages)
    _last = (weakref.ref(snapshot), index)
    return index


# A weak reference to the last snapshot indexed, and its index.
_last: tuple[weakref.ref[Any], _TokenIndex] | None = None


def _page_terms(page: Any) -> dict[str, frozenset[str]]:
    return {
        "key": frozenset(normalise(page.key)),
        "title": frozenset(normalise(page.title)),
        "summary": frozenset(normalise(page.summary)),
        "tags": frozenset(t for tag in page.tags for t in normalise(tag)),
    }


def _built(pages: Mapping[str, Any]) -> _TokenIndex:
    fields: dict[str, dict[str, frozenset[str]]] = {}
    postings: dict[str, set[str]] = {}
    for key, page in pages.items():
        per_field = fields[key] = _page_terms(page)
        for terms in per_field.values():
            for term in terms:
                postings.setdefault(term, set()).add(key)
    return _TokenIndex(fields, {term: frozenset(keys) for term, keys in postings.items()})


def _patched(
    index: _TokenIndex, before: Mapping[str, Any], after: Mapping[str, Any]
) -> _TokenIndex:
    """`index` (of the pages `before`) for the pages `after`: the same as `_built(after)`."""
    changed = [key for key, page in after.items() if before.get(key) is not page]
    gone = [key for key in before if key not in after]
    if len(changed) + len(gone) > len(after) // 4:
        return _built(after)
    fields = dict(index.fields)
    removed: dict[str, set[str]] = {}
    added: dict[str, set[str]] = {}
    for key in [*changed, *gone]:
        for terms in fields.pop(key, {}).values():
            for term in terms:
                removed.setdefault(term, set()).add(key)
    for key in changed:
        per_field = fields[key] = _page_terms(after[key])
        for terms in per_field.values():
            for term in terms:
                added.setdefault(term, set()).add(key)
    postings = dict(index.postings)
    for term in removed.keys() | added.keys():
        keys = (postings.get(term, frozenset()) - removed.get(term, set())) | added.get(term, set())
        if keys:
            postings[term] = frozenset(keys)
        else:
            postings.pop(term, None)
    return _TokenIndex(fields, postings)


def _viewer(
    snapshot: LaneSnapshot, scopes: tuple[str, ...], shadowed: frozenset[str]
) -> Callable[[str], bool] | None:
    """Whether a page (by uid) is in the viewer's view: of one of `scopes` and not `shadowed`
    by the viewer's own page. None in a wiki without scopes: every page is."""
    if not scopes:
        return None
    pages = snapshot.pages
    return lambda uid: uid not in shadowed and pages[uid].scope in scopes


def bound_terms(
    snapshot: LaneSnapshot,
    terms: tuple[str, ...],
    limit: int = MAX_TOKEN_TERMS,
    seen: Callable[[str], bool] | None = None,
) -> tuple[tuple[str, ...], str]:
    """The query's terms that some page holds, at most `limit` of them: those held by the
    fewest pages, ties by position in the query (deterministic). Also what was left out, as the
    answer's `bounded` says it ("" when nothing was). `seen`: which pages the viewer sees
    (None: every page); terms and their page counts are those of these pages only."""
    postings = _token_index(snapshot).postings
    known = [(len(postings[t]), at, t) for at, t in enumerate(terms) if t in postings]
    if len(known) > limit and seen is not None:
        # Counted over the viewer's pages only when it matters: a question within the bound
        # over every page is within it over any view, and its answer says nothing was left out.
        counted = [(sum(map(seen, postings[t])), at, t) for _, at, t in known]
        known = [item for item in counted if item[0]]
    if len(known) <= limit:
        return tuple(t for _, _, t in known), ""
    kept = sorted(sorted(known)[:limit], key=lambda item: item[1])
    left_out = f"matched the {limit} rarest of the question's {len(known)} known words"
    return tuple(t for _, _, t in kept), left_out


def rank_pages(
    snapshot: LaneSnapshot, terms: tuple[str, ...], depth: int, allowed: Container[str]
) -> Scored:
    """Pages ranked by how many query terms they contain (then by field weight, shorter
    title, key): only pages holding at least one term are looked at."""
    if not terms:
        return ()
    index = _token_index(snapshot)
    wanted = set(terms)
    candidates: set[str] = set()
    for term in wanted:
        candidates |= index.postings.get(term, frozenset())
    scored: list[tuple[float, int, str]] = []
    for key in candidates:
        if key not in allowed:
            continue
        fields = index.fields[key]
        matched = set().union(*(wanted & terms_ for terms_ in fields.values()))
        weight = sum(FIELD_WEIGHTS[name] * len(wanted & terms_) for name, terms_ in fields.items())
        scored.append((-len(matched) - weight / 100, len(fields["title"]), key))
    scored.sort()
    return tuple((key, -score) for score, _, key in scored[:depth])


TOKEN = TokenLane(
    name="token",
    kinds=("page",),
    weight=0.5,
    doc="the query's terms found in each page's key, title, summary and tags",
    grid=(0.0, 0.25, 0.5, 1.0),
    fills_in_for=LEXICAL.name,
)
