"""The folder explorer's tree (core/render/explorer.py) from compiled wikis: folders first, then
pages, each sorted without regard to case; only the shared pages the site publishes; the text
kept while the pages are the same. The built site is tested in tests/site/test_explorer.py, the
browser side in tests/browser/test_explorer_browser.py, the real vault in
tests/scale/test_explorer_vault.py."""

from __future__ import annotations

import json

from groundwiki.core import compile_wiki
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.render.explorer import ExplorerText, explorer_json, explorer_tree
from helpers.scoped import scoped_copy
from helpers.wikis import page


def test_folders_come_first_then_pages_each_sorted_without_regard_to_case(make_wiki):
    wiki = make_wiki(
        {
            "index.md": page(title="Home"),
            "b.md": page(title="banana"),
            "A.md": page(title="Apple"),
            "Zeta/one.md": page(title="One"),
            "alpha/beta/deep.md": page(title="Deep"),
            "alpha/Two.md": page(title="two"),
            "alpha/one.md": page(title="One"),
        }
    )
    tree = explorer_tree(wiki)
    assert tree["version"] == 1
    assert [f["name"] for f in tree["folders"]] == ["alpha", "Zeta"]
    assert [(p["title"], p["url"]) for p in tree["pages"]] == [
        ("Apple", "A/"),
        ("banana", "b/"),
        ("Home", ""),
    ]
    alpha = tree["folders"][0]
    assert alpha["path"] == "alpha" and alpha["folders"][0]["path"] == "alpha/beta"
    assert [p["title"] for p in alpha["pages"]] == ["One", "two"]
    assert alpha["folders"][0]["pages"] == [{"title": "Deep", "url": "alpha/beta/deep/"}]


def test_only_the_pages_the_site_publishes_are_listed(make_wiki):
    wiki = make_wiki({"index.md": page(), "a/kept.md": page(), "b/left-out.md": page()})
    tree = explorer_tree(wiki, {"index.md", "a/kept.md"})
    assert [f["name"] for f in tree["folders"]] == ["a"]  # a folder with no page is none


def test_a_users_own_pages_are_never_listed(tmp_path):
    scoped_copy(tmp_path)
    wiki = compile_wiki(load_config(tmp_path / "mkdocs.yml"))
    text = explorer_json(wiki)
    assert "user/" not in text and "scratch" not in text and "rollback" not in text
    # A user's view gives the shared tree too: the file is every reader's.
    assert explorer_json(wiki.scopes.view("alice")) == text
    assert [f["name"] for f in json.loads(text)["folders"]] == ["global"]


def test_the_text_is_kept_while_the_pages_are_the_same(make_wiki):
    wiki = make_wiki({"index.md": page(), "a/one.md": page(title="One")})
    texts = ExplorerText()
    first = texts.text(wiki, {"index.md", "a/one.md"})
    assert first == explorer_json(wiki, {"index.md", "a/one.md"})
    assert texts.text(wiki, {"index.md", "a/one.md"}) is first
    assert texts.text(wiki, {"index.md"}) != first  # another published set
