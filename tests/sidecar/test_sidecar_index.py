"""The sidecar's indexes (real Whoosh, real Chroma on disk, real model) follow the files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from groundwiki.core.config.wiki_config import ConfigError
from groundwiki.core.read.lead import lead_text
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import settings_from_mapping
from groundwiki_sidecar.embedding.embedders import MiniLMOnnx
from groundwiki_sidecar.index.documents import LEAD_WORDS
from groundwiki_sidecar.index.indexer import Indexer
from helpers.sidecar_helpers import converged, expected_ids, index_ids, small_wiki
from whoosh.qparser import QueryParser


def started(root: Path) -> Iterator[SidecarService]:
    sidecar = small_wiki(root)
    running = SidecarService(sidecar)
    running.start(watch=False)
    assert running.wait_embedded(120)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SidecarService]:
    """A small wiki's sidecar after its first start, for the tests that only read it."""
    yield from started(tmp_path_factory.mktemp("cold"))


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SidecarService]:
    """One of its own, for a test that edits the wiki."""
    yield from started(tmp_path)


def test_a_cold_start_indexes_every_page_and_chunk_in_both_lanes(cold):
    pages, chunks = expected_ids(cold.sidecar)
    found = index_ids(cold)
    assert found["lexical_pages"] == found["vector_pages"] == pages == {"index", "wing", "shock"}
    assert found["lexical_chunks"] == found["vector_chunks"] == chunks and chunks
    status = cold.status()
    assert {name: lane["state"] for name, lane in status.lanes.items()} == {
        "lexical": "ok",
        "semantic": "ok",
        "token": "ok",
    }
    assert (status.pages, status.page_vectors) == (3, 3)
    # One generation per kind the first sync published: pages, then passages, then chunks.
    assert status.generation == 3 and status.embedding_pending == 0


def test_chunk_text_is_kept_once_outside_chroma(cold):
    chunk_id = next(iter(cold.indexer.snapshot.chunks))
    stored = cold.indexer.store.chunk_texts([chunk_id])[chunk_id]
    assert stored == cold.indexer.snapshot.chunks[chunk_id].text
    got = cold.indexer.vectors.chunks.get(
        where={"groundwiki_item": chunk_id}, include=["documents", "metadatas"]
    )
    assert got["documents"] == [None]  # no document stored in Chroma
    assert got["metadatas"][0]["source"] in {"notes.md", "paper.txt"}


def test_pages_are_embedded_from_title_summary_tags_and_the_body_lead(cold):
    record = cold.indexer.snapshot.pages["wing"]
    assert record.embed_text == (
        "Wing flutter\nWhy wings flutter at speed.\nTags: aero\nFlutter grows with speed."
    )
    query = cold.indexer.embedder.embed(["why do wings flutter"])[0]
    nearest = cold.indexer.vectors.query("page", query, limit=3)
    assert nearest[0][0] == "wing"


def test_page_vector_summary_leaves_the_body_out(tmp_path):
    sidecar = small_wiki(tmp_path, {"page_vector": "summary"})
    indexer = Indexer(sidecar, None)
    try:
        indexer.sync("test")
        record = indexer.snapshot.pages["wing"]
    finally:
        indexer.close()
    assert record.embed_text == "Wing flutter\nWhy wings flutter at speed.\nTags: aero"


def test_the_lead_is_prose_without_headings_comments_or_link_syntax():
    body = "# Title\n\nSee [[wing-flutter|flutter]] and [[shock]]. <!-- from: a.md#L1 -->\n" + (
        "word " * 300
    )
    lead = lead_text(body, LEAD_WORDS)
    assert lead.startswith("See flutter and shock. word word")
    assert len(lead.split()) == LEAD_WORDS


def test_a_restart_with_nothing_changed_does_no_indexing_or_embedding(tmp_path):
    sidecar = small_wiki(tmp_path)
    first = SidecarService(sidecar)
    first.start(watch=False)
    assert first.wait_embedded(120)
    first.stop()
    second = SidecarService(sidecar)
    assert len(second.indexer.cache.pages.entries) == 3  # parsed pages kept from the first run
    result = second.start(watch=False)
    assert second.wait_embedded(30)
    try:
        assert result.changed == 0 and result.generation == 3  # the first run's last
        # Reconciled kind by kind (pages first), every kind is in again.
        assert second.indexer.ready_kinds == frozenset({"page", "passage", "chunk"})
        assert second.indexer.embedder.calls == 0  # counted inside the real model wrapper
    finally:
        second.stop()


def test_an_edit_reindexes_only_what_changed(service, tmp_path):
    calls = service.indexer.embedder.calls
    wing = tmp_path / "wiki/wing.md"
    wing.write_text(wing.read_text().replace("# Wing flutter", "# Wing flutter surges"))
    result = service.sync("test")
    assert (result.added, result.updated, result.deleted) == (0, 1, 0)
    assert service.wait_embedded(30)
    assert service.indexer.embedder.calls == calls  # a heading is not in the page's vector
    with service.indexer.lexical.pages.searcher() as searcher:
        query = QueryParser("body", service.indexer.lexical.pages.schema).parse("surges")
        assert [hit["id"] for hit in searcher.search(query)] == ["wing"]
    wing.write_text(wing.read_text().replace("Flutter grows", "Flutter climbs"))
    assert service.sync("test").updated == 1
    assert service.wait_embedded(30)
    assert service.indexer.embedder.calls == calls + 1  # the lead's prose is


