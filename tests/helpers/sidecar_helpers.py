"""Helpers for the sidecar tests: small wikis, waiting on real background work, index contents."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groundwiki.core import compile_wiki
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import Sidecar, load_sidecar

from helpers.wikis import page, write_wiki

NOTES = "# Notes\n\nThe wing flutters at high speed.\n\nBoundary layers thicken downstream.\n"
PAPER = (
    "Shock waves form ahead of blunt bodies.\n\nHeat transfer rises near the stagnation point.\n"
)


def small_wiki(root: Path, sidecar: dict[str, Any] | None = None) -> Sidecar:
    options = {"sidecar": {"debounce_s": 0.1, **(sidecar or {})}}
    write_wiki(
        root,
        {
            "index.md": page(kind="overview", title="Home", summary="Start here.", body="# Home\n"),
            "wing.md": page(
                title="Wing flutter",
                summary="Why wings flutter at speed.",
                tags=["aero"],
                body="# Wing flutter\n\nFlutter grows with speed. <!-- from: raw-sources/notes.md#L3 -->\n",
            ),
            "shock.md": page(
                title="Shock waves", summary="Shocks ahead of blunt bodies.", body="# Shocks\n"
            ),
        },
        {"notes.md": NOTES, "paper.txt": PAPER},
        options,
    )
    return load_sidecar(root / "mkdocs.yml")


def indexed(root: Path, embed: bool = False) -> Sidecar:
    """A small wiki indexed once and stopped cleanly."""
    sidecar = small_wiki(root)
    service = SidecarService(sidecar, embed=embed)
    service.start(watch=False)
    if embed:
        assert service.wait_embedded(120)
    service.stop()
    return sidecar


def restarted(sidecar: Sidecar, embed: bool = False) -> SidecarService:
    """The same wiki's sidecar started again on the folder it left."""
    service = SidecarService(sidecar, embed=embed)
    service.start(watch=False)
    return service


def finds(service: SidecarService, word: str, key: str, lanes: tuple[str, ...]) -> bool:
    """Whether a search in these lanes ranks the page `key` among its first five for `word`."""
    ops = Operations(service)
    try:
        return key in [hit["key"] for hit in ops.search(word, 5, lanes=lanes)["hits"]]
    finally:
        ops.close()


def wait_for(condition: Callable[[], bool], timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")


def expected_ids(sidecar: Sidecar) -> tuple[set[str], set[str]]:
    """Page keys and chunk IDs the files call for, from a fresh compile."""
    wiki = compile_wiki(sidecar.config)
    return set(wiki.pages), set(wiki.chunks)


def expected_passages(sidecar: Sidecar) -> set[str]:
    """Passage IDs the files call for: those of every page a search may return."""
    wiki = compile_wiki(sidecar.config)
    return {
        passage.id
        for page in wiki.pages.values()
        if page.usage_mode != "never"
        for passage in wiki.passages_of(page)
    }


def index_ids(service: SidecarService) -> dict[str, set[str]]:
    """What each real index holds right now."""
    lexical_pages, lexical_chunks = service.indexer.lexical.ids()
    vectors = service.indexer.vectors
    assert vectors is not None
    return {
        "lexical_pages": lexical_pages,
        "lexical_chunks": lexical_chunks,
        "vector_pages": vectors.ids("page"),
        "vector_chunks": vectors.ids("chunk"),
    }


def converged(service: SidecarService, sidecar: Sidecar) -> bool:
    pages, chunks = expected_ids(sidecar)
    found = index_ids(service)
    return (
        found["lexical_pages"] == pages
        and found["vector_pages"] == pages
        and found["lexical_chunks"] == chunks
        and found["vector_chunks"] == chunks
    )
