"""Redirects from git history (`redirects_from_git`): a page renamed in git keeps its former
URLs, through chains of renames, even when the writer forgot the alias, and lint suggests the
alias (missing-rename-alias). Real git repositories and real MkDocs builds."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml
from helpers.commands import groundwiki, mkdocs
from helpers.wikis import page, write_wiki


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True)


def wiki(root: Path, pages: dict[str, str], on: bool = True) -> None:
    write_wiki(root, pages, options={"redirects_from_git": on})
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material"}
    config.write_text(yaml.safe_dump(data))


def repo(root: Path, pages: dict[str, str], on: bool = True) -> Path:
    wiki(root, pages, on)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "w@example.org")
    git(root, "config", "user.name", "Writer")
    commit(root, "start")
    return root


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def build(root: Path) -> Path:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = mkdocs("build", "-q", "-f", str(root / "mkdocs.yml"), "-d", str(root / "site"), env=env)
    assert done.returncode == 0, done.stderr
    return root / "site"


def redirect_of(site: Path, url: str) -> str | None:
    path = site / url / "index.html"
    if not path.is_file():
        return None
    text = path.read_text()
    if 'content="0; url=' not in text:
        return None  # a page of its own
    start = text.index('content="0; url=') + len('content="0; url=')
    return text[start : text.index('"', start)]


def findings(root: Path, rule: str) -> list[dict]:
    done = groundwiki("-q", "lint", "--format", "json", cwd=root)
    return [f for f in json.loads(done.stdout)["findings"] if f["rule"] == rule]


HOME = page(kind="overview", title="Home", body="See [[c]], [[x]], [[new]].\n")


def test_a_chain_of_renames_redirects_every_former_path_and_lint_asks_for_the_aliases(tmp_path):
    root = repo(tmp_path, {"index.md": HOME, "a.md": page(title="Page")})
    git(root, "mv", "wiki/a.md", "wiki/b.md")
    commit(root, "a to b")
    git(root, "mv", "wiki/b.md", "wiki/c.md")
    commit(root, "b to c")
    site = build(root)
    assert redirect_of(site, "a") == "../c/" and redirect_of(site, "b") == "../c/"
    missing = findings(root, "missing-rename-alias")
    assert [(f["path"], f["detail"]) for f in missing] == [
        ("wiki/c.md", "a.md"),
        ("wiki/c.md", "b.md"),
    ]
    assert "aliases: [a]" in missing[0]["hint"]
    (root / "wiki/c.md").write_text(page(title="Page", aliases=["a", "b"]))
    assert findings(root, "missing-rename-alias") == []


def test_a_move_to_another_folder_keeps_its_url_and_needs_no_alias(tmp_path):
    root = repo(tmp_path, {"index.md": HOME, "guide/x.md": page()})
    (root / "wiki/ops").mkdir()
    git(root, "mv", "wiki/guide/x.md", "wiki/ops/x.md")
    commit(root, "move x")
    assert redirect_of(build(root), "guide/x") == "../../ops/x/"
    assert findings(root, "missing-rename-alias") == []


def test_a_path_taken_again_or_a_page_deleted_later_gives_no_redirect(tmp_path):
    root = repo(tmp_path, {"index.md": HOME, "old.md": page(), "d.md": page()})
    git(root, "mv", "wiki/old.md", "wiki/new.md")
    git(root, "mv", "wiki/d.md", "wiki/e.md")
    commit(root, "renames")
    (root / "wiki/old.md").write_text(page(title="A new page at the old path"))
    git(root, "rm", "-q", "wiki/e.md")
    commit(root, "reuse and delete")
    site = build(root)
    assert redirect_of(site, "old") is None and (site / "old/index.html").is_file()
    assert redirect_of(site, "d") is None and redirect_of(site, "e") is None
    assert [f["detail"] for f in findings(root, "missing-rename-alias")] == []


def test_off_by_default_and_harmless_outside_git(tmp_path):
    off = repo(tmp_path / "off", {"index.md": HOME, "a.md": page()}, on=False)
    git(off, "mv", "wiki/a.md", "wiki/c.md")
    commit(off, "a to c")
    assert redirect_of(build(off), "a") is None
    outside = tmp_path / "outside"
    wiki(outside, {"index.md": HOME, "c.md": page()})
    assert (build(outside) / "c/index.html").is_file()  # no repository: builds, no redirects
    assert findings(outside, "missing-rename-alias") == []
