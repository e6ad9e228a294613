"""The repository's pre-commit hooks (.pre-commit-hooks.yaml), run by pre-commit itself in a
wiki's own git repository whose .pre-commit-config.yaml names this checkout (its working tree
committed to a clone) at a revision: pre-commit installs groundwiki from it into a fresh
environment, as it would for a user, and the hooks fail the commit on a broken link and on a
stale lock, then pass once both are fixed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.wikis import page, write_wiki

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

BIN = Path(sys.executable).parent
REPOSITORY = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True)


@pytest.fixture(scope="module")
def hooks(tmp_path_factory) -> tuple[Path, Path]:
    """This checkout as a hooks repository at a commit, and one PRE_COMMIT_HOME for the module.

    The commit is this checkout's working tree (`pre-commit try-repo` commits local changes to a
    clone the same way), made once: try-repo gives every run a store of its own, so the
    hook's environment, groundwiki and its dependencies, was installed again for each run."""
    base = tmp_path_factory.mktemp("pre-commit")
    clone = base / "hooks-repository"
    subprocess.run(["git", "clone", "-q", str(REPOSITORY), str(clone)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(REPOSITORY), "ls-files", "--modified", "--deleted", "--others",
         "--exclude-standard", "-z"],
        capture_output=True, check=True,
    )  # fmt: skip
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        source, target = REPOSITORY / name, clone / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        else:
            target.unlink(missing_ok=True)
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "the working tree")  # fmt: skip
    revision = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    config = base / "pre-commit-config.yaml"
    config.write_text(
        f"repos:\n- repo: {clone}\n  rev: {revision}\n  hooks:\n"
        "  - id: groundwiki-lint\n  - id: groundwiki-lock-check\n"
    )
    home = base / "home"
    home.mkdir()
    return config, home


def run_hook(root: Path, hooks: tuple[Path, Path], hook: str) -> subprocess.CompletedProcess[str]:
    config, home = hooks
    return subprocess.run(
        [str(BIN / "pre-commit"), "run", "--config", str(config), hook, "--all-files"],
        cwd=root, capture_output=True, text=True, timeout=900,
        # The lock check is a `system` hook: it runs the groundwiki on PATH, this one.
        env={
            **os.environ,
            "PRE_COMMIT_HOME": str(home),
            # pip's `--no-compile` for the hook's environment (pip reads this variable's value
            # inverted: "0" is no compiling). Byte-compiling every module it installs was about
            # half of the install, and the hooks import a few of them once.
            "PIP_NO_COMPILE": "0",
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        },
    )  # fmt: skip


def test_the_hooks_fail_a_broken_link_and_a_stale_lock_then_pass(tmp_path, hooks):
    root = wiki = tmp_path / "repo"
    write_wiki(
        wiki,
        {
            "index.md": page(kind="overview", title="Home", body="See [[wing]] and [[nope]].\n"),
            "wing.md": page(
                body="Flutter. <!-- from: raw-sources/notes.md#L1 -->\nSee [[index]].\n"
            ),
        },
        {"notes.md": "Flutter grows with speed.\n"},
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    lint = run_hook(root, hooks, "groundwiki-lint")
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "broken-link" in lint.stdout and "nope" in lint.stdout
    lock = run_hook(root, hooks, "groundwiki-lock-check")
    assert lock.returncode == 1 and "out of date" in lock.stdout
    index = wiki / "wiki/index.md"
    index.write_text(index.read_text().replace(" and [[nope]]", ""))
    subprocess.run([str(BIN / "groundwiki"), "-q", "lock"], cwd=wiki, check=True)
    git(root, "add", "-A")
    assert run_hook(root, hooks, "groundwiki-lint").returncode == 0
    assert run_hook(root, hooks, "groundwiki-lock-check").returncode == 0


def test_a_hooks_args_can_point_it_at_a_wiki_below_the_root(tmp_path):
    """What pre-commit runs for `args: [-f, docs/mkdocs.yml]`: the entry, then the args."""
    write_wiki(tmp_path / "docs", {"index.md": page(kind="overview", title="Home")})
    hooks = (REPOSITORY / ".pre-commit-hooks.yaml").read_text()
    for entry in ("groundwiki lint -q", "groundwiki lock -q --check"):
        assert f"entry: {entry}\n" in hooks
        command = [str(BIN / "groundwiki"), *entry.split()[1:], "-f", "docs/mkdocs.yml"]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode in (0, 1) and "no mkdocs.yml" not in done.stderr, done.stderr
