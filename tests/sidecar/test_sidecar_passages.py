"""Passages of page bodies in the sidecar: indexed in both lanes, found by page search (as a
hit's snippet) and chunk search, hydrated verbatim, and kept current page by page."""

from __future__ import annotations

import os

import pytest
from groundwiki_sidecar.api.operations import OperationError, Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from groundwiki_sidecar.index.state_store import Item, Store
from groundwiki_sidecar.index.vector_sync import one_kind
from helpers.wikis import page, write_wiki

FILLER = (
    "Corrosion control on the airframe starts with the paint system and the sealants between "
    "the joints, which keep water out of the faying surfaces. "
)
FACT = "The zorblax coefficient of the tail fin is seven point three at cruise."
LONG_BODY = (
    "# Maintenance manual\n\n"
    + FILLER * 14
    + "\n\n## Inspections\n\n"
    + "Inspections follow the flight hours logged since the last heavy check. " * 14
    + "\n\n## Tail fin\n\n"
    + "The tail fin carries the rudder hinges and the antenna mounts. " * 6
    + FACT
    + "\n"
)
NOTES = "# Notes\n\nThe hangar door sticks in winter.\n\nThe zorblax gauge reads high.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("passages")
    write_wiki(
        root,
        {
            "manual.md": page(title="Maintenance manual", summary="How the airframe is kept.",
                              body=LONG_BODY),
            "hangar.md": page(title="Hangar", summary="Where aircraft are kept.",
                              body="# Hangar\n\nThe hangar holds two aircraft.\n"),
            "empty.md": page(title="Empty page", summary="Nothing below the title."),
        },
        {"notes.md": NOTES},
        {"sidecar": {"debounce_s": 0.1}},
    )  # fmt: skip
    service = SidecarService(load_sidecar(root / "mkdocs.yml"))
    service.start(watch=False)
    assert service.wait_embedded(300)
    operations = Operations(service)
    yield root, service, operations
    operations.close()
    service.stop()


def test_a_fact_deep_in_a_long_page_is_its_hits_snippet(served):
    _, service, ops = served
    hit = ops.search("zorblax coefficient of the tail fin", 5)["hits"][0]
    assert hit["key"] == "manual"
    snippet = hit["snippet"]
    assert FACT in snippet["text"]
    assert snippet["heading_path"] == ["Maintenance manual", "Tail fin"]
    passage = service.indexer.snapshot.passages[snippet["id"]]
    assert (snippet["start_line"], snippet["end_line"]) == (passage.start_line, passage.end_line)


def test_a_hit_no_passage_matched_shows_the_pages_first_passage(served):
    _, _, ops = served
    hits = {h["key"]: h for h in ops.search("Where aircraft are kept", 10, lanes=["token"])["hits"]}
    assert hits["hangar"]["snippet"]["text"] == "# Hangar\n\nThe hangar holds two aircraft."


def test_a_page_with_an_empty_body_has_no_snippet(served):
    _, _, ops = served
    hits = {h["key"]: h for h in ops.search("Empty page", 10)["hits"]}
    assert hits["empty"]["snippet"] is None


def test_chunk_search_finds_passages_and_raw_chunks_each_with_its_kind(served):
    _, _, ops = served
    kinds: dict[str, dict] = {}
    for hit in ops.search_chunks("zorblax", 10)["hits"]:
        kinds.setdefault(hit["kind"], hit)  # the best of each kind
    assert set(kinds) == {"source", "passage"}
    assert kinds["source"]["source"] == "notes.md"
    passage = kinds["passage"]
    assert passage["page"] == "manual" and FACT in passage["text"]
    assert passage["path"] == "wiki/manual.md" and passage["url"] == "manual/"


def test_hydrating_a_passage_returns_it_verbatim_at_its_lines(served):
    root, service, ops = served
    passage_id = ops.search("zorblax coefficient", 1)["hits"][0]["snippet"]["id"]
    found = ops.chunks([passage_id])["chunks"][0]
    assert found["kind"] == "passage" and found["id"] == passage_id
    lines = (root / "wiki/manual.md").read_text(encoding="utf-8").split("\n")
    assert found["text"] in "\n".join(lines[found["start_line"] - 1 : found["end_line"]])
    assert found["content_hash"] == service.indexer.snapshot.passages[passage_id].passage_hash


def test_an_unknown_passage_id_gets_the_nearest_real_ones(served):
    _, service, ops = served
    real = next(iter(service.indexer.snapshot.passages))
    with pytest.raises(OperationError) as failed:
        ops.chunks([real[:-2] + "zz"])
    assert real in failed.value.extra["missing"][0]["closest"]


def _bump(path, text):
    path.write_text(text, encoding="utf-8")
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))  # clocks can be coarse


def test_an_edit_changes_only_that_pages_passages_in_the_indexes(tmp_path):
    write_wiki(
        tmp_path,
        {
            "manual.md": page(title="Manual", body=LONG_BODY),
            "hangar.md": page(title="Hangar", body="# Hangar\n\nThe hangar holds two aircraft.\n"),
        },
    )
    service = SidecarService(load_sidecar(tmp_path / "mkdocs.yml"))
    try:
        service.start(watch=False)
        assert service.wait_embedded(300)
        indexer = service.indexer
        before = indexer.lexical.passage_ids()
        manual = {p.id for p in indexer.snapshot.passages_of("manual")}
        hangar = tmp_path / "wiki/hangar.md"
        _bump(hangar, hangar.read_text().replace("two aircraft", "three aircraft"))
        result = service.sync("edit")
        assert (result.updated, result.passages) == (1, 2)  # one passage out, its successor in
        assert service.wait_embedded(300)
        after = indexer.lexical.passage_ids()
        assert manual <= after and len(after) == len(before)
        assert before - after == before - manual - after  # only the hangar's went
        assert indexer.vectors.ids("passage") == after
        status = service.status()  # what /status and `groundwiki status` report
        assert status.passages == status.passage_vectors == len(after)
        assert status.embedding_pending == 0
    finally:
        service.stop()


def test_page_vectors_are_computed_before_passage_vectors(tmp_path):
    store = Store(tmp_path / "store.sqlite", repair=True)
    with store.transaction() as db:
        Store.put_items(
            db,
            [
                Item("chunk:ch_1", "chunk", "c", "e1"),
                Item("passage:pa_1", "passage", "c", "e2"),
                Item("page:zz", "page", "c", "e3"),
            ],
        )
    assert [kind for _, kind, _ in store.pending(3)] == ["page", "passage", "chunk"]
    # A batch holds one kind: an edited page's vector is not held back by its passages'.
    assert [kind for _, kind, _ in one_kind(store.pending(3))] == ["page"]
    assert one_kind([]) == []
    store.close()


def test_the_status_counts_passages_and_their_pending_vectors(tmp_path):
    body = "# Hangar\n\nThe hangar holds two aircraft.\n\n## Doors\n\nTwo doors.\n"
    write_wiki(tmp_path, {"hangar.md": page(title="Hangar", body=body)})
    service = SidecarService(load_sidecar(tmp_path / "mkdocs.yml"), embed=False)
    try:
        service.start(watch=False)  # no model: every vector stays pending
        status = service.status()
        passages = len(service.indexer.snapshot.passages)
        assert (status.pages, status.passages, status.passage_vectors) == (1, passages, 0)
        assert passages >= 1 and status.chunks == 0
        assert status.embedding_pending == status.pages + status.passages
    finally:
        service.stop()
