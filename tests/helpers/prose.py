"""Random but reproducible prose for the chunking tests: sentences of the wiki's own words."""

from __future__ import annotations

import random

WORDS = [
    "wiki",
    "page",
    "source",
    "claim",
    "evidence",
    "lock",
    "drift",
    "chunk",
    "token",
    "index",
    "graph",
    "link",
    "alias",
    "summary",
    "provenance",
    "citation",
    "sidecar",
    "lexical",
    "semantic",
    "fusion",
    "rank",
    "query",
    "answer",
    "reader",
    "writer",
]


def prose(seed: int, paragraphs: int, sentences: int = 6) -> str:
    """`paragraphs` paragraphs of `sentences` sentences, the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(paragraphs):
        para = []
        for _ in range(sentences):
            words = [rng.choice(WORDS) for _ in range(rng.randint(6, 22))]
            para.append(" ".join(words).capitalize() + ".")
        out.append(" ".join(para))
    return "\n\n".join(out) + "\n"
