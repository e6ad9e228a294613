"""The folder explorer's tree over the whole real vault (../shared/vaults/obsidian-hub, 6,571
notes in 47 folders, issue 31): every folder that holds a note is in it, so the explorer that
every page loads reaches every folder; every note is in it once, at its URL; each folder is
sorted (folders first, then pages, without regard to case); and the file stays small, about a
hundred bytes a note. The vault is read, never written (its mkdocs.yml is a temp file)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.render.explorer import explorer_json
from helpers.edit_walk import VAULT

# Compiling the vault takes most of a minute beside other work.
pytestmark = [
    pytest.mark.long,
    pytest.mark.skipif(not VAULT.is_dir(), reason="the obsidian-hub vault is not here"),
]


def _folders_with_notes(vault: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if folder != str(vault) and any(name.endswith(".md") for name in files):
            found.add(Path(folder).relative_to(vault).as_posix())
    return found


def _walk(folder: dict[str, Any], folders: list[str], pages: list[str]) -> None:
    names = [f["name"] for f in folder["folders"]]
    assert names == sorted(names, key=str.casefold), folder.get("path")
    titles = [p["title"] for p in folder["pages"]]
    assert titles == sorted(titles, key=str.casefold), folder.get("path")
    pages += [p["url"] for p in folder["pages"]]
    for child in folder["folders"]:
        folders.append(child["path"])
        _walk(child, folders, pages)


def test_the_tree_reaches_every_folder_and_note_of_the_vault(tmp_path: Path) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump({"site_name": "vault", "docs_dir": str(VAULT)}))
    wiki = compile_wiki(load_config(config))
    text = explorer_json(wiki)
    folders: list[str] = []
    urls: list[str] = []
    _walk(json.loads(text), folders, urls)
    expected = _folders_with_notes(VAULT)
    assert len(expected) > 40
    assert sorted(folders) == sorted(expected)
    assert len(urls) == len(set(urls)) == len(wiki.all_pages) > 6000
    assert set(urls) == {wiki.layout.url(page.doc_path) for page in wiki.all_pages}
    # About a hundred bytes a note (titles and URLs, each URL its folders' path again).
    assert len(text.encode()) < 110 * len(urls), len(text.encode())
