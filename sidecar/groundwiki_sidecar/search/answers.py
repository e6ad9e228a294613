"""What the API answers, built from one snapshot: page, passage and chunk views, hydration by
key or alias, the links around a page, unknown-ID hints, and the citation check of an answer."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundwiki.core.model.records import Page

from groundwiki_sidecar.index.documents import PassageRecord
from groundwiki_sidecar.index.views import View
from groundwiki_sidecar.lanes.base import Best
from groundwiki_sidecar.search.query import Fused, LaneRun, Ranking

QUOTE_WORDS = 8  # a verbatim passage: this many consecutive words of the chunk in the answer
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def flags(view: View, page: Page) -> dict[str, Any]:
    drifted = sorted(
        {s.name for s in view.wiki.states_of(page) if s.status in {"drifted", "moved"}}
    )
    return {
        "always": page.usage_mode == "always" or page.kind == "overview",
        "stale_since": page.stale_since,
        "archived_since": page.archived_since,
        "drifted_sources": drifted,
    }


def page_json(view: View, page: Page, include_body: bool = False) -> dict[str, Any]:
    wiki = view.wiki
    data: dict[str, Any] = {
        "key": page.key,
        "title": page.title,
        "summary": page.summary or "",
        "summary_derived": page.summary_derived,
        "tags": list(page.tags),
        "url": wiki.layout.url(page.doc_path),
        "usage_mode": page.usage_mode,
        "kind": page.kind,
        "pointers": [p.to_json() for p in wiki.pointers_of(page)],
        "flags": flags(view, page),
    }
    if include_body:
        data["body"] = page.body
    return data


def lane_json(
    runs: Sequence[LaneRun], weights: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Each lane's part in a search: its state, and for a lane that answered its time, the
    weight it was fused with for this query and what it measured of the query (the adaptive
    fusion's inputs, `lanes.adaptive`)."""
    out = []
    for run in runs:
        entry: dict[str, Any] = {"name": run.name, "state": run.state}
        if run.reason:
            entry["reason"] = run.reason
        if run.state == "ok":
            entry["took_ms"] = round(run.seconds * 1000, 2)
            if weights is not None and run.name in weights:
                entry["weight"] = round(weights[run.name], 6)
            if run.signals:
                entry["measured"] = {k: round(v, 6) for k, v in sorted(run.signals.items())}
        out.append(entry)
    return out


def page_hit(ranking: Ranking, fused: Fused, explain: bool) -> dict[str, Any]:
    view = ranking.view
    page = view.page(fused.id)
    data = page_json(view, page)
    hit = {
        "key": data["key"],
        "title": data["title"],
        "summary": data["summary"],
        "summary_derived": data["summary_derived"],
        "tags": data["tags"],
        "url": data["url"],
        "score": round(fused.score, 8),
        "lanes": sorted(fused.contributions),
        "snippet": snippet(view, page.uid, ranking.passages),
        "pointers": data["pointers"],
        "flags": data["flags"],
    }
    if explain:
        hit["explain"] = _explain(fused)
    return hit


def snippet(view: View, uid: str, found: Mapping[str, Mapping[str, Best]]) -> dict[str, Any] | None:
    """The page's passage that best matched the query: the one most lanes found best for the
    page, then the one with the higher normalised scores; the page's first passage when no
    lane matched one of its passages; None for a page without any (an empty body)."""
    votes: dict[str, tuple[int, float]] = {}
    for per_page in found.values():
        best = per_page.get(uid)
        if best is not None and best.passage in view.passages:
            count, total = votes.get(best.passage, (0, 0.0))
            votes[best.passage] = (count + 1, total + best.score)
    if votes:
        chosen = min(votes, key=lambda p: (-votes[p][0], -votes[p][1], p))
        passage: PassageRecord | None = view.passages[chosen]
    else:
        passage = next(iter(view.passages_of(uid)), None)
    if passage is None:
        return None
    return {
        "id": passage.id,
        "text": passage.text,
        "heading_path": list(passage.heading_path),
        "start_line": passage.start_line,
        "end_line": passage.end_line,
    }


