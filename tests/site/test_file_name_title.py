"""A page without `title:` or `# H1` is titled by its file name, as the writer spelled it."""

from __future__ import annotations

from helpers.site_builds import build, with_material
from helpers.wikis import page, write_wiki


def test_the_site_keeps_a_file_names_own_capitalisation(tmp_path):
    # MkDocs would capitalise a name written all in lower case ("Macos tips").
    config = with_material(write_wiki(tmp_path, {"macos tips.md": page(body="Some text.\n")}))
    result = build(config)
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "site" / "macos tips" / "index.html").read_text()
    assert "<title>macos tips" in html
    assert "Macos tips" not in html
