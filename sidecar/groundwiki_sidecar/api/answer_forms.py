"""How an answer is written for its reader, and what it costs them in tokens.

Every operation answers the same fields in three forms (`parameters.FORMATS`): `json`, `compact`
(JSON without the fields that are empty: null, false, "", [] and {}; a reader takes a missing
field for its empty value) and `toon`, token-oriented object notation (the `toon-format`
package), where a list of like objects is one header and a row each. Tokens are counted with
the embedding model's tokenizer (`core/sources/tokens.py`): the one tokenizer this project ships,
so a count is the same on every machine and offline; an agent's own model counts differently, but
in proportion.
"""

from __future__ import annotations

import json
import re
from typing import Any

from groundwiki.core.sources.tokens import count_tokens

_EMPTY: tuple[Any, ...] = (None, False, "", [], {})


def compacted(value: Any) -> Any:
    """`value` without its empty fields, at every depth (items of a list stay: a position in
    a list is information)."""
    if isinstance(value, dict):
        kept = {key: compacted(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if not _is_empty(item)}
    if isinstance(value, list | tuple):
        return [compacted(item) for item in value]
    return value


def _is_empty(value: Any) -> bool:
    # `0` and `0.0` are values (a rank, a score), not emptiness: compare by type too.
    return any(value == empty and type(value) is type(empty) for empty in _EMPTY)


def loose(schema: Any) -> Any:
    """`schema` as the answers of any form hold it: without `required` at any depth (a compact
    answer leaves its empty fields out), everything else as the catalogue says."""
    if isinstance(schema, dict):
        return {key: loose(value) for key, value in schema.items() if key != "required"}
    if isinstance(schema, list):
        return [loose(item) for item in schema]
    return schema


def briefed(answer: dict[str, Any], detail: str) -> dict[str, Any]:
    """A page search's answer with `brief` hits when asked for (parameters.DETAIL)."""
    if detail != "brief":
        return answer
    return {**answer, "hits": [brief_hit(hit) for hit in answer["hits"]]}


def brief_hit(hit: dict[str, Any]) -> dict[str, Any]:
    """What picks a page and leads to its text: the snippet's passage ID, then its pointers'."""
    snippet = hit.get("snippet") or {}
    return {
        "key": hit["key"],
        "title": hit["title"],
        "summary": hit["summary"],
        "score": hit["score"],
        "flags": hit["flags"],
        "chunk_ids": [
            *([snippet["id"]] if snippet.get("id") else []),
            *(pointer["chunk_id"] for pointer in hit["pointers"]),
        ],
        **({"explain": hit["explain"]} if "explain" in hit else {}),
    }


def as_json(answer: Any) -> str:
    return json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def written(answer: Any, form: str) -> str:
    """`answer` as text in `form` (json, compact or toon)."""
    if form == "toon":
        return toon(answer)
    if form == "compact":
        return as_json(compacted(answer))
    return as_json(answer)


def toon(value: Any) -> str:
    """TOON with tabs between a table's cells: a tab is whitespace, which no tokenizer counts,
    and it needs no quotes around the commas of prose (a comma delimiter quotes every summary
    that has one)."""
    # Imported here: the catalogue imports this module, and commands that run without the
    # sidecar's libraries (lint, rename) read the catalogue.
    import toon_format

    return toon_format.dumps(value, delimiter="\t")


# The tokenizer always cuts at a double quote (punctuation: a word piece of its own) and at a
# line break (whitespace: none), so a text's count is the sum of its pieces' between them plus
# one per quote. An answer's strings (titles, summaries, snippets, keys) repeat from answer to
# answer; counting a 17 KB search answer whole took 24 ms, more than the search itself.
_PIECE_ENDS = re.compile(r'["\n]')
_PIECE_COUNTS: dict[str, int] = {}
PIECES_KEPT = 50_000  # about 20 MB of pieces at most; emptied when full


def tokens(text: str) -> int:
    """The word pieces `text` costs, without the two markers the model adds around a text;
    each piece between quotes and line breaks is counted once and remembered."""
    pieces = _PIECE_ENDS.split(text)
    counts: dict[str, int] = {}
    missing: list[str] = []
    for piece in dict.fromkeys(pieces):
        known = _PIECE_COUNTS.get(piece)
        if known is None:
            missing.append(piece)
        else:
            counts[piece] = known
    if missing:
        counted = {p: max(n - 2, 0) for p, n in zip(missing, count_tokens(missing), strict=True)}
        if len(_PIECE_COUNTS) + len(counted) > PIECES_KEPT:
            _PIECE_COUNTS.clear()  # answers run in threads: each reads its own `counts`
        _PIECE_COUNTS.update(counted)
        counts.update(counted)
    return text.count('"') + sum(counts[piece] for piece in pieces)
