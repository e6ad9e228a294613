"""The GitHub Actions workflow the handbook offers (raw-sources/ci/github-actions-wiki.yml) runs
as written: its groundwiki steps, run in a wiki, annotate a broken link on its line and fail,
then pass once the link is fixed and the lock written."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from helpers.wikis import page, write_wiki

WORKFLOW = Path(__file__).resolve().parents[2] / "raw-sources/ci/github-actions-wiki.yml"
BIN = Path(sys.executable).parent


def groundwiki_steps() -> list[list[str]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["lint"]["steps"]
    runs = [shlex.split(step["run"]) for step in steps if "run" in step]
    return [args for args in runs if args[0] == "groundwiki"]


def run_steps(root: Path) -> list[subprocess.CompletedProcess[str]]:
    return [
        subprocess.run(
            [str(BIN / "groundwiki"), *args[1:]],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        for args in groundwiki_steps()
    ]


def test_the_workflow_fails_with_an_annotation_then_passes_once_fixed(tmp_path):
    assert [args[1:3] for args in groundwiki_steps()] == [["-q", "lint"], ["-q", "lock"]]
    write_wiki(
        tmp_path,
        {
            "index.md": page(kind="overview", title="Home", body="See [[wing]] and [[nope]].\n"),
            "wing.md": page(
                body="Flutter. <!-- from: raw-sources/notes.md#L1 -->\nSee [[index]].\n"
            ),
        },
        {"notes.md": "Flutter grows with speed.\n"},
    )
    lint, lock = run_steps(tmp_path)
    assert lint.returncode == 1 and lock.returncode == 1
    assert "::error file=wiki/index.md,line=" in lint.stdout and "title=broken-link" in lint.stdout
    index = tmp_path / "wiki/index.md"
    index.write_text(index.read_text().replace(" and [[nope]]", ""))
    subprocess.run([str(BIN / "groundwiki"), "-q", "lock"], cwd=tmp_path, check=True)
    assert [done.returncode for done in run_steps(tmp_path)] == [0, 0]


def test_the_site_job_builds_strict_with_its_cache_where_the_plugin_keeps_it(tmp_path):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["site"]["steps"]
    cached = next(step for step in steps if step.get("uses", "").startswith("actions/cache"))
    builds = [
        shlex.split(step["run"]) for step in steps if step.get("run", "").startswith("mkdocs")
    ]
    assert builds == [["mkdocs", "build", "--strict"]]
    write_wiki(tmp_path, {"index.md": page(kind="overview", title="Home", body="# Home\n")})
    for _ in range(2):  # the second build starts from the cache the first one left
        done = subprocess.run(
            [str(BIN / "mkdocs"), *builds[0][1:]], cwd=tmp_path, capture_output=True, text=True,
            timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (tmp_path / cached["with"]["path"] / "compile-cache.json").is_file()
