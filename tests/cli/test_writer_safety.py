"""The writer tools (`new`, `rename`, `cite --page`, `lock`) write inside the wiki and nowhere
else: never through a symlink (a page or a folder that leads out of the wiki), never across a
scope without being told, and with the modes the user's umask asks for. A refusal is one line,
a non-zero exit, and leaves every file as it was, inside the wiki and outside it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from groundwiki.cli import main
from helpers.commands import groundwiki
from helpers.wikis import page, write_wiki

SCOPED = Path(__file__).parents[1] / "fixtures" / "scoped"
SECRET = "TOKEN=hunter2\n"


def cli(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    """The real CLI, in-process: exit status, stdout, stderr."""
    capsys.readouterr()
    status = main(["-q", "-f", str(root / "mkdocs.yml"), *args])
    out, err = capsys.readouterr()
    return status, out, err


def tree(*folders: Path) -> dict[str, tuple[str, str | bytes, int]]:
    """Every entry under the folders as it is on disk, symlinks not followed: a link's target,
    a file's bytes and mode. Equal before and after: nothing was changed."""
    found: dict[str, tuple[str, str | bytes, int]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            info = path.lstat()
            if path.is_symlink():
                found[str(path)] = ("link", os.readlink(path), 0)
            elif path.is_file():
                found[str(path)] = ("file", path.read_bytes(), info.st_mode & 0o777)
    return found


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """A wiki with a page symlinked to a secret outside it, and a folder symlinked out of it."""
    outside = tmp_path / "outside"
    (outside / "ops").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    (outside / "ops" / "keep.md").write_text(page("Kept outside."), encoding="utf-8")
    root = tmp_path / "site"
    write_wiki(
        root,
        {"index.md": page("Home.", "See [[other]].\n"), "other.md": page("Other.", "Text.\n")},
        {"a.md": "line one of the source\n"},
    )
    (root / "wiki" / "secret.md").symlink_to(outside / "secret.txt")
    (root / "wiki" / "ops").symlink_to(outside / "ops", target_is_directory=True)
    return root, outside


@pytest.fixture
def scoped(tmp_path: Path) -> Path:
    """The scoped example: global/ deploy, oncall; alice's deploy and scratch; bob's rollback."""
    shutil.copytree(SCOPED, tmp_path, dirs_exist_ok=True)
    shutil.rmtree(tmp_path / "site", ignore_errors=True)
    return tmp_path


@pytest.fixture
def umask() -> Iterator[int]:
    """A umask that differs from every default mode, set for the test and then put back."""
    wanted = 0o002
    old = os.umask(wanted)
    try:
        yield wanted
    finally:
        os.umask(old)


# --- writers through symlinks ----------------------------------------------------------------


def test_cite_page_refuses_a_page_symlinked_out_of_the_wiki(capsys, linked):
    root, outside = linked
    before = tree(root, outside)
    status, _, err = cli(capsys, root, "cite", "raw-sources/a.md", "line one", "--page", "secret")
    assert status != 0
    assert "wiki/secret.md" in err and "symlink" in err and len(err.splitlines()) == 1
    assert tree(root, outside) == before


def test_cite_page_dry_run_never_shows_the_file_a_symlink_leads_to(capsys, linked):
    root, _ = linked
    status, out, err = cli(
        capsys, root, "cite", "raw-sources/a.md", "line one", "--page", "secret", "--dry-run"
    )
    assert status != 0 and "symlink" in err
    assert "hunter2" not in out + err


def test_rename_of_a_page_symlinked_out_of_the_wiki_is_refused_at_once(linked):
    root, outside = linked
    before = tree(root, outside)
    # In a child with a deadline: a rename that spins fails here instead of hanging the suite.
    done = groundwiki("-q", "rename", "secret", "published", cwd=root, timeout=60)
    assert done.returncode != 0
    assert "wiki/secret.md" in done.stderr and "symlink" in done.stderr
    assert tree(root, outside) == before


def test_new_refuses_a_path_through_a_folder_symlinked_out_of_the_wiki(capsys, linked):
    root, outside = linked
    before = tree(root, outside)
    status, _, err = cli(capsys, root, "new", "ops/x")
    assert status != 0
    assert "wiki/ops" in err and "symlink" in err
    assert tree(root, outside) == before


def test_rename_refuses_a_destination_through_a_folder_symlinked_out_of_the_wiki(capsys, linked):
    root, outside = linked
    before = tree(root, outside)
    status, _, err = cli(capsys, root, "rename", "other", "ops/y")
    assert status != 0
    assert "wiki/ops" in err and "symlink" in err
    assert tree(root, outside) == before


def test_a_page_symlinked_to_another_page_is_not_written_through(capsys, linked):
    root, outside = linked
    (root / "wiki" / "twin.md").symlink_to("other.md")
    before = tree(root, outside)
    status, _, err = cli(capsys, root, "cite", "raw-sources/a.md", "line one", "--page", "twin")
    assert status != 0 and "wiki/twin.md" in err and "symlink" in err
    assert tree(root, outside) == before


def test_the_lock_is_not_written_through_a_symlink(capsys, linked):
    root, outside = linked
    (root / "wiki" / "other.md").write_text(
        page("Other.", "Line one.\n<!-- from: raw-sources/a.md#L1 -->\n"), encoding="utf-8"
    )
    (root / "wiki.lock").symlink_to(outside / "secret.txt")
    before = tree(root, outside)
    status, _, err = cli(capsys, root, "lock")
    assert status != 0 and "wiki.lock" in err and "symlink" in err
    assert tree(root, outside) == before


# --- renames across scopes -------------------------------------------------------------------


def test_a_move_from_the_shared_pages_to_a_users_is_refused_without_the_flag(capsys, scoped):
    before = tree(scoped)
    status, _, err = cli(capsys, scoped, "rename", "global/oncall", "user/bob/oncall")
    assert status != 0
    assert "global" in err and "user:bob" in err and "--across-scopes" in err
    assert tree(scoped) == before


def test_publishing_a_users_page_is_refused_without_the_flag(capsys, scoped):
    before = tree(scoped)
    status, _, err = cli(capsys, scoped, "rename", "user/alice/scratch", "global/scratch")
    assert status != 0
    assert "user:alice" in err and "every reader" in err and "--across-scopes" in err
    assert tree(scoped) == before


def test_across_scopes_says_what_becomes_visible_to_whom(capsys, scoped):
    status, _, err = cli(
        capsys, scoped, "rename", "user/alice/scratch", "global/scratch", "--across-scopes"
    )
    assert status == 0, err
    assert (
        "wiki/user/alice/scratch.md becomes global: every reader and the published site will "
        "see it" in err
    )
    assert (scoped / "wiki" / "global" / "scratch.md").is_file()


def test_across_scopes_reports_every_link_that_loses_the_page(capsys, scoped):
    status, _, err = cli(
        capsys, scoped, "rename", "global/oncall", "user/bob/oncall", "--across-scopes"
    )
    assert status == 0, err
    lost = sorted(line.split(": ")[1] for line in err.splitlines() if "no longer reach" in line)
    # The shared pages and Alice's link to it; Bob's own pages would still see it.
    assert lost == ["wiki/global/deploy.md:9", "wiki/index.md:6", "wiki/user/alice/deploy.md:9"]


def test_across_scopes_reports_the_pages_own_links_to_what_its_new_readers_cannot_see(
    capsys, scoped
):
    (scoped / "wiki" / "user" / "alice" / "scratch.md").write_text(
        page("Alice's scratchpad.", "Quince notes; the canary is in [[tangerine]].\n"),
        encoding="utf-8",
    )
    (scoped / "wiki" / "user" / "alice" / "tangerine.md").write_text(
        page("The tangerine canary.", "Alice's canary.\n"), encoding="utf-8"
    )
    status, _, err = cli(
        capsys, scoped, "rename", "user/alice/scratch", "global/scratch", "--across-scopes"
    )
    assert status == 0, err
    assert any("no longer reach" in line and "[[tangerine]]" in line for line in err.splitlines())


def test_across_scopes_moves_the_pages_lock_rows_to_its_new_scope(capsys, scoped):
    status, _, err = cli(
        capsys, scoped, "rename", "global/oncall", "user/bob/oncall", "--across-scopes"
    )
    assert status == 0, err
    pages = [line.split("\t")[0] for line in (scoped / "wiki.lock").read_text().splitlines()]
    assert "oncall" not in pages
    assert pages.count("user:bob/oncall") == 2
    assert cli(capsys, scoped, "lock", "--check")[0] == 0


def test_a_rename_inside_a_users_scope_moves_its_lock_rows(capsys, scoped):
    status, _, err = cli(capsys, scoped, "rename", "user/bob/rollback", "rollbacks")
    assert status == 0, err
    pages = [line.split("\t")[0] for line in (scoped / "wiki.lock").read_text().splitlines()]
    assert "user:bob/rollback" not in pages and pages.count("user:bob/rollbacks") == 2
    assert cli(capsys, scoped, "lock", "--check")[0] == 0


# --- file modes ------------------------------------------------------------------------------


def test_a_new_page_gets_the_mode_the_umask_allows(capsys, linked, umask):
    root, _ = linked
    status, _, err = cli(capsys, root, "new", "fresh")
    assert status == 0, err
    assert (root / "wiki" / "fresh.md").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_rewritten_page_keeps_its_mode(capsys, linked, umask):
    root, _ = linked
    other = root / "wiki" / "other.md"
    other.chmod(0o640)
    status, _, err = cli(capsys, root, "cite", "raw-sources/a.md", "line one", "--page", "other")
    assert status == 0, err
    assert other.stat().st_mode & 0o777 == 0o640


def test_the_lock_file_keeps_its_mode_when_rewritten(capsys, linked, umask):
    root, _ = linked
    (root / "wiki" / "other.md").write_text(
        page("Other.", "Line one.\n<!-- from: raw-sources/a.md#L1 -->\n"), encoding="utf-8"
    )
    lock = root / "wiki.lock"
    lock.write_text("# groundwiki lock\n", encoding="utf-8")
    lock.chmod(0o640)
    status, _, err = cli(capsys, root, "lock")
    assert status == 0, err
    assert "raw-sources/a.md#L1" in lock.read_text()
    assert lock.stat().st_mode & 0o777 == 0o640


def test_a_new_lock_file_gets_the_mode_the_umask_allows(capsys, linked, umask):
    root, _ = linked
    (root / "wiki" / "other.md").write_text(
        page("Other.", "Line one.\n<!-- from: raw-sources/a.md#L1 -->\n"), encoding="utf-8"
    )
    status, _, err = cli(capsys, root, "lock")
    assert status == 0, err
    assert (root / "wiki.lock").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_move_into_no_users_folder_is_refused(capsys, scoped):
    before = tree(scoped)
    status, _, err = cli(
        capsys, scoped, "rename", "global/oncall", "user/oncall", "--across-scopes"
    )
    assert status != 0 and "wiki/user/oncall.md" in err and "user/ID/oncall" in err
    assert tree(scoped) == before


def test_writing_the_baseline_replaces_a_symlink_instead_of_writing_through_it(
    linked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, outside = linked
    target = outside / "baseline-target.json"
    target.write_text("{}\n", encoding="utf-8")
    (root / "lint-baseline.json").symlink_to(target)
    status, _, _ = cli(capsys, root, "lint", "--write-baseline")
    assert status == 0
    assert target.read_text(encoding="utf-8") == "{}\n"
    assert not (root / "lint-baseline.json").is_symlink()
