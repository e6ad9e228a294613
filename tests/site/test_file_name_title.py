"""A page without `title:` is titled by its file name, as the writer spelled it."""

from __future__ import annotations

import json
import re

from helpers.site_builds import build, build_material_site, html, with_material
from helpers.wikis import page, write_wiki


def test_the_site_keeps_a_file_names_own_capitalisation(tmp_path):
    # MkDocs would capitalise a name written all in lower case ("Macos tips").
    config = with_material(write_wiki(tmp_path, {"macos tips.md": page(body="Some text.\n")}))
    result = build(config)
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "site" / "macos tips" / "index.html").read_text()
    assert "<title>macos tips" in html
    assert "Macos tips" not in html


# Issue 31: a note's title is its file name (Obsidian's and Quartz's), not its first `# ` heading
# wherever it stands; `title_from: heading` keeps the heading.
NOTES = {
    "index.md": page(title="Home", body="See [[PARA]], [[notes]] and [[getting-started]].\n"),
    # The obsidian-hub vault's footer: six notes were titled "This note in GitHub".
    "PARA.md": page(body="A method.\n\n%% Hub footer %%\n\n# This note in GitHub\n\nEdit it.\n"),
    # MkDocs would title it by this heading, which names something else.
    "notes.md": page(body="# A heading about something\n\nText.\n"),
    # The file name, written better: kept.
    "getting-started.md": page(body="# Getting Started\n\nText.\n"),
}


def _titles(root, urls):
    """Each page's title as the tab, the navigation, the A–Z index and pages.json give it."""
    index = html(root, "groundwiki/a-z")
    listed = json.loads((root / "site/groundwiki/pages.json").read_text())
    by_doc = {p["path"].removeprefix("wiki/"): p["title"] for p in listed["pages"]}
    home = html(root, "")
    found = {}
    for url, doc in urls.items():
        tab = re.search(r"<title>(.*?) - fixture</title>", html(root, url)).group(1)
        link = rf'<a href="[./]*{re.escape(url)}/" class="md-nav__link">\s*'
        nav = re.findall(link + r'<span class="md-ellipsis">\s*(.*?)\s*</span>', home)
        in_index = re.findall(rf'<dt><a href="[./]*{re.escape(url)}/">(.*?)</a></dt>', index)
        assert nav and in_index, url
        found[url] = {tab, *nav, *in_index, by_doc[doc]}
    return found


def _search_title(root, location):
    """The title site search gives the top of a page (mkdocs-material's index: a page whose
    body opens with a `# ` heading is found under that heading, as written)."""
    search = json.loads((root / "site/search/search_index.json").read_text())
    return next(d["title"] for d in search["docs"] if d["location"] == location)


def test_a_notes_title_is_its_file_name_everywhere_the_site_names_it(tmp_path):
    write_wiki(tmp_path, NOTES)
    result = build_material_site(tmp_path)
    assert result.returncode == 0, result.stderr
    urls = {"PARA": "PARA.md", "notes": "notes.md", "getting-started": "getting-started.md"}
    assert _titles(tmp_path, urls) == {
        "PARA": {"PARA"},
        "notes": {"notes"},
        "getting-started": {"Getting Started"},
    }
    assert "This note in GitHub</title>" not in html(tmp_path, "PARA")
    assert _search_title(tmp_path, "PARA/") == "PARA"


def test_title_from_heading_titles_a_note_by_its_first_heading(tmp_path):
    write_wiki(tmp_path, NOTES)
    result = build_material_site(tmp_path, title_from="heading")
    assert result.returncode == 0, result.stderr
    urls = {"PARA": "PARA.md", "notes": "notes.md"}
    assert _titles(tmp_path, urls) == {
        "PARA": {"This note in GitHub"},
        "notes": {"A heading about something"},
    }
    assert _search_title(tmp_path, "PARA/") == "This note in GitHub"
