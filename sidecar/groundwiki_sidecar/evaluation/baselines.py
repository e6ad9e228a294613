"""Two outside BM25 rankers on the same text as the wiki pages' bodies, so the lexical lane is
checked against known-good implementations: `bm25s` (Lucene's BM25, k1 1.2, b 0.75, Snowball
English stemmer, English stop words) and SQLite FTS5's `bm25()` (porter tokenizer, no stop
words, the query's terms OR-ed)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping

_TERM = re.compile(r"[^\W_]+", re.UNICODE)


def bm25s_rankings(
    texts: Mapping[str, str], queries: Mapping[str, str], depth: int
) -> dict[str, tuple[str, ...]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    ids = list(texts)
    corpus = bm25s.tokenize(
        [texts[i] for i in ids], stopwords="en", stemmer=stemmer, show_progress=False
    )
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(corpus, show_progress=False)
    vocabulary = corpus.vocab
    rankings: dict[str, tuple[str, ...]] = {}
    for query_id, text in queries.items():
        tokens = bm25s.tokenize(
            [text], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )[0]
        known = [t for t in tokens if t in vocabulary]
        if not known:
            rankings[query_id] = ()
            continue
        docs, scores = retriever.retrieve(
            [known], k=min(depth, len(ids)), show_progress=False, n_threads=1
        )
        pairs = [(ids[d], float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        pairs.sort(key=lambda p: (-round(p[1], 9), p[0]))  # ties by ID, as the engine does
        rankings[query_id] = tuple(doc for doc, _ in pairs)
    return rankings


def fts5_rankings(
    texts: Mapping[str, str], queries: Mapping[str, str], depth: int
) -> dict[str, tuple[str, ...]]:
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body, tokenize='porter')")
        db.executemany("INSERT INTO docs (id, body) VALUES (?, ?)", list(texts.items()))
        rankings: dict[str, tuple[str, ...]] = {}
        for query_id, text in queries.items():
            terms = dict.fromkeys(_TERM.findall(text.casefold()))
            if not terms:
                rankings[query_id] = ()
                continue
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
            rows = db.execute(
                "SELECT id FROM docs WHERE docs MATCH ? ORDER BY round(bm25(docs), 9), id LIMIT ?",
                (match, depth),
            ).fetchall()
            rankings[query_id] = tuple(row[0] for row in rows)
        return rankings
    finally:
        db.close()
