"""The lexical lane's stop-word gate: a query it cannot rank by is skipped, and says why.

Whoosh's analyzer drops the classic English stop words ("and", "the", "with"), so a query made
of them analyses into no terms at all. Other words are common in one index only: "groundwiki
wiki page" in a wiki where every page says it. BM25's idf, ln(1 + (N - df + 0.5) / (df + 0.5)),
is near 0 for a term in every document, and a ranking by such terms is ranking by document
length. The gate reads the mean idf of the query's distinct known terms (those some document of
the viewer's population holds; an unknown term ranks nothing either way) and skips the query
when it is under the `stopword_idf` setting, if another lane can rank the query: a weak ranking
by common words beats an empty answer (`search.query`).

The default, 0.2, was measured (sidecar settings, `stopword_idf`): for large N, mean idf < t is
a geometric mean document share above e^-t, so 0.2 gates terms in some 82 % of documents and up.
Every real query of Cranfield (225, lowest mean 1.60) and LISA (35, lowest 2.92) passes, as do
their commonest terms (Cranfield's "flow", in 52 % of documents, has idf 0.65). It stays under
0.288, a term's idf in a one-document index, so a one-page wiki still ranks; it is over 0.182, a
term in both documents of a two-document index, which ranks nothing apart.
"""

from __future__ import annotations

from collections.abc import Sequence

NO_TERMS = (
    "the query has no words to rank by: stop words (and, the, with...) and punctuation are not "
    "indexed"
)


def mean_idf(idfs: Sequence[float]) -> float:
    return sum(idfs) / len(idfs) if idfs else 0.0


def too_common(idfs: Sequence[float], threshold: float) -> str:
    """Why a query whose known terms have these idfs is not ranked ("" when it is ranked):
    their mean is under `threshold`. No known terms is not too common: such a query is ranked
    and finds nothing, as a word no page holds does."""
    if not idfs or threshold <= 0:
        return ""
    mean = mean_idf(idfs)
    if mean >= threshold:
        return ""
    return (
        f"the query's terms are too common in this index to rank by (mean idf {mean:.3f} < "
        f"{threshold:g}, the stopword_idf setting)"
    )
