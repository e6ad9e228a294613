"""Real `mkdocs build` runs: the plugin reports lint findings and --strict fails on errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import ROOT, page, write_wiki

MKDOCS = str(Path(sys.executable).parent / "mkdocs")


def build(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [MKDOCS, "build", "-f", str(config), "-d", str(config.parent / "site"), *args],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def with_material(config: Path) -> Path:
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material"}
    config.write_text(yaml.safe_dump(data))
    return config


def test_the_bundled_wiki_builds_strict(tmp_path):
    result = subprocess.run(
        [MKDOCS, "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site/index.html").is_file()


def test_a_lint_error_is_a_warning_that_fails_strict_builds(tmp_path):
    config = with_material(write_wiki(tmp_path, {"index.md": page(body="[[nowhere]]\n")}))
    loose = build(config)
    assert loose.returncode == 0
    assert "wiki/index.md:4:1: broken-link:" in loose.stderr
    strict = build(config, "--strict")
    assert strict.returncode != 0


def test_lint_warnings_do_not_fail_strict_builds(tmp_path):
    config = with_material(
        write_wiki(
            tmp_path,
            {"index.md": page(body="<!-- from: raw-sources/n.md -->\n")},
            {"n.md": "evidence\n"},
        )
    )
    result = build(config, "--strict")
    assert result.returncode == 0, result.stderr
    assert "unlocked-source" in result.stderr


def test_the_plugin_strict_option_fails_on_warnings(tmp_path):
    config = with_material(
        write_wiki(
            tmp_path,
            {"index.md": page(body="<!-- from: raw-sources/n.md -->\n")},
            {"n.md": "evidence\n"},
            options={"strict": True},
        )
    )
    result = build(config)
    assert result.returncode != 0
    assert "groundwiki strict: 0 errors and 1 warnings" in result.stderr


def test_a_bad_plugin_option_stops_the_build_with_its_name(tmp_path):
    config = with_material(
        write_wiki(tmp_path, {"index.md": page()}, options={"max_pointers": "many"})
    )
    result = build(config)
    assert result.returncode != 0
    assert "max_pointers" in result.stderr and "Traceback" not in result.stderr


def test_one_broken_page_does_not_stop_the_others(tmp_path):
    config = with_material(
        write_wiki(
            tmp_path,
            {
                "index.md": page(body="[[good]]\n"),
                "bad.md": "---\nsummary: [\n---\n# Bad\n",
                "good.md": page(body="# Good\n"),
            },
        )
    )
    result = build(config)
    assert result.returncode == 0
    assert "invalid-frontmatter" in result.stderr
    assert (tmp_path / "site/good/index.html").is_file()
    assert (tmp_path / "site/bad/index.html").is_file()
