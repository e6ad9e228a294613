"""`groundwiki rename`, run as a writer runs it: the page moves, every link that reached it by
name or path is rewritten in its own style and nothing else is touched, the old name becomes an
alias, the lock follows, and lint finds nothing new. A refusal changes nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.edit.edits import Edits
from groundwiki.core.edit.rename import plan_rename
from groundwiki.core.edit.rename_reading import scoped_wiki
from groundwiki.core.read.markdown import parse_body
from helpers import commands
from helpers.edit_walk import VAULT, VAULT_PARTS
from helpers.wikis import ROOT, page, write_wiki


def groundwiki(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return commands.groundwiki("-q", *args, cwd=root)


def rename(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = groundwiki(root, "rename", *args)
    assert done.returncode == 0, done.stderr
    return done


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git/" not in p.relative_to(root).as_posix() + "/"
    }


def read(root: Path, path: str) -> str:
    return (root / "wiki" / path).read_text(encoding="utf-8")


def findings(root: Path, *renamed: tuple[str, str]) -> Counter[tuple[str, str, str]]:
    """Lint's findings as (rule, file, what), with each (old, new) of `renamed` (a page's path,
    its key) spelled new: what lint should find once the page is renamed."""
    done = groundwiki(root, "lint", "--format", "json")

    def renamed_in(text: str) -> str:
        for old, new in renamed:
            text = text.replace(old, new)
        return text

    return Counter(
        (f["rule"], renamed_in(f["path"]), renamed_in(f["detail"]))
        for f in json.loads(done.stdout)["findings"]
    )


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def commit_all(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "wiki")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_wiki(
        tmp_path,
        {
            "index.md": page(kind="overview", title="Home", body="[[old-page]] [[sibling]]\n"),
            "guide/old-page.md": page(
                title="Old page",
                aliases=["legacy"],
                body="# Old page\n\n## Setup\n\nA paragraph. ^blk\n\n"
                "See [other](../ops/other.md) and [[./sibling]].\n",
            ),
            "guide/sibling.md": page(title="Sibling"),
            "ops/other.md": page(title="Other"),
        },
    )
    return tmp_path


def add(root: Path, name: str, text: str) -> None:
    path = root / "wiki" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- the columns the rewrite relies on -------------------------------------------------------


def test_link_places_are_exact_in_a_table_cell_and_after_wide_characters():
    body = "| a | b |\n|---|---|\n| é日本 [[x\\|l]] | 🎉 [[y#H]] |\n\nhéllo 🎉 `[[x]]` [[x]]\n"
    lines = body.split("\n")
    spelled = [
        lines[link.at.line - 1][link.at.column - 1 :].startswith(link.raw)
        for link in parse_body(body, "p.md", 1).links
    ]
    assert spelled == [True, True, True]


# --- what a rewrite keeps --------------------------------------------------------------------


def test_a_wikilink_keeps_its_label_and_anchor(root):
    add(root, "a.md", page(body="[[old-page|the label]] [[old-page#Setup]] [[old-page#^blk|b]]\n"))
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith(
        "[[new-page|the label]] [[new-page#Setup]] [[new-page#^blk|b]]\n"
    )


def test_an_embed_stays_an_embed(root):
    add(root, "a.md", page(body="![[old-page]]\n\n![[old-page#Setup]]\n"))
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith("![[new-page]]\n\n![[new-page#Setup]]\n")


def test_a_link_in_a_table_keeps_its_escaped_pipe(root):
    add(
        root,
        "a.md",
        page(body="| page | note |\n|---|---|\n| [[old-page\\|label]] | é [[old-page]] |\n"),
    )
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith("| [[new-page\\|label]] | é [[new-page]] |\n")


def test_links_after_wide_characters_are_rewritten_where_they_stand(root):
    add(root, "a.md", page(body="héllo 日本 🎉 [[old-page]] and [[Old-Page|x]] ✓\n"))
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith("héllo 日本 🎉 [[new-page]] and [[new-page|x]] ✓\n")


def test_code_spans_and_fences_do_not_change(root):
    body = (
        "Write `[[old-page]]` to link: [[old-page]].\n\n"
        "```markdown\n[[old-page]] and [x](guide/old-page.md)\n```\n"
    )
    add(root, "a.md", page(body=body))
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith(body.replace(": [[old-page]]", ": [[new-page]]"))


def test_a_link_by_alias_or_title_stays_as_written(root):
    add(root, "a.md", page(body="[[legacy]] and [[Old page]]\n"))
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith("[[legacy]] and [[Old page]]\n")


def test_path_style_wikilinks_get_the_new_path(root):
    add(root, "a.md", page(body="[[guide/old-page]] [[/guide/old-page|x]]\n"))
    add(root, "guide/b.md", page(body="[[./old-page]]\n"))
    rename(root, "old-page", "archive/new-page")
    assert read(root, "a.md").endswith("[[archive/new-page]] [[/archive/new-page|x]]\n")
    assert read(root, "guide/b.md").endswith("[[../archive/new-page]]\n")


def test_markdown_links_stay_relative_to_the_linking_page(root):
    add(root, "ops/a.md", page(body="[a](../guide/old-page.md#setup) [b](/guide/old-page.md)\n"))
    add(root, "b.md", page(body='[c](guide/old-page.md "title")\n'))
    rename(root, "old-page", "archive/deep/new-page")
    assert read(root, "ops/a.md").endswith(
        "[a](../archive/deep/new-page.md#setup) [b](/archive/deep/new-page.md)\n"
    )
    assert read(root, "b.md").endswith('[c](archive/deep/new-page.md "title")\n')


def test_markdown_links_keep_their_encoding_and_angle_brackets(root):
    add(root, "Old Name.md", page(title="Old Name"))
    add(
        root,
        "a.md",
        page(body="[a](Old%20Name.md) [b](<Old Name.md#Setup>) [c](Old%20Name.md#x)\n"),
    )
    rename(root, "Old Name", "New Name")
    assert read(root, "a.md").endswith(
        "[a](New%20Name.md) [b](<New Name.md#Setup>) [c](New%20Name.md#x)\n"
    )


def test_reference_style_markdown_links_change_in_their_definition(root):
    add(
        root, "a.md", page(body="[one][r] and [two](guide/old-page.md)\n\n[r]: guide/old-page.md\n")
    )
    rename(root, "old-page", "new-page")
    assert read(root, "a.md").endswith(
        "[one][r] and [two](guide/new-page.md)\n\n[r]: guide/new-page.md\n"
    )


def test_a_new_path_may_be_written_from_the_wiki_root(root):
    rename(root, "wiki/guide/old-page.md", "wiki/archive/new-page")
    assert (root / "wiki/archive/new-page.md").is_file()


def test_refs_entries_change_in_place_in_block_and_flow_lists(root):
    add(
        root,
        "a.md",
        '---\nsummary: A.\nrefs:\n  - old-page  # where it started\n  - "sibling"\n---\nA.\n',
    )
    add(root, "b.md", "---\nsummary: B.\nrefs: [sibling, 'old-page']  # both\n---\nB.\n")
    rename(root, "old-page", "new-page")
    assert read(root, "a.md") == (
        '---\nsummary: A.\nrefs:\n  - new-page  # where it started\n  - "sibling"\n---\nA.\n'
    )
    assert read(root, "b.md") == "---\nsummary: B.\nrefs: [sibling, 'new-page']  # both\n---\nB.\n"


def test_the_moved_pages_relative_links_still_reach_their_targets(root):
    rename(root, "old-page", "archive/deep/new-page")
    text = read(root, "archive/deep/new-page.md")
    assert "[other](../../ops/other.md) and [[../../guide/sibling]]" in text
    assert findings(root) == Counter()


def test_a_name_the_old_folder_decided_becomes_a_path(root):
    add(root, "guide/Note.md", page(title="Guide note"))
    add(root, "ops/Note.md", page(title="Ops note"))
    add(root, "guide/linker.md", page(body="[[Note]]\n"))
    rename(root, "linker", "ops/linker")  # in ops/, [[Note]] would be ops/Note
    assert read(root, "ops/linker.md").endswith("[[guide/Note]]\n")


# --- the page's names --------------------------------------------------------------------------


def test_the_old_name_joins_the_aliases_and_old_links_still_resolve(root):
    rename(root, "old-page", "new-page")
    assert "aliases:\n- legacy\n- old-page\n" in read(root, "guide/new-page.md")
    wiki = compile_wiki(load_config(root / "mkdocs.yml"))
    found = wiki.resolver.resolve_name("old-page")
    assert (found.key, found.via) == ("new-page", "alias")


def test_an_old_name_already_an_alias_is_not_added_again(root):
    add(root, "x.md", "---\nsummary: X.\naliases: [x-old, X]\n---\nX.\n")
    rename(root, "x", "y")
    assert read(root, "y.md") == "---\nsummary: X.\naliases: [x-old, X]\n---\nX.\n"


def test_a_page_without_frontmatter_gets_one_for_the_alias(root):
    add(root, "bare.md", "Just text.\n")
    rename(root, "bare", "plain")
    assert read(root, "plain.md") == "---\naliases: [bare]\n---\nJust text.\n"


def test_windows_line_endings_are_kept(root):
    add(root, "a.md", "---\r\nsummary: A.\r\n---\r\n[[old-page]]\r\n")
    add(root, "x.md", "---\r\nsummary: X.\r\n---\r\nX.\r\n")
    rename(root, "old-page", "new-page")
    rename(root, "x", "y")
    assert (root / "wiki/a.md").read_bytes() == b"---\r\nsummary: A.\r\n---\r\n[[new-page]]\r\n"
    assert (
        root / "wiki/y.md"
    ).read_bytes() == b"---\r\nsummary: X.\r\naliases: [x]\r\n---\r\nX.\r\n"


# --- the lock --------------------------------------------------------------------------------


def test_a_cited_pages_lock_records_move_and_lint_stays_clean(tmp_path):
    write_wiki(
        tmp_path,
        {
            "index.md": page(kind="overview", title="Home", body="[[cited]]\n"),
            "cited.md": page(body="Two lines. <!-- from: raw-sources/notes.md#L1-L2 -->\n"),
        },
        {"notes.md": "one\ntwo\nthree\n"},
    )
    assert groundwiki(tmp_path, "lock").returncode == 0
    before = findings(tmp_path)
    rename(tmp_path, "cited", "evidence")
    lock = (tmp_path / "wiki.lock").read_text()
    assert "\ncited\t" not in lock and "evidence\traw-sources/notes.md#L1-L2\t" in lock
    assert findings(tmp_path) == before
    assert groundwiki(tmp_path, "lock", "--check").returncode == 0


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("new", "named"),
    [
        ("sibling", "wiki/guide/sibling.md already exists"),
        ("other", "file name of wiki/ops/other.md"),
        ("legacy2", "alias of wiki/holder.md"),
        ("ops/other", "wiki/ops/other.md already exists"),
    ],
)
def test_a_collision_is_refused_with_nothing_changed(root, new, named):
    add(root, "holder.md", page(aliases=["legacy2"]))
    snapshot = files(root)
    done = groundwiki(root, "rename", "old-page", new)
    assert done.returncode == 2
    assert named in done.stderr and "Nothing was changed" in done.stderr
    assert files(root) == snapshot


def test_a_name_that_fits_no_page_or_several_is_refused(root):
    add(root, "a/Same.md", page())
    add(root, "b/Same.md", page())
    snapshot = files(root)
    unknown = groundwiki(root, "rename", "nowhere", "x")
    ambiguous = groundwiki(root, "rename", "Same", "x")
    assert unknown.returncode == 2 and "'nowhere' names no page" in unknown.stderr
    assert ambiguous.returncode == 2 and "a/Same.md, b/Same.md" in ambiguous.stderr
    assert files(root) == snapshot
    rename(root, "b/Same", "Unique")  # named by its path, it is one page
    assert (root / "wiki/b/Unique.md").is_file()


def test_a_root_page_is_renamed_by_its_name_though_a_folder_has_one_of_the_same_name(root):
    """`hydration` is the root's hydration.md by Obsidian's rules (a path from the root), not
    one of two pages: it is renamed in each spelling a writer might give."""
    for n, spelling in enumerate(("hydration", "hydration.md", "wiki/hydration.md", "/hydration")):
        add(root, "hydration.md", page(body=f"Round {n}.\n"))
        add(root, "sub/hydration.md", page())
        rename(root, spelling, f"moved-{n}")
        assert (root / f"wiki/moved-{n}.md").is_file(), spelling
        assert (root / "wiki/sub/hydration.md").is_file()


# --- dry run and git -------------------------------------------------------------------------


def test_a_dry_run_changes_nothing_and_git_applies_its_diff(root):
    add(root, "a.md", page(body="[[old-page|x]] [y](guide/old-page.md)\n"))
    commit_all(root)
    snapshot = files(root)
    done = groundwiki(root, "rename", "old-page", "archive/new-page", "--dry-run")
    assert done.returncode == 0 and "rename from wiki/guide/old-page.md" in done.stdout
    assert files(root) == snapshot
    (root / "change.diff").write_text(done.stdout)
    git(root, "apply", "change.diff")
    (root / "change.diff").unlink()
    applied = files(root)
    git(root, "checkout", "-q", "--", ".")
    git(root, "clean", "-qfd")
    rename(root, "old-page", "archive/new-page")
    assert files(root) == applied


def test_in_a_git_repository_the_move_is_a_rename(root):
    commit_all(root)
    done = rename(root, "old-page", "archive/new-page")
    status = git(root, "status", "--porcelain").splitlines()
    # Staged as a rename (R); its new alias is a change still to stage (M).
    assert "RM wiki/guide/old-page.md -> wiki/archive/new-page.md" in status
    assert "wiki/guide/old-page.md -> wiki/archive/new-page.md" in done.stderr
    assert "2 links rewritten in 2 files" in done.stderr


# --- real wikis ------------------------------------------------------------------------------


@pytest.fixture
def handbook(tmp_path: Path) -> Path:
    for name in ("wiki", "raw-sources"):
        shutil.copytree(ROOT / name, tmp_path / name)
    for name in ("mkdocs.yml", "wiki.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_renaming_in_the_handbook_leaves_lint_and_the_lock_as_they_were(handbook):
    before = findings(
        handbook,
        ("wiki/guide/wikilinks.md", "wiki/reference/link-syntax.md"),
        ("wiki/reference/page-contract.md", "wiki/reference/the-contract.md"),
    )
    rename(handbook, "wikilinks", "reference/link-syntax")
    rename(handbook, "page-contract", "the-contract")
    assert findings(handbook) == before
    assert groundwiki(handbook, "lock", "--check").returncode == 0


def test_a_rename_plans_what_a_full_compile_would(handbook):
    config = load_config(handbook / "mkdocs.yml")
    full = compile_wiki(config)
    for old, new in (("wikilinks", "guide/link-syntax"), ("aliases", "reference/names")):
        planned = [Edits(config.root), Edits(config.root)]
        plan_rename(full, old, new, planned[0])
        plan_rename(scoped_wiki(config, old, new), old, new, planned[1])
        assert planned[0].diff() == planned[1].diff() != ""


@pytest.mark.skipif(not VAULT.is_dir(), reason="the dev vault is not on this machine")
def test_renaming_in_the_vault_leaves_lint_as_it_was(tmp_path):
    for part in VAULT_PARTS:
        shutil.copytree(VAULT / part, tmp_path / "vault" / part)
    for note in VAULT.glob("*.md"):
        shutil.copy(note, tmp_path / "vault")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: hub\ndocs_dir: vault\nplugins:\n  - groundwiki: {}\n"
    )
    old = "04 - Guides, Workflows, & Courses/Guides/How to add content through GitHub"
    new = "05 - Concepts/Contributing through GitHub"
    before = findings(
        tmp_path,
        (f"vault/{old}.md", f"vault/{new}.md"),
        ("how to add content through github", "contributing through github"),
    )
    done = rename(tmp_path, "How to add content through GitHub", new)
    assert "13 links rewritten in 12 files" in done.stderr
    assert findings(tmp_path) == before
    guides = (tmp_path / "vault/04 - Guides, Workflows, & Courses/Guides/🗂️ Guides.md").read_text()
    assert f"[[{new}|How to add content through GitHub]]" in guides