def passage_json(view: View, passage: PassageRecord) -> dict[str, Any]:
    """A passage as chunk search and chunk hydration answer it: verbatim text, its page, where
    it is in the page file, and its hash."""
    page = view.by_uid.get(passage.page)
    return {
        "id": passage.id,
        "kind": "passage",
        "page": page.key if page is not None else passage.page,
        "path": passage.path,
        "url": view.wiki.layout.url(page.doc_path) if page is not None else "",
        "heading_path": list(passage.heading_path),
        "start_line": passage.start_line,
        "end_line": passage.end_line,
        "content_hash": passage.passage_hash,
        "text": passage.text,
    }


def _chunk_json(view: View, chunk_id: str) -> dict[str, Any] | None:
    """A raw-source chunk (`kind: source`) or a passage of a page (`kind: passage`)."""
    chunk = view.wiki.chunks.get(chunk_id)
    if chunk is not None:
        found = {**chunk.to_json(), "kind": "source"}
        copies = view.wiki.copies_of.get(chunk.source)
        if copies:  # the same text under other names, indexed as this one (dedupe_sources)
            found["copies"] = list(copies)
        return found
    passage = view.passages.get(chunk_id)
    return passage_json(view, passage) if passage is not None else None


def chunk_hit(ranking: Ranking, fused: Fused, explain: bool) -> dict[str, Any]:
    hit = _chunk_json(ranking.view, fused.id)
    assert hit is not None  # the engine ranks only the snapshot's chunks and passages
    hit["score"] = round(fused.score, 8)
    hit["lanes"] = sorted(fused.contributions)
    if explain:
        hit["explain"] = _explain(fused)
    return hit


def _explain(fused: Fused) -> dict[str, Any]:
    return {
        lane: {"rank": rank, "contribution": round(part, 8)}
        for lane, (rank, part) in sorted(fused.contributions.items())
    }


def closest(wanted: str, known: Sequence[str], count: int = 3) -> list[str]:
    """Existing IDs nearest to an unknown one: the longest shared prefix first (IDs are hashes,
    so a truncated or mistyped ID keeps its start), then the nearest in sort order."""
    if not known:
        return []
    at = bisect.bisect_left(known, wanted)
    window = known[max(0, at - count) : at + count]

    def shared(other: str) -> int:
        size = 0
        for a, b in zip(wanted, other, strict=False):
            if a != b:
                break
            size += 1
        return size

    return sorted(window, key=lambda other: (-shared(other), other))[:count]


@dataclass(frozen=True)
class Hydrated:
    found: list[dict[str, Any]]
    missing: list[dict[str, Any]]


def hydrate_pages(view: View, ids: Iterable[str], include_body: bool) -> Hydrated:
    wiki = view.wiki
    found: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    keys = sorted(wiki.pages)
    for requested in ids:
        resolution = wiki.resolver.resolve_name(requested)
        if resolution is None:
            missing.append({"id": requested, "closest": closest(requested.lower(), keys)})
            continue
        page = wiki.pages[resolution.key]
        data = page_json(view, page, include_body)
        found.append({"requested": requested, "via": resolution.via, **data})
    return Hydrated(found, missing)


def hydrate_chunks(view: View, ids: Iterable[str]) -> Hydrated:
    """Raw-source chunks and page passages by ID, verbatim; unknown IDs with the nearest known
    ones of either kind."""
    found: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    known: list[str] | None = None
    for chunk_id in ids:
        hit = _chunk_json(view, chunk_id)
        if hit is not None:
            found.append(hit)
            continue
        if known is None:
            known = sorted([*view.wiki.chunks, *view.passages])
        missing.append({"id": chunk_id, "closest": closest(chunk_id, known)})
    return Hydrated(found, missing)


