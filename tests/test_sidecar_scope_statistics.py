"""Scope isolation of statistics: what a search answers a viewer (hits, scores, explain figures,
what a long query left out) is computed from the pages that viewer can see, never from another
user's. Proven by comparing Alice's answers on a scoped wiki holding Bob's private pages with
her answers on the same wiki without them: byte for byte the same. Real sidecars (Whoosh on
disk, no embedding model), in process."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import page, write_wiki
from groundwiki.sidecar.mcp_tools import build_mcp
from groundwiki.sidecar.operations import Operations
from groundwiki.sidecar.service import SidecarService
from groundwiki.sidecar.settings import load_sidecar

# 64 words only a shared page holds: with one more word a query has 65 distinct terms, one past
# what a lane scores (bm25f.MAX_QUERY_TERMS, token.MAX_TOKEN_TERMS).
SHARED_WORDS = tuple(f"glossa{n:02d}" for n in range(64))
BOB_ONLY = "marmalade"  # in Bob's private pages only
NOWHERE = "quixotry"  # in no page at all

SHARED = {
    "index.md": page(kind="overview", title="Team wiki", summary="Start here.", body="# Team\n"),
    "global/turbine.md": page(
        title="Turbine blades",
        summary="Why turbine blades crack under heat.",
        tags=["engines"],
        body="# Turbine blades\n\nBlades crack when heat cycles repeat.\n\n"
        "## Inspection\n\nInspect each turbine blade for cracks after a hot start.\n",
    ),
    "global/deploy.md": page(
        title="Deploying", summary="How a release is deployed.", body="Deploy with care.\n"
    ),
    "global/oncall.md": page(
        title="On call", summary="Who carries the pager.", body="The pager rotates weekly.\n"
    ),
    "global/glossary.md": page(
        title="Glossary", summary=" ".join(SHARED_WORDS), body=" ".join(SHARED_WORDS) + "\n"
    ),
    "user/alice/checklist.md": page(
        title="Alice's turbine checklist",
        summary="What Alice checks on a turbine before a release.",
        body="Check the turbine blade roots for heat cracks, then deploy the release.\n",
    ),
    # Alice's own deploy page shadows the shared one, for her only.
    "user/alice/deploy.md": page(
        title="Deploying (Alice)", summary="Alice deploys a release.", body="Alice deploys.\n"
    ),
}
BOB = {
    # Words the shared pages hold too (turbine, heat, crack, release), so that counting Bob's
    # pages would move document frequencies and average lengths, and a word only he has.
    "user/bob/marmalade.md": page(
        title="Bob's marmalade turbine",
        summary="A marmalade release of the turbine heat notes.",
        tags=["engines", "marmalade"],
        body="Turbine turbine turbine heat heat crack release marmalade.\n\n"
        + "Marmalade cracks turbine blades under heat. " * 30
        + "\n",
    ),
    # Bob shadows the shared on-call page: Alice still sees the shared one.
    "user/bob/oncall.md": page(
        title="On call (Bob)", summary="Bob's pager turbine.", body="Bob's turbine pager.\n"
    ),
}
SOURCES = {"engines.md": "# Engines\n\nTurbine blades crack under heat.\n\nRelease notes.\n"}
QUERIES = (
    "turbine blades crack under heat",
    "release turbine",
    f"{BOB_ONLY} turbine",
    "deploy a release",
    "pager",
)


def _serve(root: Path, pages: dict[str, str]) -> Operations:
    write_wiki(root, pages, SOURCES, {"sidecar": {"debounce_s": 0.1}})
    service = SidecarService(load_sidecar(root / "mkdocs.yml"), embed=False)
    service.start(watch=False)
    return Operations(service)


@pytest.fixture(scope="module")
def wikis(tmp_path_factory):
    """Alice's operations on the wiki with Bob's pages and on the same wiki without them."""
    served = [
        _serve(tmp_path_factory.mktemp("with_bob"), {**SHARED, **BOB}),
        _serve(tmp_path_factory.mktemp("without_bob"), SHARED),
    ]
    yield tuple(ops.viewing("alice") for ops in served)
    for ops in served:
        ops.close()
        ops.service.stop()
        shutil.rmtree(ops.service.sidecar.index_dir, ignore_errors=True)


def comparable(answer: dict[str, Any]) -> str:
    """The answer as bytes to compare, less what no request can steer and no page decides:
    `freshness.synced_at` is the wall clock when each sidecar last synced (two sidecars never
    sync at the same instant), and each lane's `took_ms` is the time it took on this machine
    (a query's work follows the postings it reads, which Bob's pages lengthen; the answer's
    content does not depend on them)."""
    data = json.loads(json.dumps(answer))
    data.get("freshness", {}).pop("synced_at", None)
    for lane in data.get("lanes", ()):
        lane.pop("took_ms", None)
    return json.dumps(data, sort_keys=True, indent=1)


def test_bobs_pages_are_there_to_leak(wikis):
    with_bob, _ = wikis
    bob = with_bob.viewing("bob").search(f"{BOB_ONLY} turbine", 5, lanes=["lexical"])
    assert bob["hits"][0]["key"] == "marmalade"


@pytest.mark.parametrize(
    "lanes", [["lexical"], ["token"], None], ids=["lexical", "token", "hybrid"]
)
@pytest.mark.parametrize("query", QUERIES)
def test_a_page_search_answers_alice_the_same_with_or_without_bobs_pages(wikis, query, lanes):
    answers = [ops.search(query, 10, explain=True, lanes=lanes) for ops in wikis]
    assert answers[0]["hits"], "the query must find something for the comparison to mean anything"
    assert comparable(answers[0]) == comparable(answers[1])


@pytest.mark.parametrize("query", QUERIES)
def test_a_chunk_search_answers_alice_the_same_with_or_without_bobs_pages(wikis, query):
    answers = [ops.search_chunks(query, 10, explain=True) for ops in wikis]
    assert answers[0]["hits"]
    assert comparable(answers[0]) == comparable(answers[1])


@pytest.mark.parametrize("query", QUERIES)
def test_the_mcp_search_tool_answers_alice_the_same_with_or_without_bobs_pages(wikis, query):
    found = [
        asyncio.run(build_mcp(ops).call_tool("search_wiki", {"query": query, "limit": 10}))
        for ops in wikis
    ]
    answers = [result.structured_content for result in found]
    assert answers[0]["hits"]
    assert comparable(answers[0]) == comparable(answers[1])


@pytest.mark.parametrize("lanes", [["lexical"], ["token"]])
def test_a_word_only_bob_has_bounds_alices_long_query_like_a_word_nobody_has(wikis, lanes):
    with_bob, _ = wikis
    probe = " ".join(SHARED_WORDS)
    candidate = with_bob.search(f"{probe} {BOB_ONLY}", 10, lanes=lanes)
    nowhere = with_bob.search(f"{probe} {NOWHERE}", 10, lanes=lanes)
    assert candidate.get("bounded") == nowhere.get("bounded")
    assert candidate["query_truncated"] == nowhere["query_truncated"]


@pytest.mark.parametrize("lanes", [["lexical"], ["token"]])
def test_a_word_alice_can_see_still_counts_towards_her_bound(wikis, lanes):
    with_bob, _ = wikis
    answer = with_bob.search(" ".join(SHARED_WORDS) + " turbine", 10, lanes=lanes)
    assert answer["query_truncated"] is True and set(answer["bounded"]) == set(lanes)


# --- what a viewer is told of the sidecar's state --------------------------------------------


@pytest.fixture
def alice_and_bob(tmp_path):
    ops = _serve(tmp_path, {**SHARED, **BOB})
    yield ops, tmp_path / "wiki"
    ops.close()
    ops.service.stop()


# What a viewer's /status says of the state of their view, and of work on it.
VIEW_STATE = ("generation", "last_sync", "last_sync_seconds", "texts_embedded", "pending_events")


def _edit(ops: Operations, path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)
    assert ops.service.sync("edit").changed


def test_bobs_private_edits_do_not_move_alices_status_or_answers(alice_and_bob):
    ops, wiki = alice_and_bob
    alice = ops.viewing("alice")
    status = {k: alice.status()[k] for k in VIEW_STATE}
    answer = comparable(alice.search("turbine", 5))
    _edit(ops, wiki / "user/bob/marmalade.md", "\nMore marmalade turbine notes.\n")
    assert {k: alice.status()[k] for k in VIEW_STATE} == status
    assert comparable(alice.search("turbine", 5)) == answer
    assert ops.viewing("bob").status()["generation"] > status["generation"]


def test_a_shared_edit_moves_every_viewers_generation(alice_and_bob):
    ops, wiki = alice_and_bob
    before = {user: ops.viewing(user).status()["generation"] for user in ("alice", "bob")}
    _edit(ops, wiki / "global/turbine.md", "\nBlades are balanced after repair.\n")
    after = {user: ops.viewing(user).status()["generation"] for user in ("alice", "bob")}
    assert all(after[user] > before[user] for user in before)
