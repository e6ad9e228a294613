"""A prompt-ready block for a question, within a token budget: the read path of the two-layer
design, wiki pages first and raw chunks on demand by ID.

The block holds the wiki's overview (its overview pages and those marked usage_mode: always),
then the best pages of a search, best first: each page's title, summary, the start of its best
snippet and the chunk IDs of its evidence. Entries are added greedily by score: the whole block
is written and counted after each, and an entry that would pass the budget is left out (a later,
shorter one may still fit). The count is the written block's, so the budget holds in every
style, whatever the quoting and escaping of that style cost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundwiki.core.read.provenance import without_comments

from groundwiki_sidecar.api.answer_forms import tokens, toon

# The start of a snippet a block carries: enough to judge the page, not to read it (its chunk
# IDs are for that).
SNIPPET_CHARS = 240


@dataclass
class Packed:
    block: str
    tokens: int
    overview: list[str] = field(default_factory=list)
    hits: list[dict[str, Any]] = field(default_factory=list)
    left_out: int = 0


def _shortened(text: str, chars: int) -> str:
    # Provenance comments are what the chunk IDs beside the snippet already say.
    text = " ".join(without_comments(text).split())
    if len(text) <= chars:
        return text
    cut = text[:chars].rsplit(" ", 1)[0] or text[:chars]
    return cut + " …"


def _overview_entry(page: Mapping[str, Any]) -> dict[str, Any]:
    return {"key": page["key"], "title": page["title"], "summary": page["summary"]}


def _hit_entry(hit: Mapping[str, Any]) -> dict[str, Any]:
    snippet = hit.get("snippet") or {}
    chunk_ids = [pointer["chunk_id"] for pointer in hit.get("pointers", ())]
    return {
        "key": hit["key"],
        "title": hit["title"],
        "score": round(float(hit["score"]), 4),
        "summary": hit["summary"],
        "snippet": _shortened(snippet.get("text", ""), SNIPPET_CHARS),
        # The snippet's own passage first: the page's text behind the snippet, by ID.
        "chunk_ids": " ".join([*([snippet["id"]] if snippet.get("id") else []), *chunk_ids]),
    }


def _markdown(
    question: str, overview: Sequence[dict[str, Any]], hits: Sequence[dict[str, Any]]
) -> str:
    lines = [f"# Context for: {' '.join(question.split())}"]
    if overview:
        lines += ["", "## Overview"]
        lines += [
            f"- **{page['title']}** (`{page['key']}`): {page['summary']}" for page in overview
        ]
    if hits:
        lines += ["", "## Pages, best first"]
        for n, hit in enumerate(hits, 1):
            lines += ["", f"### {n}. {hit['title']} (`{hit['key']}`, score {hit['score']})"]
            if hit["summary"]:
                lines.append(hit["summary"])
            if hit["snippet"]:
                lines.append(f"> {hit['snippet']}")
            if hit["chunk_ids"]:
                ids = ", ".join(f"`{chunk_id}`" for chunk_id in hit["chunk_ids"].split())
                lines.append(f"Evidence (get_chunks): {ids}")
    return "\n".join(lines) + "\n"


def _structured(
    question: str, overview: Sequence[dict[str, Any]], hits: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    return {"question": " ".join(question.split()), "overview": list(overview), "hits": list(hits)}


STYLES: dict[str, Callable[[str, Sequence[dict[str, Any]], Sequence[dict[str, Any]]], str]] = {
    "markdown": _markdown,
    "toon": lambda q, o, h: toon(_structured(q, o, h)) + "\n",
    "json": lambda q, o, h: json.dumps(_structured(q, o, h), ensure_ascii=False) + "\n",
}


def pack(
    question: str,
    overview_pages: Sequence[Mapping[str, Any]],
    hits: Sequence[Mapping[str, Any]],
    budget: int,
    style: str,
) -> Packed:
    """The block of `style` for `question`, never over `budget` tokens: the overview pages
    first, then the hits in their order, each kept only if the block still fits with it."""
    write = STYLES[style]
    overview: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    block = write(question, overview, kept)
    cost = tokens(block)
    if cost > budget:  # not even the question fits: an empty block, which costs nothing
        return Packed("", 0, left_out=len(hits))
    for page in overview_pages:
        trial = write(question, [*overview, _overview_entry(page)], kept)
        trial_cost = tokens(trial)
        if trial_cost <= budget:
            overview.append(_overview_entry(page))
            block, cost = trial, trial_cost
    chosen: list[Mapping[str, Any]] = []
    for hit in hits:
        entry = _hit_entry(hit)
        trial = write(question, overview, [*kept, entry])
        trial_cost = tokens(trial)
        if trial_cost <= budget:
            kept.append(entry)
            chosen.append(hit)
            block, cost = trial, trial_cost
    return Packed(
        block,
        cost,
        overview=[page["key"] for page in overview],
        hits=[
            {
                "key": entry["key"],
                "title": entry["title"],
                "score": entry["score"],
                "chunk_ids": entry["chunk_ids"].split(),
            }
            for entry in kept
        ],
        left_out=len(hits) - len(chosen),
    )
