"""A page that takes long to index never delays other pages' updates (issue 27): a 5 MB page
dropped into a watched wiki held an unrelated edit back 47 s, while /status said `sync: ok`.

Large pages are indexed after the others, in batches of their own, smallest first; /status
says a sync is running, since when, on how many pages, and how many large ones follow.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from helpers.sidecar_helpers import small_wiki, wait_for
from helpers.wikis import page

LARGE = 20_000  # bytes: a page past it is indexed after the others (the default is larger)
WORDS = ("flow", "shock", "layer", "heat", "drag", "lift", "mach", "nozzle", "inlet", "stall")


def prose(chars: int) -> str:
    """Paragraphs of ordinary words: linear to index, ~10 us a byte (Whoosh's analysis)."""
    pick = random.Random(27).choice
    paragraphs: list[str] = []
    while sum(map(len, paragraphs)) < chars:
        paragraphs.append(" ".join(pick(WORDS) for _ in range(60)) + ".\n\n")
    return "".join(paragraphs)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[SidecarService, Path]]:
    service = SidecarService(small_wiki(tmp_path), embed=False)
    service.indexer.large_page_bytes = LARGE
    service.start(watch=True)
    yield service, tmp_path
    service.stop()


def drop_large_page(root: Path) -> None:
    # ~300 KB: a few seconds to index, long enough to be seen being indexed.
    body = "# Heavy\n\n" + prose(300_000)
    (root / "wiki/heavy.md").write_text(page(title="Heavy", summary="Heavy.", body=body))


def test_an_edit_is_searchable_before_a_large_page_dropped_in_with_it(served):
    service, root = served
    drop_large_page(root)
    (root / "wiki/shock.md").write_text(
        page(title="Shock waves", summary="Shocks.", body="# Shocks\n\nZanzibarite lenses.\n")
    )
    first: list[object] = []

    def edit_indexed() -> bool:
        snapshot = service.indexer.snapshot
        if snapshot is not None and "Zanzibarite" in snapshot.pages["shock"].body:
            first.append(snapshot)
            return True
        return False

    wait_for(edit_indexed, timeout=120, what="the edit")
    assert "heavy" not in set(first[0].pages)  # type: ignore[attr-defined]
    hits = Operations(service).search("zanzibarite", 5, lanes=["lexical"])["hits"]
    assert [hit["key"] for hit in hits] == ["shock"]
    wait_for(lambda: "heavy" in service.indexer.snapshot.pages, timeout=120, what="heavy")


def test_status_says_a_sync_is_running_while_a_large_page_is_indexed(served):
    service, root = served
    drop_large_page(root)
    seen: list[dict] = []

    def running() -> bool:
        sync = service.status().to_json()["sync"]
        if sync.get("running"):
            seen.append(sync)
        return "heavy" in service.indexer.snapshot.pages

    wait_for(running, timeout=120, what="the large page")
    assert seen, "/status never said a sync was running"
    assert seen[0]["running_since"] > 0 and seen[0]["pages"] >= 1
    assert service.status().to_json()["sync"]["running"] is False
