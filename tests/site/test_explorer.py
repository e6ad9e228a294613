"""The folder explorer's tree (issue 31, "Readers at scale"): real `mkdocs build` runs of small
wikis with nested folders write `groundwiki/explorer.json` beside the other artifacts, with every
published shared page by folder (folders first, then pages, each sorted without regard to case),
URLs as MkDocs publishes them; every page of a compact site loads the explorer's script and
carries nothing of the tree; a user's own page is never in it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.render_helpers import build_site
from helpers.site_builds import SCHEMAS
from helpers.wikis import page

HOSTILE = "<img src=x onerror=alert(1)>"
PAGES = {
    "index.md": page("The home page.", "# Home\n\nStart at [[alpha]].\n"),
    "zebra.md": page("Last at the top.", "# zebra\n"),
    "Apple.md": page("First at the top.", "# Apple\n"),
    "guide/beta.md": page("Beta.", "# beta\n", title="beta"),
    "guide/alpha.md": page("Alpha.", "# Alpha\n\nSee [[leaf]].\n", title="Alpha"),
    "guide/deep/nested/leaf.md": page("A leaf.", "# Leaf\n", title="Quokka leaf"),
    "Zoo/keeper.md": page("Keeps.", "# Keeper\n"),
    "apps/tool.md": page("A tool.", "# Tool\n"),
    "notes/hostile.md": page("Hostile.", "# Hostile\n", title=HOSTILE),
}
COMPACT = {"plugins": ["search", {"groundwiki": {"navigation": "compact"}}]}


def explorer(site: Path) -> dict[str, Any]:
    return json.loads((site / "groundwiki/explorer.json").read_text(encoding="utf-8"))


def shape(folder: dict[str, Any]) -> list[Any]:
    """The tree as names: a folder as (name, its contents), a page as (title, url)."""
    return [(f["name"], shape(f)) for f in folder["folders"]] + [
        (p["title"], p["url"]) for p in folder["pages"]
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("explorer"), PAGES, **COMPACT)


def test_the_tree_holds_every_folder_and_page_sorted(site):
    assert shape(explorer(site)) == [
        ("apps", [("Tool", "apps/tool/")]),
        (
            "guide",
            [
                ("deep", [("nested", [("Quokka leaf", "guide/deep/nested/leaf/")])]),
                ("Alpha", "guide/alpha/"),
                ("beta", "guide/beta/"),
            ],
        ),
        ("notes", [(HOSTILE, "notes/hostile/")]),
        ("Zoo", [("Keeper", "Zoo/keeper/")]),
        ("Apple", "Apple/"),
        ("index", ""),
        ("zebra", "zebra/"),
    ]
    folders = explorer(site)["folders"]
    assert [f["path"] for f in folders[1]["folders"]] == ["guide/deep"]
    assert folders[1]["folders"][0]["folders"][0]["path"] == "guide/deep/nested"


def test_the_tree_follows_its_schema(site):
    schema = json.loads((SCHEMAS / "explorer.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(explorer(site))


def test_every_page_loads_the_explorer_and_carries_none_of_the_tree(site):
    for url in ("", "apps/tool/", "guide/deep/nested/leaf/", "groundwiki/a-z/"):
        text = (site / url / "index.html").read_text(encoding="utf-8")
        assert re.search(r'<script src="[./]*(groundwiki/)?assets/explorer\.js"', text), url
        assert re.search(r'href="[./]*(groundwiki/)?assets/explorer\.css"', text), url
        assert "explorer.json" not in text, url  # the script finds it beside itself
    # The compact navigation links no page of a folder: another page's title is not here.
    for url in ("", "apps/tool/"):
        text = (site / url / "index.html").read_text(encoding="utf-8")
        assert "Quokka leaf" not in text and "Keeper" not in text, url
    assert (site / "groundwiki/assets/explorer.js").is_file()
    assert (site / "groundwiki/assets/explorer.css").is_file()


def test_a_site_with_a_full_navigation_has_the_tree_but_not_the_script(tmp_path):
    pages = {
        "index.md": PAGES["index.md"],
        "a/one.md": page("One.", "# One\n"),
        "a/b/two.md": page("Two.", "# Two\n"),
    }
    site = build_site(
        tmp_path,
        pages,
        use_directory_urls=False,
        plugins=["search", {"groundwiki": {"navigation": "full"}}],
    )
    # Without directory URLs a page is a .html file; the site root stays the root.
    assert shape(explorer(site)) == [
        ("a", [("b", [("Two", "a/b/two.html")]), ("One", "a/one.html")]),
        ("index", ""),
    ]
    assert "explorer.js" not in (site / "a/one.html").read_text(encoding="utf-8")


SCOPED = {
    "index.md": page("The team's wiki.", "# Home\n"),
    "global/deploy.md": page("How the team deploys.", "# Deploy\n"),
    "global/ops/oncall.md": page("Who is on call.", "# On call\n"),
    "user/bob/quokka-ledger.md": page("Bob's own.", "# Ledger\n", title="Quokka ledger"),
    "user/bob/private/plans.md": page("Bob's plans.", "# Plans\n"),
}


@pytest.mark.parametrize("scopes", ["global", "all"])
def test_a_users_own_pages_are_never_in_the_tree(tmp_path, scopes):
    site = build_site(
        tmp_path,
        SCOPED,
        plugins=["search", {"groundwiki": {"scopes": scopes, "navigation": "compact"}}],
    )
    if scopes == "all":  # published, each at its page: but the tree is every reader's
        assert (site / "user/bob/quokka-ledger/index.html").is_file()
    text = (site / "groundwiki/explorer.json").read_text(encoding="utf-8")
    assert "bob" not in text and "quokka" not in text.lower() and "plans" not in text, text
    assert shape(explorer(site)) == [
        ("global", [("ops", [("On call", "global/ops/oncall/")]), ("Deploy", "global/deploy/")]),
        ("index", ""),
    ]