def links_of(view: View, page: Page, backlinks: Sequence[str]) -> dict[str, Any]:
    wiki = view.wiki
    outgoing = []
    for item in wiki.resolved_links:
        if item.page is not page:
            continue
        key = item.resolution.key if item.resolution else None
        outgoing.append(
            {
                "key": key,
                "target": item.link.target or f"#{item.link.anchor}",
                "type": "ref" if item.link in page.refs else item.link.kind,
                "title": wiki.pages[key].title if key else None,
            }
        )
    sources = [
        {
            "source": state.citation.source,
            "citation": state.name,
            "status": state.status,
            "line": state.citation.at.line,
        }
        for state in wiki.states_of(page)
    ]
    return {
        "key": page.key,
        "outgoing": outgoing,
        "backlinks": [
            {"key": key, "target": key, "type": "backlink", "title": wiki.pages[key].title}
            for key in backlinks
            if key in wiki.pages
        ],
        "sources": sources,
    }


def _ngrams(text: str, size: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    if len(words) < size:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def verify(
    view: View, answer: str, drilled: Sequence[str], page_ids: Sequence[str]
) -> dict[str, Any]:
    """Per chunk: quote, paraphrase, drifted, uncited or none (see the API reference)."""
    wiki = view.wiki
    chunks = wiki.chunks
    drilled_set = list(dict.fromkeys(drilled))
    answer_grams = _ngrams(answer, QUOTE_WORDS)
    answer_words = " ".join(_WORD.findall(answer.casefold()))
    pages: list[Page] = []
    page_report: list[dict[str, Any]] = []
    unknown_pages: list[dict[str, Any]] = []
    for requested in dict.fromkeys(page_ids):
        resolution = wiki.resolver.resolve_name(requested)
        if resolution is None:
            unknown_pages.append(
                {"id": requested, "closest": closest(requested, sorted(wiki.pages))}
            )
        else:
            pages.append(wiki.pages[resolution.key])
    # Chunk IDs each page relies on: its pointers now, and what its lock entries recorded.
    relied: dict[str, set[str]] = {}
    for page in pages:
        ids = {p.chunk_id for p in wiki.pointers_of(page)}
        relied[page.key] = ids | wiki.lock.chunk_ids(page.uid)
    results: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    locked_anywhere = view.locked_chunks
    for chunk_id in drilled_set:
        users = sorted(key for key, ids in relied.items() if chunk_id in ids)
        chunk = chunks.get(chunk_id)
        if chunk is None:
            if chunk_id in locked_anywhere:
                detail = "the chunk's text changed after the page was locked: read the source again"
                results.append(
                    {"id": chunk_id, "status": "drifted", "pages": users, "detail": detail}
                )
            else:
                missing.append({"id": chunk_id, "closest": closest(chunk_id, sorted(chunks))})
            continue
        grams = _ngrams(chunk.text, QUOTE_WORDS)
        words = " ".join(_WORD.findall(chunk.text.casefold()))
        quoted = bool(grams & answer_grams) or (bool(words) and words in answer_words)
        results.append(
            {
                "id": chunk_id,
                "status": "quote" if quoted else "paraphrase",
                "pages": users,
                "detail": "a verbatim passage of the chunk is in the answer"
                if quoted
                else "the chunk is current; no verbatim passage of it is in the answer",
            }
        )
    drilled_ids = set(drilled_set)
    for page in pages:
        ids = relied[page.key]
        touched = ids & drilled_ids
        status = "none" if not touched else "uncited"
        for chunk_id in sorted(ids - drilled_ids):
            if chunk_id not in chunks:
                status_here = "drifted"
                detail = "the page was locked against a chunk that no longer exists"
            else:
                status_here = status
                detail = (
                    "the page was used but none of its evidence was read"
                    if status == "none"
                    else "the page points at this chunk but it was not read"
                )
            results.append(
                {"id": chunk_id, "status": status_here, "pages": [page.key], "detail": detail}
            )
        page_report.append(
            {
                "key": page.key,
                "drilled": len(touched),
                "pointers": len(ids),
                "status": "drilled" if touched else "none",
            }
        )
    return {"chunks": results, "pages": page_report, "missing": missing + unknown_pages}
