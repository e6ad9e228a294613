"""The compact navigation (large wikis) starts with Home, pointing at the site root, whichever
file is the root: index.md, README.md or Home.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.site_builds import build_material_site, html
from helpers.wikis import page, write_wiki

TOPICS = {f"topic/p{i}.md": page(body=f"# P{i}\n\n[[p{(i + 1) % 6}]]\n") for i in range(6)}
HOME_LINK = re.compile(r'<a href="(?P<href>[^"]*)"[^>]*class="md-nav__link[^"]*"[^>]*>\s*'
                       r'<span class="md-ellipsis">\s*Home\s*</span>')  # fmt: skip


def _home_href(root: Path, url: str) -> str | None:
    found = HOME_LINK.search(html(root, url))
    return found.group("href") if found else None


@pytest.mark.parametrize("root_file", ["index.md", "README.md", "Home.md"])
def test_home_in_the_compact_navigation_is_the_site_root(tmp_path, root_file):
    pages = {root_file: page(kind="overview", body="# Welcome\n\nStart at [[p0]].\n"), **TOPICS}
    write_wiki(tmp_path, pages)
    result = build_material_site(tmp_path, compact_above=3)
    assert result.returncode == 0, result.stderr
    # From a page two folders down, Home leads back to the root.
    assert _home_href(tmp_path, "topic/p3") == "../.."
