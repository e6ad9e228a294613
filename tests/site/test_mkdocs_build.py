"""Real `mkdocs build` runs: the plugin reports lint findings and --strict fails on errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.commands import groundwiki, mkdocs
from helpers.site_builds import build, with_material
from helpers.wikis import ROOT, page, write_wiki


def test_the_bundled_wiki_builds_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = mkdocs("build", "--strict", "-d", str(tmp_path / "site"), cwd=ROOT, env=env)
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


def test_lint_infos_are_one_line_of_the_build_log_and_warnings_one_each(tmp_path):
    pages = {"index.md": page(body="<!-- from: raw-sources/n.md -->\n")}
    pages |= {f"note{n}.md": "# A note\n\nNo summary, no links.\n" for n in range(30)}
    config = write_wiki(tmp_path, pages, {"n.md": "evidence\n"})
    result = build(config, "--strict")  # lint infos and warnings pass a strict build
    assert result.returncode == 0, result.stderr
    assert "wiki/index.md:4:1: unlocked-source:" in result.stderr  # a warning: its own line
    assert "missing-summary:" not in result.stderr and "orphan-page:" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "lint info" in line]
    infos = json.loads(groundwiki("lint", "--format", "json", cwd=tmp_path).stdout)["counts"]
    assert infos["info"] >= 60  # each note: a missing summary and an orphan
    assert line.startswith("INFO") and f"groundwiki: {infos['info']} lint infos (30 " in line
    assert "(groundwiki/lint/)" in line and "`groundwiki lint --min-severity info`" in line
    lint_page = (tmp_path / "site/groundwiki/lint/index.html").read_text(encoding="utf-8")
    assert "wiki/note29.md" in lint_page


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


def with_block(tmp_path: Path, block: str) -> Path:
    """A one-page wiki whose groundwiki block is `block`: option lines indented 6, from line 6."""
    config = write_wiki(tmp_path, {"index.md": page()})
    config.write_text(
        "site_name: fixture\ndocs_dir: wiki\nplugins:\n  - search\n  - groundwiki:\n" + block
    )
    return config


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("navigation: sometimes", "'navigation' is 'sometimes'; use one of auto, full, compact"),
        ("compact_above: -1", "'compact_above' must be an integer >= 0, got -1"),
        ("backlinks: maybe", "'backlinks' must be true or false"),
    ],
)
def test_a_bad_site_option_fails_the_build_naming_its_line(tmp_path, option, message):
    result = build(with_block(tmp_path, f"      graph: true\n      {option}\n"))
    assert result.returncode != 0
    assert f"groundwiki: mkdocs.yml:7: groundwiki option {message}" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_plugin_option_is_a_warning_that_names_the_option_meant(tmp_path):
    config = with_block(tmp_path, "      graph: true\n      backlink: false\n")
    result = build(config)
    assert result.returncode == 0, result.stderr
    assert "mkdocs.yml:7: unknown groundwiki option 'backlink'; did you mean 'backlinks'?" in (
        result.stderr
    )
    assert build(config, "--strict").returncode != 0  # MkDocs' own rule for unknown options


def test_blank_options_keep_their_defaults(tmp_path):
    blank = ("max_pointers", "strict", "backlinks", "graph", "navigation", "compact_above")
    result = build(with_block(tmp_path, "".join(f"      {name}:\n" for name in blank)))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site/groundwiki/graph/index.html").is_file()


def test_the_build_log_lists_a_few_findings_of_a_rule_and_counts_the_rest(tmp_path):
    body = "".join(f"[[nowhere{n}]]\n\n" for n in range(5))
    config = with_material(
        write_wiki(tmp_path, {"index.md": page(body=body)}, options={"log_per_rule": 2})
    )
    result = build(config, "--strict")
    assert result.returncode != 0  # two errors logged are enough to fail a strict build
    listed = [line for line in result.stderr.splitlines() if ": broken-link:" in line]
    assert len(listed) == 2 and all(line.startswith("WARNING") for line in listed)
    (rest,) = [line for line in result.stderr.splitlines() if "more broken-link" in line]
    assert "3 more broken-link findings not listed here (5 in all)" in rest
    assert "`groundwiki lint --min-severity warning`" in rest
