"""`groundwiki new`, run as a writer runs it: a page that meets the contract, from the wiki's
template or groundwiki's own, refused (nothing written) on a name a page already holds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from groundwiki.core.edit.new_page import NewPage, TemplateError, render
from helpers import commands
from helpers.wikis import page, write_wiki


def groundwiki(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return commands.groundwiki("-q", *args, cwd=root)


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def findings(root: Path, path: str) -> list[str]:
    done = groundwiki(root, "lint", "--format", "json")
    return sorted(f["rule"] for f in json.loads(done.stdout)["findings"] if f["path"] == path)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_wiki(
        tmp_path,
        {
            "index.md": page(kind="overview", title="Home"),
            "ops/deploy.md": page(aliases=["shipping"]),
        },
    )
    return tmp_path


def test_a_new_page_meets_the_contract_and_lint_only_asks_for_a_link(root):
    done = groundwiki(
        root,
        "new",
        "ops/on-call",
        "--title",
        "On call: who & when",
        "--tags",
        "ops, rota",
        "--summary",
        "Who answers the pager, and when.",
    )
    assert done.returncode == 0, done.stderr
    text = (root / "wiki/ops/on-call.md").read_text()
    assert text.startswith(
        '---\ntitle: "On call: who & when"\nsummary: "Who answers the pager, and when."\n'
        'tags: ["ops", "rota"]\n---\n# On call: who & when\n'
    )
    assert "wrote wiki/ops/on-call.md" in done.stderr and "[[on-call]]" in done.stderr
    assert findings(root, "wiki/ops/on-call.md") == ["orphan-page"]


def test_a_hostile_title_stays_one_value_and_shows_as_typed(root):
    title = 'Evil" ]] [[index]] <script>alert(1)</script> #tag'
    assert groundwiki(root, "new", "evil", "--title", title).returncode == 0
    rules = findings(root, "wiki/evil.md")
    assert "schema-violation" not in rules and "invalid-frontmatter" not in rules
    body = (root / "wiki/evil.md").read_text().split("---\n", 2)[2]
    assert "[[index]]" not in body and "<script>" not in body  # escaped: no link, no tag
    graph = json.loads(groundwiki(root, "graph").stdout)
    assert not [e for e in graph["edges"] if e["source"] == "evil"]
    assert [n["title"] for n in graph["nodes"] if n["id"] == "evil"] == [title]


def test_a_name_held_by_a_key_an_alias_or_a_file_name_is_refused_with_nothing_written(root):
    before = files(root)
    for taken in ("deploy", "Shipping", "elsewhere/deploy"):
        done = groundwiki(root, "new", taken)
        assert done.returncode == 2, taken
        assert "wiki/ops/deploy.md" in done.stderr and "Nothing was written" in done.stderr
    assert files(root) == before


def test_the_wikis_template_is_used_and_a_broken_one_is_named_with_its_line(root):
    templates = root / "templates"
    templates.mkdir()
    (templates / "page.md").write_text(
        "---\ntitle: {{ title }}\ntags: {{tags}}\ncreated: {{date}}\n---\n# {{title}}\n\n## Sources\n"
    )
    assert groundwiki(root, "new", "runbook", "--tags", "ops").returncode == 0
    text = (root / "wiki/runbook.md").read_text()
    assert text.startswith('---\ntitle: "Runbook"\ntags: ["ops"]\ncreated: 20')
    assert text.endswith("# Runbook\n\n## Sources\n")
    (templates / "page.md").write_text("---\ntitle: {{title}}\n---\nBy {{author}}\n")
    before = files(root)
    done = groundwiki(root, "new", "other")
    assert done.returncode == 2
    assert "templates/page.md:4: unknown placeholder {{author}}" in done.stderr
    assert files(root) == before


def test_a_quoted_placeholder_is_an_error_that_says_to_write_it_bare():
    with pytest.raises(TemplateError, match=r"t\.md:2: .*write the placeholder bare"):
        render('---\ntitle: "{{title}}"\n---\n', "t.md", NewPage('Say "hi"', "hi"))


def test_scope_places_the_page_in_the_scopes_folder(root):
    assert groundwiki(root, "new", "notes", "--scope", "user:alice").returncode == 0
    assert (root / "wiki/user/alice/notes.md").is_file()
    done = groundwiki(root, "new", "x", "--scope", "user:../bob")
    assert done.returncode == 2 and "user:ID" in done.stderr


def test_a_users_page_may_shadow_a_shared_one_but_not_their_own(root):
    # A shared page's name is free in a user's scope: the new page shadows it for them.
    done = groundwiki(root, "new", "deploy", "--scope", "user:alice")
    assert done.returncode == 0, done.stderr
    assert "shadows wiki/ops/deploy.md for alice" in done.stderr
    assert (root / "wiki/user/alice/deploy.md").is_file()
    again = groundwiki(root, "new", "deploy", "--scope", "user:alice")
    assert again.returncode == 2 and "wiki/user/alice/deploy.md" in again.stderr


def test_dry_run_shows_the_new_file_and_writes_nothing(root):
    before = files(root)
    done = groundwiki(root, "new", "draft", "--dry-run")
    assert done.returncode == 0 and files(root) == before
    assert done.stdout.startswith("--- /dev/null\n+++ b/wiki/draft.md\n")
    assert '+title: "Draft"\n' in done.stdout


def test_a_name_a_link_cannot_spell_is_refused(root):
    done = groundwiki(root, "new", "a#b")
    assert done.returncode == 2 and "'#'" in done.stderr
