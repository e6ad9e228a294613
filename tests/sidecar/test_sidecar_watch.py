"""Real watchdog events on a temp wiki keep the real indexes in step with the files."""

from __future__ import annotations

import os

import pytest
from groundwiki_sidecar.api.service import SidecarService
from helpers.sidecar_helpers import converged, index_ids, small_wiki, wait_for
from helpers.wikis import page


@pytest.fixture
def watched(tmp_path):
    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar)
    service.start(watch=True)
    assert service.wait_embedded(120)
    yield service, tmp_path
    service.stop()


def settled(service) -> bool:
    return service.indexer.store.pending_count() == 0 and converged(service, service.sidecar)


def test_creating_a_page_indexes_it_in_both_lanes(watched):
    service, root = watched
    (root / "wiki/nozzle.md").write_text(page(title="Nozzle", summary="Flow in nozzles."))
    wait_for(lambda: "nozzle" in index_ids(service)["vector_pages"], what="the new page")
    wait_for(lambda: settled(service), what="convergence")


def test_editing_deleting_and_renaming_a_page(watched):
    service, root = watched
    wing = root / "wiki/wing.md"
    wing.write_text(page(title="Wing flutter", summary="Flutter, renamed summary."))
    wait_for(
        lambda: service.indexer.snapshot.pages["wing"].summary == "Flutter, renamed summary.",
        what="the edit",
    )
    (root / "wiki/shock.md").unlink()
    wait_for(lambda: "shock" not in index_ids(service)["lexical_pages"], what="the deletion")
    os.rename(wing, root / "wiki/flutter.md")
    wait_for(lambda: "flutter" in index_ids(service)["lexical_pages"], what="the rename")
    wait_for(lambda: settled(service), what="convergence")
    assert "wing" not in index_ids(service)["vector_pages"]


def test_an_editors_atomic_save_by_rename_is_seen(watched):
    service, root = watched
    temp = root / "wiki/.wing.md.swp-save"
    temp.write_text(page(title="Wing flutter", summary="Saved atomically."))
    os.replace(temp, root / "wiki/wing.md")
    wait_for(
        lambda: service.indexer.snapshot.pages["wing"].summary == "Saved atomically.",
        what="the atomic save",
    )
    wait_for(lambda: settled(service), what="convergence")


def test_raw_source_create_edit_rename_delete(watched):
    service, root = watched
    raw = root / "raw-sources"
    (raw / "fresh.txt").write_text("Supersonic inlets swallow shocks.\n")
    wait_for(lambda: settled(service) and _has_text(service, "Supersonic inlets"), what="create")
    (raw / "fresh.txt").write_text("Subsonic diffusers recover pressure.\n")
    wait_for(lambda: settled(service) and _has_text(service, "Subsonic diffusers"), what="edit")
    os.rename(raw / "fresh.txt", raw / "renamed.txt")
    wait_for(
        lambda: (
            settled(service)
            and any(c.source == "renamed.txt" for c in service.indexer.snapshot.chunks.values())
        ),
        what="rename",
    )
    (raw / "renamed.txt").unlink()
    wait_for(lambda: settled(service) and not _has_text(service, "Subsonic"), what="delete")


def test_a_burst_of_500_changes_is_coalesced_into_few_batches(watched):
    service, root = watched
    before = service.indexer.store.generation
    for number in range(500):
        (root / f"wiki/burst-{number:03}.md").write_text(
            page(title=f"Burst {number}", summary=f"Burst page number {number}.")
        )
    wait_for(lambda: len(index_ids(service)["lexical_pages"]) == 503, timeout=120, what="500 pages")
    wait_for(lambda: settled(service), timeout=300, what="convergence")
    batches = service.indexer.store.generation - before
    assert 1 <= batches <= 50  # debounced, not one batch per file


def _has_text(service, needle: str) -> bool:
    texts = service.indexer.store.chunk_texts(list(service.indexer.snapshot.chunks))
    return any(needle in text for text in texts.values())


def test_a_sibling_folder_sharing_a_prefix_is_not_watched(tmp_path):
    from groundwiki_sidecar.index.watcher import Watcher

    (tmp_path / "wiki").mkdir()
    watcher = Watcher([tmp_path / "wiki"], tmp_path / "wiki.lock", tmp_path / ".groundwiki", print)
    assert watcher._wanted(str(tmp_path / "wiki/page.md"))
    assert watcher._wanted(str(tmp_path / "wiki.lock"))
    assert not watcher._wanted(str(tmp_path / "wiki2/page.md"))
    assert not watcher._wanted(str(tmp_path / ".groundwiki/store.sqlite"))


def test_folders_moved_in_and_deleted_whole_are_seen(watched, tmp_path_factory):
    # A folder moved in brings files no event names (only a walk finds them); a folder deleted
    # whole takes its pages with it. Batches otherwise look only at the paths events named.
    service, root = watched
    outside = tmp_path_factory.mktemp("outside") / "engines"
    outside.mkdir()
    (outside / "turbine.md").write_text(page(title="Turbine", summary="Blades that spin."))
    (outside / "inlet.md").write_text(page(title="Inlet", summary="Air comes in."))
    os.rename(outside, root / "wiki/engines")
    wait_for(lambda: {"turbine", "inlet"} <= set(service.indexer.snapshot.pages), what="the folder")
    (root / "wiki/engines/inlet.md").write_text(page(title="Inlet", summary="Air, faster."))
    wait_for(lambda: service.indexer.snapshot.pages["inlet"].summary == "Air, faster.", what="edit")
    for child in (root / "wiki/engines").iterdir():
        child.unlink()
    (root / "wiki/engines").rmdir()
    wait_for(
        lambda: not {"turbine", "inlet"} & set(service.indexer.snapshot.pages), what="deletion"
    )
    wait_for(lambda: settled(service), what="convergence")
