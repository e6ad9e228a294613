"""Answers follow the files during normal editing (real Whoosh, real Chroma, real model): a word
removed from a page stops matching in every thread, a chunk deleted while its vector is computed
leaves no vector behind, and every vector stays findable by its own embedding after a lost store
and after repeated edits."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from groundwiki.sidecar.sync import Indexer
from sidecar_helpers import small_wiki

WORD = "zeppelin"


def test_a_word_removed_from_a_page_stops_matching_in_every_thread(tmp_path):
    sidecar = small_wiki(tmp_path)
    indexer = Indexer(sidecar, None)
    other = ThreadPoolExecutor(max_workers=1)  # one more thread, keeping its own searcher
    wing = tmp_path / "wiki/wing.md"
    original = wing.read_text()

    def matches() -> list[str]:
        return [key for key, _ in indexer.lexical.rank("page", WORD, 10)]

    try:
        indexer.sync("start")
        assert matches() == [] and other.submit(matches).result() == []
        for _ in range(20):
            wing.write_text(original.replace("Flutter grows", f"The {WORD} flutter grows"))
            indexer.sync("edit")
            assert matches() == ["wing"] and other.submit(matches).result() == ["wing"]
            wing.write_text(original)
            indexer.sync("edit")
            assert matches() == [] and other.submit(matches).result() == []
    finally:
        other.shutdown()
        indexer.close()
