"""`alias:` and `tag:`, the singular keys older Obsidian vaults write, are read as `aliases` and
`tags`, merged with them when a page has both."""

from __future__ import annotations


def only_page(make_wiki, text: str):
    return make_wiki({"note.md": text}).pages["note"]


def test_a_singular_alias_is_an_alias(make_wiki):
    p = only_page(make_wiki, "---\nalias: Template Hub\n---\nText.\n")
    assert (p.aliases, p.problems) == (("Template Hub",), ())


def test_a_singular_tag_is_a_tag(make_wiki):
    p = only_page(make_wiki, "---\ntag: [seedling, '#status/active']\n---\nText.\n")
    assert (p.tags, p.problems) == (("seedling", "status/active"), ())


def test_a_single_string_under_tag_splits_as_tags_does(make_wiki):
    p = only_page(make_wiki, "---\ntag: seedling, evergreen\n---\nText.\n")
    assert p.tags == ("seedling", "evergreen")


def test_singular_and_plural_keys_are_merged_plural_first(make_wiki):
    text = "---\ntag: b\nalias: [Two, One]\naliases: [One]\ntags: [a, b]\n---\nText.\n"
    p = only_page(make_wiki, text)
    assert (p.tags, p.aliases, p.problems) == (("a", "b"), ("One", "Two"), ())


def test_a_singular_alias_resolves_links(make_wiki):
    wiki = make_wiki(
        {"note.md": "---\nalias: Old Name\n---\nText.\n", "other.md": "See [[Old Name]].\n"}
    )
    (link,) = wiki.pages["other"].links
    resolution = wiki.resolve(link, wiki.pages["other"])
    assert resolution is not None and resolution.key == "note"


def test_singular_keys_are_not_passed_through_as_extra_fields(make_wiki):
    p = only_page(make_wiki, "---\nalias: x\ntag: y\n---\nText.\n")
    assert "alias" not in p.extra and "tag" not in p.extra


def test_an_empty_singular_key_counts_as_absent(make_wiki):
    p = only_page(make_wiki, "---\nalias:\ntag:\n---\nText.\n")
    assert (p.aliases, p.tags, p.problems, p.extra) == ((), (), (), {})


def test_a_bad_item_under_alias_is_reported_at_its_line_under_the_name_written(make_wiki):
    p = only_page(make_wiki, "---\nalias:\n- Good\n- Opener: New Tab\n---\nText.\n")
    (problem,) = p.problems
    assert (problem.rule, problem.at.line) == ("schema-violation", 4)
    assert "'alias'" in problem.message
    assert p.aliases == ("Good",)
