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
from groundwiki_sidecar.api.mcp_tools import build_mcp
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from helpers.wikis import page, write_wiki

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


# --- the semantic lane's state: vectors of this view only --------------------------------------


@pytest.fixture(scope="module")
def embedding_sidecar(tmp_path_factory):
    """Alice's and Bob's wiki with the embedding model and no embedding thread: a vector an
    edit makes pending stays pending, so a test sees the lanes' states while it waits. Built
    once (the model and the first vectors take seconds)."""
    root = tmp_path_factory.mktemp("embedded")
    write_wiki(root, {**SHARED, **BOB}, SOURCES, {"sidecar": {"debounce_s": 0.1}})
    service = SidecarService(load_sidecar(root / "mkdocs.yml"))
    assert service.indexer.vectors is not None, service.indexer.semantic_problem
    service.indexer.check_vectors()
    service.sync("start")
    ops = Operations(service)
    yield ops, root / "wiki"
    ops.close()
    service.stop()


@pytest.fixture
def embedded(embedding_sidecar):
    """The embedding sidecar with every vector computed and the embedding healthy."""
    ops, wiki = embedding_sidecar
    ops.service.indexer.embed_pending()
    ops.service.indexer.embed_health.succeeded()
    assert ops.service.indexer.store.pending_count() == 0
    return ops, wiki


def _semantic_run(answer: dict[str, Any]) -> dict[str, Any]:
    return next(lane for lane in answer["lanes"] if lane["name"] == "semantic")


def test_bobs_pages_waiting_for_vectors_leave_alices_semantic_lane_ready(embedded):
    ops, wiki = embedded
    alice = ops.viewing("alice")
    lanes_before = alice.status()["lanes"]
    assert lanes_before["semantic"]["state"] == "ok"
    _edit(ops, wiki / "user/bob/marmalade.md", "\nMarmalade sets once it cools.\n")
    assert ops.viewing("bob").status()["lanes"]["semantic"]["state"] == "warming"
    assert alice.status()["lanes"] == lanes_before
    assert _semantic_run(alice.search("turbine blades crack", 5))["state"] == "ok"
    assert _semantic_run(alice.search_chunks("turbine blades crack", 5))["state"] == "ok"


def test_alices_warming_semantic_lane_counts_her_vectors_only(embedded):
    ops, wiki = embedded
    _edit(ops, wiki / "user/alice/checklist.md", "\nCheck the seals as well.\n")
    _edit(ops, wiki / "user/bob/marmalade.md", "\nMarmalade sets once it cools.\n")
    _edit(ops, wiki / "user/bob/oncall.md", "\nBob hands the pager on.\n")
    semantic = ops.viewing("alice").status()["lanes"]["semantic"]
    assert (semantic["state"], semantic["reason"]) == ("warming", "1 vectors to compute")
    assert semantic["kinds"]["page"] == {"state": "warming", "reason": "1 page vectors to compute"}
    assert semantic["kinds"]["chunk"] == {"state": "ok", "reason": ""}
    run = _semantic_run(ops.viewing("alice").search("turbine blades crack", 5))
    assert (run["state"], run["reason"]) == ("warming", "1 page vectors to compute")
    bobs = ops.viewing("bob").status()["lanes"]["semantic"]
    assert bobs["reason"] == "2 vectors to compute"


# --- failures, the audit trail and /healthz: nothing names or counts another user's work ------

BOBS_FILE = "user/bob/marmalade.md"


def _sync_failed(ops: Operations, exc: BaseException) -> None:
    """Record a failed batch as the indexer does when a sync raises (`Indexer.sync`). The
    compile turns a page it cannot read into that page's finding, so a batch that fails on one
    file fails for a reason outside the wiki (a disk's I/O error, a bug one page trips), which
    a test cannot cause on demand; what it shows each viewer is what is under test."""
    ops.service.indexer.sync_health.failed(exc)


# A failure naming Bob's file by path, and one naming his page by its ID in the indexes.
BOB_FAILURES = {
    "path": lambda wiki: OSError(5, "Input/output error", str(wiki / BOBS_FILE)),
    "uid": lambda wiki: KeyError("user:bob/marmalade"),
}


def _texts(answer: Any) -> str:
    return json.dumps(answer)


@pytest.mark.parametrize("failure", sorted(BOB_FAILURES))
def test_a_sync_failure_on_bobs_file_is_not_named_to_alice(alice_and_bob, failure):
    ops, wiki = alice_and_bob
    _sync_failed(ops, BOB_FAILURES[failure](wiki))
    alice = ops.viewing("alice")
    status = alice.status()
    answer = alice.search("turbine", 5)
    assert status["sync"]["state"] == "failing" and status["sync"]["error"]
    assert answer["freshness"]["sync"] == "failing" and answer["freshness"]["error"]
    assert status["lanes"]["lexical"]["state"] == "stale"
    for said in (_texts(status), _texts(answer)):
        assert "bob" not in said and "marmalade" not in said


@pytest.mark.parametrize("failure", sorted(BOB_FAILURES))
def test_the_shared_scope_is_not_told_a_users_file_either(alice_and_bob, failure):
    ops, wiki = alice_and_bob
    _sync_failed(ops, BOB_FAILURES[failure](wiki))
    shared = ops.viewing(None)
    for said in (_texts(shared.status()), _texts(shared.search("turbine", 5))):
        assert "bob" not in said and "marmalade" not in said


def test_bob_is_told_the_failure_on_his_own_file_whole(alice_and_bob):
    ops, wiki = alice_and_bob
    _sync_failed(ops, BOB_FAILURES["path"](wiki))
    bob = ops.viewing("bob")
    assert str(wiki / BOBS_FILE) in bob.status()["sync"]["error"]
    assert str(wiki / BOBS_FILE) in bob.search("turbine", 5)["freshness"]["error"]


def test_a_failure_on_a_shared_file_is_told_to_every_viewer_whole(alice_and_bob):
    ops, wiki = alice_and_bob
    shared_file = str(wiki / "global/turbine.md")
    _sync_failed(ops, OSError(5, "Input/output error", shared_file))
    for user in (None, "alice", "bob"):
        assert shared_file in ops.viewing(user).status()["sync"]["error"]


def test_an_embedding_failure_on_bobs_page_is_not_named_to_alice(embedded):
    ops, _ = embedded  # no embedding thread, whose next success would clear the failure
    ops.service.indexer.embed_health.failed(ValueError("cannot write page:user:bob/marmalade"))
    status = ops.viewing("alice").status()
    assert status["embedding"]["state"] == "failing" and status["embedding"]["error"]
    assert status["lanes"]["semantic"]["state"] == "failing"
    assert "bob" not in _texts(status) and "marmalade" not in _texts(status)


def test_bobs_requests_do_not_move_alices_audit_figures(alice_and_bob):
    ops, _ = alice_and_bob
    alice = ops.viewing("alice")
    before = alice.status()["audit"]
    bob = build_mcp(ops.viewing("bob"))
    for query in QUERIES:
        asyncio.run(bob.call_tool("search_wiki", {"query": query, "limit": 5}))
    assert ops.service.audit is not None and ops.service.audit.seq >= len(QUERIES)
    assert alice.status()["audit"] == before


def test_healthz_does_not_move_with_bobs_edits_or_name_his_failures(alice_and_bob):
    ops, wiki = alice_and_bob
    before = ops.health()
    _edit(ops, wiki / BOBS_FILE, "\nMarmalade sets once it cools.\n")
    assert ops.health() == before
    _sync_failed(ops, BOB_FAILURES["path"](wiki))
    said = _texts(ops.health())
    assert "bob" not in said and "marmalade" not in said
