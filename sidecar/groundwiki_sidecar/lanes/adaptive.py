"""Fusion weights that adapt to each query, from what the lanes measured while ranking it.

A fixed weighting suits one kind of question only. When a question shares its words with the
pages that answer it, BM25's best page matches much of the query and the lexical lane is the
better judge; when it says the same thing in other words (a user who does not know the wiki's
vocabulary), BM25's best page matches a few common words, and the lanes that compare meaning
are the better judge. On every page search the lanes measure:

- `coverage` (lexical lane): its best page's BM25F score over the most any page could score
  for the query (Σ qtf · idf over the query's terms the index holds; `Bm25f.rank`), in [0, 1];
- `terms` (lexical lane): how many terms the query analyses into. A long question's best page
  matches a smaller share of it, whatever its wording, so coverage is read against length;
- `similarity` (semantic lane): its best page's cosine similarity to the query.

The weights of the lanes other than the lexical one are then multiplied by

    m(q) = M0 · (similarity / coverage)^2 / terms, within [1 / M_MAX, M_MAX].

The form and its constants were fitted on the lanes' rankings of eight collections (the two dev
collections, their paraphrased twins and four other public collections: 870 queries), as the
weight that maximises each query's nDCG@10, then rounded, and checked leave-one-collection-out;
retrieval-quality in the wiki has the figures. A search without both measures (a chunk search,
a lane that did not answer) keeps the configured weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

COVERAGE = "coverage"
TERMS = "terms"
SIMILARITY = "similarity"

M0 = 8.0
M_MAX = 16.0


def multiplier(coverage: float, similarity: float, terms: float) -> float:
    """m(q): what the weights of the lanes other than the lexical one are multiplied by."""
    if coverage <= 0:
        return M_MAX
    value = M0 * (max(similarity, 0.0) / coverage) ** 2 / max(terms, 1.0)
    return min(max(value, 1.0 / M_MAX), M_MAX)


def adapted(runs: Sequence[Any], weights: Mapping[str, float]) -> dict[str, float]:
    """The weights for this query's runs (`LaneRun`s): the configured ones, with every lane but
    the one that measured coverage weighed by `multiplier`; unchanged without both measures."""
    answered = [run for run in runs if run.state == "ok"]
    lexical = next((run for run in answered if COVERAGE in run.signals), None)
    semantic = next((run for run in answered if SIMILARITY in run.signals), None)
    if lexical is None or semantic is None:
        return dict(weights)
    factor = multiplier(
        lexical.signals[COVERAGE],
        semantic.signals[SIMILARITY],
        lexical.signals.get(TERMS, 1.0),
    )
    return {
        name: weight if name == lexical.name else weight * factor
        for name, weight in weights.items()
    }
