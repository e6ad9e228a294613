"""Scopes in every operation of the sidecar (real Whoosh on disk): search, hydration, links,
overview, verify, chunks and status answer from the viewer's scope and never hint at another
user's pages. Proven on the scoped example wiki (tests/fixtures/scoped); the core and lint are
tested in tests/core/test_scopes.py, the site in tests/site/test_site_scopes.py."""

from __future__ import annotations

import json

import pytest
from helpers.scoped import ALICE_WORDS, BOB_WORDS, scoped_copy


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    from groundwiki_sidecar.api.operations import Operations
    from groundwiki_sidecar.api.service import SidecarService
    from groundwiki_sidecar.base.settings import load_sidecar

    root = tmp_path_factory.mktemp("scoped")
    scoped_copy(root)
    service = SidecarService(load_sidecar(root / "mkdocs.yml"), embed=False)
    service.start(watch=False)
    operations = Operations(service)
    yield operations
    operations.close()
    service.stop()


VIEWERS = {"alice": ALICE_WORDS, "bob": BOB_WORDS, None: ()}


def others_words(user: str | None) -> tuple[str, ...]:
    return tuple(w for other, words in VIEWERS.items() if other != user for w in words)


def assert_no_leak(answer: object, user: str | None) -> None:
    text = json.dumps(answer).lower()
    for word in others_words(user):
        assert word not in text, (user, word)
    if user != "alice":
        assert "scratch" not in text and "user:alice" not in text and "user/alice" not in text
    if user != "bob":  # "rollback" is a word of the shared runbook too: bob's page by name
        assert '"rollback"' not in text and "user:bob" not in text and "user/bob" not in text


@pytest.mark.parametrize("user", ["alice", "bob", None])
def test_search_answers_from_the_viewers_scope(ops, user):
    mine = ops.viewing(user)
    for word in ("tangerine", "marmalade", "quince", "deploy", "rollback", "release"):
        for answer in (mine.search(word, 10, explain=True), mine.search_chunks(word, 10, True)):
            assert_no_leak(answer["hits"], user)
    deploy = mine.search("deploy checklist", 10)["hits"]
    titles = [hit["title"] for hit in deploy if hit["key"] == "deploy"]
    assert titles == (["Deploying (Alice's notes)"] if user == "alice" else ["Deploying"])
    found = mine.search("tangerine canary", 5)["hits"]
    assert bool(found) == (user == "alice")
    chunks = mine.search_chunks("marmalade rollback", 5)["hits"]
    assert any(hit.get("page") == "rollback" for hit in chunks) == (user == "bob")


@pytest.mark.parametrize("user", ["alice", "bob", None])
def test_hydration_links_overview_and_verify_answer_from_the_viewers_scope(ops, user):
    from groundwiki_sidecar.api.operations import OperationError

    mine = ops.viewing(user)
    deploy = mine.pages(["deploy"], include_body=True)["pages"][0]
    assert ("tangerine" in deploy["body"]) == (user == "alice")
    assert_no_leak(mine.pages(["deploy", "oncall"], include_body=True), user)
    for other in ("scratch", "rollback"):
        if (other == "scratch") == (user == "alice") or (other == "rollback") == (user == "bob"):
            continue
        with pytest.raises(OperationError) as refused:
            mine.pages([other])
        # What was asked is echoed; nothing else of the other user's may be.
        told = json.dumps([refused.value.message, refused.value.extra]).replace(other, "")
        assert_no_leak(told, user)
        assert refused.value.extra["missing"][0]["closest"]  # hints stay, from this view
        with pytest.raises(OperationError):
            mine.links(other)
        checked = mine.verify("an answer", pages=[other, "oncall"])
        assert [m["id"] for m in checked["missing"]] == [other]
        assert_no_leak(json.dumps(checked).replace(f'"{other}"', '""'), user)
    for key in ("deploy", "oncall", "index"):
        assert_no_leak(mine.links(key), user)
    links = mine.links("deploy")
    assert any(o["key"] == "scratch" for o in links["outgoing"]) == (user == "alice")
    assert_no_leak(mine.overview(), user)
    assert_no_leak(mine.verify("Releases are cut on Tuesday.", pages=["deploy"]), user)


def test_chunk_drill_down_never_returns_or_hints_at_another_users_passages(ops):
    alice = ops.viewing("alice")
    hit = next(
        h for h in alice.search_chunks("tangerine canary", 5)["hits"] if h["kind"] == "passage"
    )
    assert hit["page"] == "deploy" and "tangerine" in hit["text"]
    assert alice.chunks([hit["id"]])["chunks"][0]["id"] == hit["id"]
    from groundwiki_sidecar.api.operations import OperationError

    for user in ("bob", None):
        with pytest.raises(OperationError) as refused:
            ops.viewing(user).chunks([hit["id"]])
        assert hit["id"] not in json.dumps(refused.value.extra["missing"][0]["closest"])
        near = hit["id"][:-2]  # a mistyped ID: the closest real ones are offered
        with pytest.raises(OperationError) as refused:
            ops.viewing(user).chunks([near])
        assert hit["id"] not in json.dumps(refused.value.extra)


@pytest.mark.parametrize("user", ["alice", "bob", None])
def test_status_counts_only_what_the_viewer_sees(ops, user):
    status = ops.viewing(user).status()
    expected = {"alice": 4, "bob": 4, None: 3}[user]  # shared 3, alice shadows one and adds one
    assert status["scope"] == ("global" if user is None else f"user:{user}")
    assert status["pages"] == expected == status["lexical_docs"]["pages"]
