"""The first sync serves agents first: pages (and the lexical page lane) before passages, before
raw-source chunks; each kind is searchable as soon as it is in, and a kind not in yet is
`warming` in every lane, which the answer says."""

from __future__ import annotations

import shutil

from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.startup import Startup
from helpers.sidecar_helpers import indexed, small_wiki


def _lexical(service: SidecarService, kind: str) -> str:
    return lanes.status(service.indexer)["lexical"]["kinds"][kind]["state"]


def test_pages_are_searchable_before_passages_and_chunks_are_indexed(tmp_path):
    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    ops = Operations(service)
    seen: dict[str, dict] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage in seen or stage not in {"passages", "chunks"}:
            return
        snapshot = service.indexer.snapshot
        seen[stage] = {
            "pages": len(snapshot.pages) if snapshot else 0,
            "passages": len(snapshot.passages) if snapshot else 0,
            "chunks": len(snapshot.chunks) if snapshot else 0,
            "page lane": _lexical(service, "page"),
            "chunk lane": _lexical(service, "chunk"),
            "search": [hit["key"] for hit in ops.search("flutter", 5)["hits"]],
            "status": service.status(),
        }
        seen[stage]["chunk search"] = ops.search_chunks("flutter", 5)

    try:
        service.indexer.sync("start", progress)
        passages, chunks = seen["passages"], seen["chunks"]
        # Cutting passages starts once the pages are published: searchable, chunks warming.
        assert passages["pages"] == 3 and passages["passages"] == passages["chunks"] == 0
        assert passages["search"] == ["wing"]
        assert (passages["page lane"], passages["chunk lane"]) == ("ok", "warming")
        assert passages["status"].warming and passages["status"].lanes["lexical"]["state"] == (
            "warming"
        )
        assert "chunks not indexed yet" in passages["status"].lanes["lexical"]["reason"]
        # A chunk search answers with every lane saying why it took no part: not a bare
        # empty answer that would read as "no evidence".
        early = passages["chunk search"]
        assert early["hits"] == []
        assert {lane["state"] for lane in early["lanes"]} == {"warming"}
        assert all("chunks not indexed yet" in lane["reason"] for lane in early["lanes"])
        # Chunks are cut once the passages are in.
        assert chunks["passages"] > 0 and chunks["chunks"] == 0
        assert chunks["chunk lane"] == "warming"
        # Done: every kind in, every lane ready for it, one generation per kind published.
        status = service.status()
        assert not status.warming and status.starting is None
        assert (_lexical(service, "page"), _lexical(service, "chunk")) == ("ok", "ok")
        assert status.generation == 3
        found = {hit["id"] for hit in ops.search_chunks("flutter", 5)["hits"]}
        assert found & set(service.indexer.snapshot.chunks)  # raw-source chunks are found now
    finally:
        ops.close()
        service.stop()


def test_a_restart_answers_from_the_last_runs_indexes_before_checking_the_files(tmp_path):
    sidecar = indexed(tmp_path)
    wing = sidecar.config.docs_dir / "wing.md"
    wing.write_text(wing.read_text().replace("Why wings flutter", "Why wings buzz"))
    (sidecar.config.docs_dir / "gust.md").write_text(
        "---\ntitle: Gust loads\nsummary: Loads from gusts.\n---\n# Gusts\n"
    )
    service = SidecarService(sidecar, embed=False)
    ops = Operations(service)
    try:
        assert service.indexer.serve_persisted()
        # Every kind answers at once, as the last run left it: the edit and the new page are
        # not read yet.
        assert not service.indexer.warming
        assert [hit["key"] for hit in ops.search("flutter", 5)["hits"]] == ["wing"]
        assert ops.search("buzz", 5)["hits"] == []
        assert ops.search_chunks("flutter", 5)["hits"]
        assert "gust" not in service.indexer.snapshot.pages
        # The first sync then reconciles the files, as any sync does.
        result = service.sync("start")
        assert (result.added, result.updated) == (1, 1)
        assert [hit["key"] for hit in ops.search("buzz", 5)["hits"]] == ["wing"]
        assert "gust" in service.indexer.snapshot.pages
    finally:
        service.stop()


