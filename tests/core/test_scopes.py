"""Scopes: shared pages under global/, each user's under user/<id>/, a user's page shadowing the
shared page with its key for that user only. Proven on the scoped example wiki
(tests/fixtures/scoped: alice shadows `deploy` and keeps `scratch`, bob keeps `rollback`) for
the core, lint, the built site and every operation of the sidecar (real Whoosh on disk)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from groundwiki.core import compile_wiki
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.lint import run_lint

FIXTURE = Path(__file__).parents[1] / "fixtures" / "scoped"
BIN = Path(sys.executable).parent
# Words only one user's pages hold: finding one where that user is not the viewer is a leak.
ALICE_WORDS = ("tangerine", "quince", "scratchpad")
BOB_WORDS = ("marmalade",)


def scoped_copy(root: Path, **options: object) -> Path:
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    shutil.rmtree(root / "site", ignore_errors=True)
    config = root / "mkdocs.yml"
    if options:
        data = yaml.safe_load(config.read_text())
        data["plugins"] = [{"groundwiki": dict(options)}]
        config.write_text(yaml.safe_dump(data))
    return config


def compiled(root: Path):
    return compile_wiki(load_config(root / "mkdocs.yml"))


# --- the core --------------------------------------------------------------------------------


def test_keys_are_made_within_a_scope_and_a_users_page_shadows_for_that_user_only(tmp_path):
    scoped_copy(tmp_path)
    wiki = compiled(tmp_path)
    assert wiki.scoped and wiki.users == ("alice", "bob")
    assert sorted(wiki.pages) == ["deploy", "index", "oncall"]
    assert wiki.pages["deploy"].doc_path == "global/deploy.md"
    alice, bob = wiki.view("alice"), wiki.view("bob")
    assert alice.pages["deploy"].doc_path == "user/alice/deploy.md"
    assert alice.pages["deploy"].uid == "user:alice/deploy"
    assert bob.pages["deploy"].doc_path == "global/deploy.md"
    assert "scratch" in alice.pages and "scratch" not in bob.pages and "scratch" not in wiki.pages
    assert "rollback" in bob.pages and "rollback" not in alice.pages


def test_links_resolve_in_the_viewers_scope_first(tmp_path):
    scoped_copy(tmp_path)
    wiki = compiled(tmp_path)
    oncall = wiki.pages["oncall"]
    link = next(link for link in oncall.links if link.target == "deploy")
    # The shared on-call page's [[deploy]]: the shared page for bob, alice's own for alice.
    assert wiki.view("bob").pages[wiki.view("bob").resolve(link, oncall).key].scope == "global"
    found = wiki.view("alice").resolve(link, oncall)
    assert wiki.view("alice").pages[found.key].doc_path == "user/alice/deploy.md"


def test_the_lock_records_a_users_page_under_its_uid(tmp_path):
    scoped_copy(tmp_path)
    lock = (tmp_path / "wiki.lock").read_text()
    assert "\nuser:alice/deploy\traw-sources/runbook.md#L1-L3\t" in lock
    assert "\ndeploy\traw-sources/runbook.md#L1-L3\t" in lock
    findings = run_lint(compiled(tmp_path)).findings
    assert not [f for f in findings if f.rule in {"unlocked-source", "stale-lock-entry"}]


def test_a_wiki_without_scope_folders_is_one_shared_scope(tmp_path):
    scoped_copy(tmp_path)
    shutil.rmtree(tmp_path / "wiki/user")
    (tmp_path / "wiki/global").rename(tmp_path / "wiki/team")
    wiki = compiled(tmp_path)
    assert not wiki.scoped and wiki.users == ()
    assert {page.scope for page in wiki.all_pages} == {"global"}
    assert sorted(wiki.pages) == ["deploy", "index", "oncall"]


# --- lint ------------------------------------------------------------------------------------


def test_a_shared_page_linking_to_a_users_page_is_a_scope_leak(tmp_path):
    scoped_copy(tmp_path)
    oncall = tmp_path / "wiki/global/oncall.md"
    oncall.write_text(oncall.read_text() + "\nAlice keeps notes in [[scratch]].\n")
    findings = run_lint(compiled(tmp_path)).findings
    leaks = [f for f in findings if f.rule == "scope-leak"]
    assert [(f.path, f.severity) for f in leaks] == [("wiki/global/oncall.md", "error")]
    assert "wiki/user/alice/scratch.md" in leaks[0].message
    assert not [f for f in findings if f.rule == "broken-link"]  # one finding, not two


def test_lint_names_both_files_of_a_shadowing_page_as_an_info(tmp_path):
    scoped_copy(tmp_path)
    findings = run_lint(compiled(tmp_path)).findings
    shadows = [f for f in findings if f.rule == "shadowed-page"]
    assert len(shadows) == 1 and shadows[0].severity == "info"
    assert shadows[0].path == "wiki/user/alice/deploy.md"
    assert "wiki/global/deploy.md" in shadows[0].message
    assert not [f for f in findings if f.rule == "duplicate-key"]


def test_lint_checks_each_users_pages_as_that_user_sees_them(tmp_path):
    scoped_copy(tmp_path)
    # [[scratch]] is alice's own page: fine on her page, broken on bob's.
    rollback = tmp_path / "wiki/user/bob/rollback.md"
    rollback.write_text(rollback.read_text() + "\nSee [[scratch]].\n")
    findings = run_lint(compiled(tmp_path)).findings
    broken = [(f.path, f.rule) for f in findings if f.severity == "error"]
    assert broken == [("wiki/user/bob/rollback.md", "broken-link")]


# --- the site --------------------------------------------------------------------------------


def build(config: Path) -> Path:
    done = subprocess.run(
        [str(BIN / "mkdocs"), "build", "-q", "-f", str(config)],
        capture_output=True, text=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(BIN)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return config.parent / "site"


def site_text(site: Path) -> str:
    return "\n".join(
        path.read_text(errors="replace").lower()
        for path in sorted(site.rglob("*"))
        if path.is_file()
    )


def test_the_site_publishes_the_shared_scope_only_by_default(tmp_path):
    site = build(scoped_copy(tmp_path))
    assert (site / "global/deploy/index.html").exists()
    assert not (site / "user").exists()
    text = site_text(site)  # pages, search index, graph.json, pages.json, lint.json
    for word in ALICE_WORDS + BOB_WORDS:
        assert word not in text, word


def test_scopes_all_publishes_each_users_pages_as_they_see_the_wiki(tmp_path):
    site = build(scoped_copy(tmp_path, scopes="all"))
    alice = (site / "user/alice/deploy/index.html").read_text()
    assert "gw-scope" in alice and "takes the place of the shared page" in alice
    assert 'href="../../../global/deploy/"' in alice  # the banner names the shared page
    assert 'href="../scratch/"' in alice  # her own page, linked as she sees it
    bob = (site / "user/bob/rollback/index.html").read_text()
    assert 'href="../../../global/deploy/"' in bob and "tangerine" not in bob.lower()
    assert "takes the place" not in bob  # bob shadows nothing
    # The shared page's own content (the navigation lists every published page).
    shared = (site / "global/oncall/index.html").read_text().lower()
    article = shared[shared.index("<article") : shared.index("</article>")]
    assert not any(word in article for word in ALICE_WORDS + BOB_WORDS)


def test_the_site_of_a_wiki_without_scope_folders_is_unchanged(tmp_path):
    scoped_copy(tmp_path)
    shutil.rmtree(tmp_path / "wiki/user")
    (tmp_path / "wiki/global").rename(tmp_path / "wiki/team")
    site = build(tmp_path / "mkdocs.yml")
    page = (site / "team/deploy/index.html").read_text()
    assert "gw-scope" not in page and 'href="../oncall/"' in page


# --- the sidecar -----------------------------------------------------------------------------


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


@pytest.mark.sidecar
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


@pytest.mark.sidecar
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


@pytest.mark.sidecar
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


@pytest.mark.sidecar
@pytest.mark.parametrize("user", ["alice", "bob", None])
def test_status_counts_only_what_the_viewer_sees(ops, user):
    status = ops.viewing(user).status()
    expected = {"alice": 4, "bob": 4, None: 3}[user]  # shared 3, alice shadows one and adds one
    assert status["scope"] == ("global" if user is None else f"user:{user}")
    assert status["pages"] == expected == status["lexical_docs"]["pages"]
