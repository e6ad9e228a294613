"""nDCG@10, Recall@100 and MRR@10 by ir-measures (trec_eval's definitions), averaged over every
judged query: a query a system answers with nothing counts as zero, not as absent."""

from __future__ import annotations

from collections.abc import Mapping

import ir_measures
from ir_measures import RR, R, nDCG

from groundwiki_sidecar.evaluation.collection import Collection

MEASURES = (nDCG @ 10, R @ 100, RR @ 10)


class Scorer:
    """The judgments loaded into trec_eval once, for scoring many runs (the fusion grid)."""

    def __init__(self, collection: Collection) -> None:
        self.collection = collection
        qrels = [
            ir_measures.Qrel(query_id, doc_id, grade)
            for query_id, judged in sorted(collection.qrels.items())
            for doc_id, grade in sorted(judged.items())
        ]
        self._evaluator = ir_measures.evaluator(MEASURES, qrels)

    def score(self, ranking: Mapping[str, tuple[str, ...]]) -> dict[str, float]:
        run = [
            # ir-measures orders by score: rank 1 gets the highest.
            ir_measures.ScoredDoc(query_id, doc_id, float(len(docs) - rank))
            for query_id, docs in sorted(ranking.items())
            for rank, doc_id in enumerate(docs)
        ]
        totals = dict.fromkeys(MEASURES, 0.0)
        for metric in self._evaluator.iter_calc(run):
            if metric.query_id in self.collection.queries:
                totals[metric.measure] += metric.value
        count = len(self.collection.queries)
        return {str(m): totals[m] / count for m in MEASURES}


def score_runs(
    collection: Collection, runs: Mapping[str, Mapping[str, tuple[str, ...]]]
) -> dict[str, dict[str, float]]:
    scorer = Scorer(collection)
    return {name: scorer.score(ranking) for name, ranking in runs.items()}
