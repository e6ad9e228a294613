"""Drafts (mkdocs.yml's `draft_docs`) and notes marked `publish: false` stay out of the built
site, its search index, its explorer and its generated pages; `mkdocs serve` previews drafts."""

from __future__ import annotations

import json

import yaml
from groundwiki.mkdocs_plugin.plugin_options import checked_settings
from helpers.site_builds import build_material_site
from helpers.wikis import page, write_wiki
from mkdocs.config import load_config as load_mkdocs_config

SECRET = "---\ntitle: Secret plans\npublish: false\n---\nThe launch date is kept from readers.\n"


def _wiki(tmp_path):
    config = write_wiki(
        tmp_path,
        {
            "index.md": page(kind="overview", body="[[note]]\n"),
            "note.md": page(body="Published text.\n"),
            "drafts/idea.md": page(body="A half-formed idea about zeppelins.\n"),
            "secret.md": SECRET,
        },
    )
    data = yaml.safe_load(config.read_text())
    data["draft_docs"] = "drafts/\n"
    config.write_text(yaml.safe_dump(data))
    return config


def test_a_build_leaves_out_drafts_and_unpublished_notes_everywhere(tmp_path):
    _wiki(tmp_path)
    result = build_material_site(tmp_path, navigation="compact")
    assert result.returncode == 0, result.stderr
    site = tmp_path / "site"
    assert (site / "note/index.html").is_file()
    assert not (site / "secret").exists() and not (site / "drafts").exists()
    everything = "".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in site.rglob("*")
        if path.is_file() and path.suffix in (".html", ".json", ".xml")
    )
    for hidden in ("launch date", "Secret plans", "zeppelins", "drafts/idea"):
        assert hidden not in everything, hidden


def test_mkdocs_serve_previews_drafts_but_never_unpublished_notes(tmp_path):
    config_file = _wiki(tmp_path)
    mkdocs_config = load_mkdocs_config(str(config_file))
    block = mkdocs_config.plugins["groundwiki"].config
    built = checked_settings(block, mkdocs_config).core
    served = checked_settings(block, mkdocs_config, previews_drafts=True).core
    assert built.left_out("drafts/idea.md") and not served.left_out("drafts/idea.md")
    assert not built.left_out("secret.md")  # left out by its frontmatter, not its path
    assert json.dumps(built.draft_docs) == '["drafts/"]'
