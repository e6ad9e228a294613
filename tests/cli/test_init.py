"""`groundwiki init FOLDER`: an mkdocs.yml beside a folder of notes that a real `mkdocs build`
takes as it is, the site beside the notes, Obsidian's templates left out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from helpers.commands import groundwiki

MKDOCS = str(Path(sys.executable).parent / "mkdocs")


def _vault(root: Path, templates: str | None = "Daily templates") -> Path:
    vault = root / "My Vault"
    (vault / "people").mkdir(parents=True)
    (vault / "Start here.md").write_text("# Start here\n\nSee [[Ann]].\n")
    (vault / "people/Ann.md").write_text("Ann works on [[Start here]].\n")
    if templates:
        (vault / ".obsidian").mkdir()
        (vault / ".obsidian/templates.json").write_text(json.dumps({"folder": templates}))
        (vault / templates).mkdir()
        (vault / templates / "daily.md").write_text("---\ndate: {{date}}\n---\n# {{title}}\n")
    return vault


def test_init_writes_a_config_beside_the_notes_that_mkdocs_builds(tmp_path):
    vault = _vault(tmp_path)
    done = groundwiki("init", str(vault), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mkdocs serve -f mkdocs.yml" in done.stdout
    config = yaml.safe_load((tmp_path / "mkdocs.yml").read_text())
    assert config["docs_dir"] == "My Vault" and config["site_dir"] == "site"
    assert config["site_name"] == "My Vault"
    assert "groundwiki" in config["plugins"] and config["theme"]["name"] == "material"
    assert config["theme"]["font"] is False  # no request to Google Fonts: works offline
    built = subprocess.run(
        [MKDOCS, "build", "-q", "-f", "mkdocs.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr
    site = tmp_path / "site"
    assert (site / "Start here/index.html").is_file() and (site / "people/Ann/index.html").is_file()
    assert not (site / "Daily templates").exists()  # the vault's templates are no pages
    assert not (vault / "site").exists()  # nothing written into the notes


def test_init_leaves_an_existing_config_alone(tmp_path):
    vault = _vault(tmp_path, templates=None)
    (tmp_path / "mkdocs.yml").write_text("site_name: mine\n")
    done = groundwiki("init", str(vault), cwd=tmp_path)
    assert done.returncode == 2 and "exists already" in done.stderr
    assert (tmp_path / "mkdocs.yml").read_text() == "site_name: mine\n"
    assert (
        "exclude_docs" not in groundwiki("init", str(vault), "--site-name", "x", cwd=vault).stderr
    )


def test_init_refuses_what_is_no_folder(tmp_path):
    done = groundwiki("init", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert done.returncode == 2 and "is no folder" in done.stderr
