"""The lexical index's stemmer: Snowball's English stemmer (Porter2), from PyStemmer.

Whoosh's stemming analyzer ships the original Porter algorithm. Measured as plain BM25 against
bm25s (Lucene's BM25 with Snowball English) on six collections, Porter's stems cost 0.013 to
0.020 nDCG@10 on CISI, MEDLINE and CACM, and gave +0.010 on TIME; with Snowball's the lexical
lane's BM25 lies within ±0.006 of bm25s on all six, with Whoosh's own tokenizer and stop words
kept (retrieval-quality in the wiki). Whoosh also carries a pure-Python Snowball; its stems
differ from the reference C implementation's on a few words (CISI: -0.007).

A module-level function, because Whoosh pickles the schema (and its analyzer) into the index's
table of contents, and a PyStemmer object is not picklable. PyStemmer's stemmers are not safe to
share between threads, and the sidecar analyses in several: one per thread.
"""

from __future__ import annotations

import threading

import Stemmer

_local = threading.local()


def snowball_english(word: str) -> str:
    """`word`'s Snowball English stem (`word` lower-cased already, as the analyzer gives it)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    stem: str = stemmer.stemWord(word)
    return stem