def test_a_changed_source_replaces_its_chunks_everywhere(service, tmp_path):
    (tmp_path / "raw-sources/paper.txt").write_text("Entirely new evidence about nozzles.\n")
    service.sync("test")
    assert service.wait_embedded(60)
    assert converged(service, service.sidecar)
    texts = service.indexer.store.chunk_texts(list(service.indexer.snapshot.chunks))
    assert any("nozzles" in text for text in texts.values())
    assert not any("Shock waves form" in text for text in texts.values())


def test_a_model_change_embeds_everything_again(tmp_path):
    sidecar = small_wiki(tmp_path)
    first = Indexer(sidecar, MiniLMOnnx())
    first.sync()
    snapshot = first.snapshot
    total = len(snapshot.pages) + len(snapshot.passages) + len(snapshot.chunks)
    assert first.embed_pending() == total
    first.close()

    class OtherModel(MiniLMOnnx):
        identity = "another-model/for-this-test"

    second = Indexer(sidecar, OtherModel())
    try:
        assert second.vectors.model_changed
        second.sync()
        assert second.store.pending_count() == total  # nothing kept from the first model
        assert second.embed_pending() == total
        assert second.vectors.pages.metadata["groundwiki_model"] == "another-model/for-this-test"
        kinds = ("page", "passage", "chunk")
        assert sum(second.vectors.count(kind) for kind in kinds) == total
    finally:
        second.close()


def test_bad_sidecar_settings_fail_with_the_setting_named():
    with pytest.raises(ConfigError, match="sidecar setting 'port' must be an integer"):
        settings_from_mapping({"port": "eighty"})
    with pytest.raises(ConfigError, match="unknown sidecar setting"):
        settings_from_mapping({"prot": 1})
    with pytest.raises(ConfigError, match="unknown lane 'vector'"):
        settings_from_mapping({"weights": {"vector": 1}})
    assert settings_from_mapping({"weights": {"token": 0}}).weights["token"] == 0.0


def test_the_bundled_settings_example_holds_the_defaults():
    import yaml
    from groundwiki_sidecar.base.settings import SidecarSettings
    from helpers.wikis import ROOT

    data = yaml.safe_load((ROOT / "raw-sources/config/sidecar.example.yml").read_text())
    example = settings_from_mapping(data["plugins"][0]["groundwiki"]["sidecar"])
    assert example == SidecarSettings()


def test_a_lost_lexical_index_is_rebuilt_from_the_files(tmp_path):
    import shutil

    sidecar = small_wiki(tmp_path)
    first = SidecarService(sidecar)
    first.start(watch=False)
    assert first.wait_embedded(120)
    first.stop()
    shutil.rmtree(sidecar.index_dir / "whoosh")  # deleted by hand, or an older layout
    second = SidecarService(sidecar)
    second.start(watch=False)
    try:
        assert second.wait_embedded(30)
        assert converged(second, sidecar)
        assert second.indexer.embedder.calls == 0  # the vectors were still good
    finally:
        second.stop()


def test_sync_results_count_what_was_added_updated_and_deleted(tmp_path):
    from helpers.wikis import page

    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    try:
        first = service.sync("first")
        assert first.added == 3 + len(service.indexer.snapshot.chunks) and first.updated == 0
        (tmp_path / "wiki/new.md").write_text(page(title="New"))
        (tmp_path / "wiki/shock.md").unlink()
        wing = tmp_path / "wiki/wing.md"
        wing.write_text(wing.read_text().replace("Flutter grows", "Flutter rises"))
        second = service.sync("second")
        assert (second.added, second.updated, second.deleted) == (1, 1, 1)
    finally:
        service.stop()


def test_chunk_vectors_can_be_turned_off(tmp_path):
    from groundwiki_sidecar.search.query import QueryEngine

    sidecar = small_wiki(tmp_path, {"embed_chunks": False})
    service = SidecarService(sidecar)
    service.start(watch=False)
    try:
        assert service.wait_embedded(60)
        found = index_ids(service)
        assert found["vector_pages"] == {"index", "wing", "shock"}
        assert found["vector_chunks"] == set() and found["lexical_chunks"]
        assert service.status().lanes["semantic"]["state"] == "ok"  # pages are all embedded
        engine = QueryEngine(service.indexer, {"lexical": 1.0, "semantic": 1.0}, 60)
        ranking = engine.search_chunks("wing flutters", 5)
        states = {run.name: run.state for run in ranking.runs}
        assert states == {"lexical": "ok", "semantic": "unavailable"} and ranking.fused
        engine.close()
    finally:
        service.stop()
