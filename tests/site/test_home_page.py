"""The home page: `index.md`, `README.md` or `Home.md` (in that order, at the top of the wiki) is
the site root and links to the others; every one of them is published where links say."""

from __future__ import annotations

import os
import re
from pathlib import Path

from groundwiki.core import compile_wiki, load_config
from helpers.commands import mkdocs
from helpers.wikis import page, write_wiki


def build(tmp_path: Path, pages: dict[str, str]) -> Path:
    """A strict `mkdocs build` of a small wiki; the site folder."""
    config = write_wiki(tmp_path, pages)
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = mkdocs("build", "--strict", "-f", str(config), "-d", str(site), env=env)
    assert result.returncode == 0, result.stderr
    return site


def html(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def home_links(site: Path) -> list[str]:
    """The links of the root's own list of the other home pages (not the theme's navigation)."""
    found = re.search(r'<p class="gw-home-links">(.*?)</p>', html(site, "index.html"), re.S)
    return re.findall(r'href="([^"]*)"', found.group(1)) if found else []


def test_a_readme_beside_the_index_is_published_and_linked_from_the_root(tmp_path):
    site = build(
        tmp_path,
        {"index.md": page(body="# Start\n\nThe index.\n"), "README.md": page(body="Read me.\n")},
    )
    assert "Read me." in html(site, "README/index.html")
    assert home_links(site) == ["README/"]


def test_a_readme_beside_an_index_in_a_folder_is_published(tmp_path):
    pages = {
        "index.md": page(body="Root.\n"),
        "guide/index.md": page(body="Guide.\n"),
        "guide/README.md": page(body="Guide readme.\n"),
    }
    assert "Guide readme." in html(build(tmp_path, pages), "guide/README/index.html")


def test_home_is_the_site_root_without_an_index_or_a_readme(tmp_path):
    pages = {"Home.md": page(body="Welcome home.\n"), "other.md": page(body="Back [[Home]].\n")}
    site = build(tmp_path, pages)
    assert "Welcome home." in html(site, "index.html")
    assert not (site / "Home").exists()
    assert 'href="../"' in html(site, "other/index.html")


def test_a_readme_root_links_to_home(tmp_path):
    pages = {"README.md": page(body="Read me.\n"), "Home.md": page(body="Welcome home.\n")}
    site = build(tmp_path, pages)
    assert "Read me." in html(site, "index.html")
    assert home_links(site) == ["Home/"]
    assert "Welcome home." in html(site, "Home/index.html")


def test_links_to_a_readme_beside_an_index_land_on_its_own_url(tmp_path):
    config = write_wiki(tmp_path, {"index.md": page(), "README.md": page(), "a/README.md": page()})
    layout = compile_wiki(load_config(config)).layout
    assert [layout.url(doc) for doc in ("index.md", "README.md", "a/README.md")] == [
        "",
        "README/",
        "a/",
    ]
