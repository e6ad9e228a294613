"""The lexical lane: BM25F over the Whoosh index's key, title, summary, tags and body fields
(the chunk text for chunks), with query-time field weights (`bm25f.py`). A query without terms
or with terms too common to rank by is skipped (`index.common_terms`), for pages and chunks."""

from __future__ import annotations

from dataclasses import dataclass

from groundwiki_sidecar.lanes.adaptive import COVERAGE, TERMS
from groundwiki_sidecar.lanes.base import BaseLane, LaneQuery, Scored
from groundwiki_sidecar.lanes.passage_scores import lexical_passages, rank_pages


@dataclass(frozen=True)
class LexicalLane(BaseLane):
    def rank(self, query: LaneQuery) -> Scored:
        def report(left_out: str) -> None:
            query.bound(self.name, left_out)

        def skipped(reason: str) -> None:
            query.skip(self.name, reason)

        if query.kind == "page":
            require = [("tags", t) for t in query.filters.tags]
            if query.filters.kind:
                require.append(("kind", query.filters.kind))
            weighed: list[tuple[float, int]] = []
            ranked = query.indexer.lexical.rank(
                "page",
                query.text,
                query.depth,
                require=require,
                exclude=[("usage_mode", "never")],
                report=report,
                scopes=query.scopes,
                hidden=[("id", uid) for uid in query.shadowed],
                weight=lambda ceiling, terms: weighed.append((ceiling, terms)),
                skipped=skipped,
                stopword_idf=query.stopword_idf,
            )
            if self.name in query.skipped:  # its passages would be ranked by the same terms
                return ()
            pages = tuple((item, score) for item, score in ranked if item in query.allowed)
            if pages and weighed and weighed[0][0] > 0:
                # How much of the query's weight its best page matches (before the passages
                # are blended in): the fusion weighs the other lanes by it (`adaptive`).
                ceiling, terms = weighed[0]
                query.measured(
                    self.name, **{COVERAGE: min(pages[0][1] / ceiling, 1.0), TERMS: terms}
                )
            return rank_pages(self.name, query, pages, lexical_passages(query))
        else:
            ranked = query.indexer.lexical.rank(
                query.kind,
                query.text,
                query.depth,
                report=report,
                scopes=query.scopes,
                hidden=[("page", uid) for uid in query.shadowed],
                skipped=skipped,
                stopword_idf=query.stopword_idf,
            )
        return tuple((item, score) for item, score in ranked if item in query.allowed)


LEXICAL = LexicalLane(
    name="lexical",
    kinds=("page", "chunk"),
    weight=1.0,
    doc="BM25F over the key, title, summary, tags and body (the text, for chunks)",
)
