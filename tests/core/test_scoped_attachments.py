"""Attachments in a scoped wiki: a view resolves a file that is not a page only among the files
it may see. The shared view sees the files outside `user/`; user `<id>`'s view sees their own
`user/<id>/` files first, then the shared ones; a file directly under `user/` is no one's. A
shared page that links to a user's file is a scope leak, as a link to a user's page is, and the
shared scope's readers are not told the file's path."""

from __future__ import annotations

from groundwiki.core import Wiki
from groundwiki.core.lint import run_lint
from groundwiki.core.model.records import Link, Page
from helpers.wikis import MakeWiki, page

PAGES = {
    "global/deploy.md": page(
        "How the team deploys.",
        "# Deploy\n\n![[team-logo.png]]\n\n![[bob-diagram.png]]\n\nSee [[bob-notes.pdf]].\n",
    ),
    "global/team-logo.png": "the team's logo",
    "user/bob/ledger.md": page(
        "Bob's ledger.", "# Ledger\n\n![[bob-diagram.png]] ![[team-logo.png]] ![[logo.png]]\n"
    ),
    "user/bob/bob-diagram.png": "bob's diagram",
    "user/bob/bob-notes.pdf": "bob's notes",
    "user/bob/img/logo.png": "bob's own logo",
    "global/logo.png": "the shared logo",
    "user/alice/scratch.md": page("Alice's scratch.", "# Scratch\n\n![[bob-diagram.png]]\n"),
}


def link_to(page_: Page, target: str) -> Link:
    return next(link for link in page_.links if link.target == target)


def lands_on(view: Wiki, page_: Page, target: str) -> str | None:
    found = view.attachment(link_to(page_, target), page_)
    return found.path if found else None


def test_the_shared_view_resolves_no_file_under_a_users_folder(make_wiki: MakeWiki):
    wiki = make_wiki(PAGES)
    deploy = wiki.pages["deploy"]
    assert lands_on(wiki, deploy, "team-logo.png") == "global/team-logo.png"
    assert lands_on(wiki, deploy, "bob-diagram.png") is None
    assert lands_on(wiki, deploy, "bob-notes.pdf") is None


def test_a_path_into_a_users_folder_is_no_file_of_the_shared_view(make_wiki: MakeWiki):
    pages = {
        **PAGES,
        "global/deploy.md": page("Deploy.", "# Deploy\n\n![[../user/bob/img/logo.png]]\n"),
    }
    wiki = make_wiki(pages)
    deploy = wiki.pages["deploy"]
    assert lands_on(wiki, deploy, "../user/bob/img/logo.png") is None
    bob = wiki.scopes.view("bob")
    assert lands_on(bob, deploy, "../user/bob/img/logo.png") == "user/bob/img/logo.png"


def test_a_users_view_resolves_their_own_files_then_the_shared_ones(make_wiki: MakeWiki):
    bob = make_wiki(PAGES).scopes.view("bob")
    ledger = bob.pages["ledger"]
    assert lands_on(bob, ledger, "bob-diagram.png") == "user/bob/bob-diagram.png"
    assert lands_on(bob, ledger, "team-logo.png") == "global/team-logo.png"
    # Bob's own file of a shared file's name is the one he sees, as his page of a shared key is,
    # though the shared file's path is the shorter.
    assert lands_on(bob, ledger, "logo.png") == "user/bob/img/logo.png"


def test_a_users_view_resolves_no_file_of_another_user(make_wiki: MakeWiki):
    alice = make_wiki(PAGES).scopes.view("alice")
    scratch = alice.pages["scratch"]
    assert lands_on(alice, scratch, "bob-diagram.png") is None


def test_a_file_directly_under_user_is_in_no_view(make_wiki: MakeWiki):
    pages = {
        **PAGES,
        "user/stray.png": "no one's",
        "global/deploy.md": page("Deploy.", "# Deploy\n\n![[stray.png]]\n"),
        "user/bob/ledger.md": page("Ledger.", "# Ledger\n\n![[stray.png]]\n"),
    }
    wiki = make_wiki(pages)
    assert lands_on(wiki, wiki.pages["deploy"], "stray.png") is None
    bob = wiki.scopes.view("bob")
    assert lands_on(bob, bob.pages["ledger"], "stray.png") is None


def test_a_shared_page_linking_to_a_users_file_is_a_scope_leak(make_wiki: MakeWiki):
    findings = run_lint(make_wiki(PAGES)).findings
    on_deploy = [
        (f.rule, f.severity)
        for f in findings
        if f.path == "wiki/global/deploy.md" and f.severity != "info"
    ]
    assert on_deploy == [("scope-leak", "error"), ("scope-leak", "error")]  # no broken-link
    messages = sorted(f.message for f in findings if f.rule == "scope-leak")
    # The command line sees everything: it names the file and whose it is.
    assert "wiki/user/bob/bob-diagram.png" in messages[0] and "user:bob" in messages[0]
    assert "wiki/user/bob/bob-notes.pdf" in messages[1]


def test_the_shared_scopes_readers_are_not_told_the_users_file(make_wiki: MakeWiki):
    findings = run_lint(make_wiki(PAGES)).findings
    leaks = [f.for_shared_scope() for f in findings if f.rule == "scope-leak"]
    assert len(leaks) == 2
    for leak in leaks:
        assert "user/bob" not in leak.message + leak.detail + leak.hint
        assert "one user's own file" in leak.message


def test_a_users_page_linking_to_another_users_file_is_a_broken_link(make_wiki: MakeWiki):
    findings = run_lint(make_wiki(PAGES)).findings
    errors = [(f.path, f.rule) for f in findings if f.severity == "error"]
    assert ("wiki/user/alice/scratch.md", "broken-link") in errors
    assert not [path for path, _ in errors if path == "wiki/user/bob/ledger.md"]


def test_a_wiki_without_scope_folders_resolves_every_file(make_wiki: MakeWiki):
    wiki = make_wiki(
        {
            "people/bob/notes.md": page("Notes.", "# Notes\n\n![[diagram.png]]\n"),
            "index.md": page("Home.", "# Home\n\n![[diagram.png]]\n"),
            "people/bob/diagram.png": "a diagram",
        }
    )
    assert not wiki.scoped
    assert lands_on(wiki, wiki.pages["index"], "diagram.png") == "people/bob/diagram.png"
