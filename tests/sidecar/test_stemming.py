"""The lexical index stems with Snowball's English stemmer, on both sides: pages are indexed
and queries analysed with the same stems, and the stems that Porter's algorithm merged wrongly
stay apart."""

from __future__ import annotations

import threading

from groundwiki_sidecar.index.bm25f import analyse
from groundwiki_sidecar.index.stemming import snowball_english
from groundwiki_sidecar.index.terms import Terms
from groundwiki_sidecar.index.whoosh_index import page_schema


def test_pages_and_queries_get_snowball_stems() -> None:
    schema = page_schema()
    text = "Organizations and news: dying generously"
    indexed = Terms(schema["body"].analyzer)(text)
    assert indexed == ["organiz", "news", "die", "generous"]
    assert [t.decode() for t in analyse(schema, "body", text)] == indexed
    # Porter's stems would have made "organ" and "new" match these pages.
    assert analyse(schema, "body", "organ new") == [b"organ", b"new"]


def test_the_stemmer_gives_the_same_stems_from_many_threads() -> None:
    words = ["running", "generously", "organizations", "hopefulness", "studies"] * 200
    expected = [snowball_english(w) for w in words]
    results: list[list[str]] = []

    def stem_all() -> None:
        results.append([snowball_english(w) for w in words])

    threads = [threading.Thread(target=stem_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4