def test_a_lexical_index_that_disagrees_with_the_manifest_is_not_served_before_the_sync(
    tmp_path,
):
    sidecar = indexed(tmp_path)
    shutil.rmtree(sidecar.index_dir / "whoosh")  # lost: rebuilt empty, unlike the manifest
    service = SidecarService(sidecar, embed=False)
    try:
        assert not service.indexer.serve_persisted()
        assert service.indexer.warming
    finally:
        service.stop()


def test_a_held_kind_waits_while_edits_to_the_pages_are_indexed_then_the_sync_goes_on(tmp_path):
    # The mechanism under the service's hold (`Indexer.hold_kind`), driven by hand.
    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    indexer = service.indexer
    ops = Operations(service)
    indexer.hold_kind = lambda kind: "held by the test"
    try:
        indexer.sync("start")
        assert indexer.ready_kinds == {"page"} and indexer.warming
        assert [hit["key"] for hit in ops.search("flutter", 5)["hits"]] == ["wing"]
        # An edit while passages are held: its page is searchable, the passages still wait.
        wing = sidecar.config.docs_dir / "wing.md"
        wing.write_text(wing.read_text().replace("Flutter grows", "Buffeting grows"))
        indexer.sync("edit", changes=frozenset({wing}))
        assert [hit["key"] for hit in ops.search("buffeting", 5)["hits"]] == ["wing"]
        assert indexer.ready_kinds == {"page"} and not indexer.snapshot.passages
        # Let go: the next batch goes on with the passages and chunks, of the edited text.
        indexer.hold_kind = None
        indexer.sync("start")
        assert not indexer.warming
        texts = [p.text for p in indexer.snapshot.passages.values() if p.page == "wing"]
        assert any("Buffeting grows" in text for text in texts)
        assert ops.search_chunks("flutter", 5)["hits"]
    finally:
        ops.close()
        service.stop()


class _Watched(Startup):
    """A start whose progress is also noted with how many page vectors were pending then."""

    def __init__(self, service: SidecarService) -> None:
        super().__init__(quiet=True)
        self.service = service
        self.noted: list[tuple[str, int]] = []

    def update(self, stage: str, done: int, total: int) -> None:
        pending = self.service.indexer.store.pending_count_of("page")
        self.noted.append((stage, pending))
        super().update(stage, done, total)


def _pending_when_cut(service: SidecarService, stages: set[str]) -> list[int]:
    """The service's first sync run to its end: the page vectors pending each time it reported
    cutting one of `stages`. The service is left running (the caller stops it)."""
    startup = _Watched(service)
    service.start_in_background(startup, watch=False)
    service._starting.join(timeout=300)
    assert not service.indexer.warming
    return [pending for stage, pending in startup.noted if stage in stages]


def test_the_service_computes_the_page_vectors_before_it_cuts_passages(tmp_path):
    service = SidecarService(small_wiki(tmp_path))  # the real model
    try:
        cutting = _pending_when_cut(service, {"passages", "chunks"})
        assert cutting and set(cutting) == {0}  # every page vector was in before
        assert service.wait_embedded(120)  # and the passages' and chunks' after them
    finally:
        service.stop()


def test_passages_wait_for_the_page_vectors_a_bounded_time(tmp_path, monkeypatch):
    from groundwiki_sidecar.api import service as service_module

    monkeypatch.setattr(service_module, "HOLD_AT_MOST_S", 0.0)  # the bounds already reached
    monkeypatch.setattr(service_module, "HOLD_NEVER_PAST_S", 0.0)
    service = SidecarService(small_wiki(tmp_path))
    try:
        cutting = _pending_when_cut(service, {"passages"})
        assert cutting and cutting[0] > 0  # cut while the page vectors were still being made
    finally:
        service.stop()


def test_past_the_bound_the_passages_wait_for_page_vectors_that_are_nearly_done(
    tmp_path, monkeypatch
):
    """Past HOLD_AT_MOST_S, page vectors that the measured rate finishes within
    HOLD_TO_FINISH_S (here: any) still come first."""
    from groundwiki_sidecar.api import service as service_module

    monkeypatch.setattr(service_module, "HOLD_AT_MOST_S", 0.0)
    monkeypatch.setattr(service_module, "HOLD_TO_FINISH_S", 1e9)
    service = SidecarService(small_wiki(tmp_path))
    try:
        cutting = _pending_when_cut(service, {"passages", "chunks"})
        assert cutting and set(cutting) == {0}  # every page vector was in before
    finally:
        service.stop()
