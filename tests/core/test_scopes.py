"""Scopes: shared pages under global/, each user's under user/<id>/, a user's page shadowing the
shared page with its key for that user only. Proven on the scoped example wiki
(tests/fixtures/scoped: alice shadows `deploy` and keeps `scratch`, bob keeps `rollback`) for
the core and lint; the built site is tested in tests/site/test_site_scopes.py, every operation
of the sidecar in tests/sidecar/test_sidecar_scopes.py."""

from __future__ import annotations

import shutil
from pathlib import Path

from groundwiki.core import compile_wiki
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.lint import run_lint
from helpers.scoped import scoped_copy


def compiled(root: Path):
    return compile_wiki(load_config(root / "mkdocs.yml"))


# --- the core --------------------------------------------------------------------------------


def test_keys_are_made_within_a_scope_and_a_users_page_shadows_for_that_user_only(tmp_path):
    scoped_copy(tmp_path)
    wiki = compiled(tmp_path)
    assert wiki.scoped and wiki.scopes.users == ("alice", "bob")
    assert sorted(wiki.pages) == ["deploy", "index", "oncall"]
    assert wiki.pages["deploy"].doc_path == "global/deploy.md"
    alice, bob = wiki.scopes.view("alice"), wiki.scopes.view("bob")
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
    bob, alice = wiki.scopes.view("bob"), wiki.scopes.view("alice")
    assert bob.pages[bob.resolve(link, oncall).key].scope == "global"
    found = alice.resolve(link, oncall)
    assert alice.pages[found.key].doc_path == "user/alice/deploy.md"


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
    assert not wiki.scoped and wiki.scopes.users == ()
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
