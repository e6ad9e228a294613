"""The groundwiki command, run as a user runs it: a real process on a wiki on disk."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from helpers.commands import groundwiki
from helpers.wikis import page, write_wiki

GROUNDWIKI = str(Path(sys.executable).parent / "groundwiki")
NOTES = "".join(f"Evidence line {n}.\n" for n in range(1, 21))


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return groundwiki(*args, cwd=cwd)


def broken_wiki(root: Path) -> Path:
    pages = {
        "home.md": page(
            kind="overview", body="[[a]] [[b]] [[c]] [[d]] [[old]] [[e]] [[f]] [[shared]]\n"
        ),
        "a.md": "---\nsummary: [unclosed\n---\n",
        "b.md": "---\nsummary: s\nusage_mode: sometimes\n---\n",
        "c.md": "---\ntitle: no summary\n---\n",
        "d.md": page(body="[[nowhere]] [[e#No Such Heading]]\n"),
        "D.md": page(),
        "e.md": page(
            aliases=["shared"],
            body="<!-- from: raw-sources/missing.md -->\n<!-- from: ../outside.md -->\n"
            "<!-- from: raw-sources/notes.md#L5-L99 -->\n<!-- from: raw-sources/notes.md#L1-L2 -->\n",
        ),
        "f.md": page(aliases=["Shared"], body="[[old]]\n"),
        "old.md": page(archived_since="2025-06-01"),
        "lonely.md": page(),
    }
    sources = {"notes.md": NOTES, "uncited.md": "nobody cites me\n", "blob.bin": b"\x00\x01"}
    return write_wiki(root, pages, sources)


def test_lint_prints_each_rule_with_file_and_line(tmp_path):
    broken_wiki(tmp_path)
    result = run("lint", cwd=tmp_path)
    assert result.returncode == 1
    found = re.findall(
        r"^(\S+):(\d+):(\d+): (error|warning|info) ([a-z-]+): .+$", result.stdout, re.M
    )
    rules = {rule for *_, rule in found}
    assert rules >= {
        "invalid-frontmatter", "schema-violation", "missing-summary", "duplicate-key",
        "alias-collision", "broken-link", "broken-anchor", "missing-source", "source-outside-raw",
        "invalid-citation", "unlocked-source", "orphan-page", "uncited-source",
        "link-to-archived", "unreadable-source",
    }  # fmt: skip
    assert ("wiki/b.md", "3", "1", "error", "schema-violation") in found
    assert result.stdout.count("    hint: ") == len(found)
    assert "errors" in result.stderr


def test_lock_then_an_edit_of_a_cited_source_reports_drift(tmp_path):
    write_wiki(
        tmp_path,
        {"p.md": page(kind="overview", body="Claim. <!-- from: raw-sources/notes.md#L3-L4 -->\n")},
        {"notes.md": NOTES},
    )
    assert run("lint", cwd=tmp_path).returncode == 0  # unlocked is only a warning
    assert run("lint", "--strict", cwd=tmp_path).returncode == 1
    locked = run("lock", cwd=tmp_path)
    assert locked.returncode == 0 and "added" in locked.stderr
    assert run("lint", "--strict", cwd=tmp_path).returncode == 0
    (tmp_path / "raw-sources/notes.md").write_text(
        NOTES.replace("Evidence line 4.", "Changed line 4.")
    )
    result = run("lint", cwd=tmp_path)
    assert "wiki/p.md:5:8: warning drifted-source:" in result.stdout
    relocked = run("lock", cwd=tmp_path)
    assert "wiki/p.md:5: accepted the changed text of raw-sources/notes.md#L3-L4" in relocked.stderr


def test_json_format_is_machine_readable(tmp_path):
    broken_wiki(tmp_path)
    result = run("lint", "--format", "json", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert (
        data["counts"]["error"] == sum(1 for f in data["findings"] if f["severity"] == "error") > 0
    )
    assert set(data["findings"][0]) == {
        "rule",
        "severity",
        "path",
        "line",
        "column",
        "message",
        "hint",
        "detail",
    }


def test_github_format_annotates_files(tmp_path):
    broken_wiki(tmp_path)
    result = run("lint", "--format", "github", cwd=tmp_path)
    assert "::error file=wiki/b.md,line=3,col=1,title=schema-violation::" in result.stdout
    assert "::notice file=" in result.stdout


def test_the_config_file_can_be_given_with_f(tmp_path):
    config = write_wiki(tmp_path / "site", {"p.md": page(kind="overview")})
    result = run("-f", str(config), "lint", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_bad_config_exits_2_with_the_reason(tmp_path):
    write_wiki(tmp_path, {"p.md": page()}, options={"max_pointers": -1})
    result = run("lint", cwd=tmp_path)
    assert result.returncode == 2
    assert "max_pointers" in result.stderr and "Traceback" not in result.stderr


def test_no_mkdocs_yml_exits_2_with_the_fix(tmp_path):
    result = run("lint", cwd=tmp_path)
    assert result.returncode == 2 and "-f path/to/mkdocs.yml" in result.stderr


def test_graph_exports_json(tmp_path):
    write_wiki(tmp_path, {"a.md": page(body="[[b]]\n"), "b.md": page()})
    data = json.loads(run("graph", "--format", "json", cwd=tmp_path).stdout)
    assert [(e["source"], e["target"], e["type"]) for e in data["edges"]] == [
        ("a", "b", "wikilink")
    ]


def test_write_baseline_then_lint_passes(tmp_path):
    broken_wiki(tmp_path)
    assert run("lint", "--write-baseline", cwd=tmp_path).returncode == 0
    result = run("lint", cwd=tmp_path)
    assert result.returncode == 0 and "silenced by the baseline" in result.stderr
    assert run("lint", "--no-baseline", cwd=tmp_path).returncode == 1


def test_a_closed_pipe_keeps_the_verdict_without_a_traceback(tmp_path):
    broken_wiki(tmp_path)
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{GROUNDWIKI}' lint | head -1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.stdout.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert result.returncode == 1  # the wiki has errors, whoever stopped reading


def test_github_format_escapes_commas_and_colons_in_paths(tmp_path):
    write_wiki(
        tmp_path,
        {"home.md": page(kind="overview", body="[[a,b]]\n"), "a,b.md": "---\ntitle: x\n---\n"},
    )
    result = run("lint", "--format", "github", cwd=tmp_path)
    assert "file=wiki/a%2Cb.md,line=1,col=1,title=missing-summary::" in result.stdout


def test_min_severity_lists_fewer_findings_and_the_summary_still_counts_them(tmp_path):
    broken_wiki(tmp_path)
    every = run("lint", cwd=tmp_path)
    shown = run("lint", "--min-severity", "warning", cwd=tmp_path)
    assert shown.returncode == every.returncode == 1  # the filter leaves the verdict alone
    severities = re.findall(r"^\S+:\d+:\d+: (\w+) ", shown.stdout, re.M)
    assert severities and set(severities) == {"error", "warning"}
    infos = re.findall(r"^\S+:\d+:\d+: info ", every.stdout, re.M)
    counts = every.stderr.splitlines()[-1]  # every severity, with or without the filter
    assert shown.stderr.splitlines()[-1] == (
        f"{counts}; {len(infos)} infos not shown (--min-severity info lists them)"
    )
    assert "not shown" not in every.stderr
    errors = run("lint", "--min-severity", "error", cwd=tmp_path)
    assert set(re.findall(r"^\S+:\d+:\d+: (\w+) ", errors.stdout, re.M)) == {"error"}
    assert re.search(r"; \d+ warnings and \d+ infos not shown \(", errors.stderr)
    data = json.loads(
        run("lint", "--format", "json", "--min-severity", "warning", cwd=tmp_path).stdout
    )
    assert {f["severity"] for f in data["findings"]} == {"error", "warning"}
    assert data["counts"]["info"] == data["not_shown"]["info"] == len(infos) > 0
    assert data["min_severity"] == "warning"
    github = run("lint", "--format", "github", "--min-severity", "warning", cwd=tmp_path)
    assert "::error file=" in github.stdout and "::notice file=" not in github.stdout


def test_lint_needs_no_tokenizer_for_ordinary_tiny_or_junk_sources(tmp_path):
    # A pre-commit hook's environment has groundwiki without the tokenizer: lint must not need it
    # to look for junk chunks in ordinary text, nor fail where it would.
    blob = "\n".join(
        ["QUJDRGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY3ODkwK0FCQ0RFRkdISUpLTE1OT1BR"] * 40
    )
    write_wiki(
        tmp_path,
        {"a.md": page(body="Grows. <!-- from: raw-sources/notes.md#L1 -->\n")},
        {"notes.md": "Flutter grows with speed.\n", "tiny.txt": "ok\n", "blob.txt": blob},
    )
    # A process of its own: a fork of this one may have the tokenizer loaded already.
    done = subprocess.run(
        [sys.executable, "-m", "groundwiki", "lint"],
        cwd=tmp_path,
        env={**os.environ, "GROUNDWIKI_TOKENIZER": str(tmp_path / "none")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "tokenizer" not in done.stdout + done.stderr
