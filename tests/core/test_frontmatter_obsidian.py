"""The page contract meets Obsidian vaults: list fields written as Obsidian accepts them are read,
not reported; `#` in a frontmatter tag, body `#tags` and `description` count as Obsidian says."""

from __future__ import annotations

from groundwiki.core import run_lint


def only_page(make_wiki, text: str):
    return make_wiki({"note.md": text}).pages["note"]


def test_an_empty_list_item_is_left_out_without_a_finding(make_wiki):
    p = only_page(make_wiki, "---\ntags:\n- \naliases:\n- \n---\nText.\n")
    assert (p.tags, p.aliases, p.problems) == ((), (), ())


def test_an_empty_field_counts_as_absent(make_wiki):
    p = only_page(make_wiki, "---\ntitle:\nsummary:\naliases:\ntags:\nusage_mode:\n---\nText.\n")
    assert p.problems == ()
    assert (p.title, p.usage_mode, p.aliases) == ("note", "auto", ())


def test_a_single_alias_is_a_list_of_one(make_wiki):
    p = only_page(make_wiki, "---\naliases: Template Hub\n---\nText.\n")
    assert (p.aliases, p.problems) == (("Template Hub",), ())


def test_a_single_string_of_tags_splits_at_commas_and_spaces(make_wiki):
    p = only_page(make_wiki, "---\ntags: Campaign, Location daily\n---\nText.\n")
    assert (p.tags, p.problems) == (("Campaign", "Location", "daily"), ())


def test_an_alias_yaml_reads_as_a_number_or_a_boolean_is_the_text_as_written(make_wiki):
    p = only_page(make_wiki, "---\naliases:\n- 0x1DA9430\n- Yes\n- 2024\n---\nText.\n")
    assert (p.aliases, p.problems) == (("0x1DA9430", "Yes", "2024"), ())


def test_an_unquoted_alias_with_a_colon_is_reported_at_its_line_and_the_rest_kept(make_wiki):
    text = "---\ntags: [plugin]\naliases:\n- Opener\n- Opener: New Tab by Default\n---\nText.\n"
    p = only_page(make_wiki, text)
    (problem,) = p.problems
    assert (problem.rule, problem.at.line, problem.detail) == ("schema-violation", 5, "aliases")
    assert '"Opener: New Tab by Default"' in problem.hint
    assert (p.aliases, p.tags) == (("Opener",), ("plugin",))


def test_a_bad_tag_item_keeps_the_other_tags(make_wiki):
    p = only_page(make_wiki, "---\ntags:\n- good\n- [nested, list]\n---\nText.\n")
    (problem,) = p.problems
    assert (problem.rule, problem.at.line) == ("schema-violation", 4)
    assert p.tags == ("good",)


def test_a_frontmatter_tag_loses_its_leading_hash(make_wiki):
    p = only_page(make_wiki, '---\ntags: ["#status/active", seedling]\n---\nText.\n')
    assert p.tags == ("status/active", "seedling")


def test_body_tags_follow_frontmatter_tags_once_each_ignoring_case(make_wiki):
    text = "---\ntags: [project]\n---\nA #draft note on #Project and #area/work.\n"
    assert only_page(make_wiki, text).tags == ("project", "draft", "area/work")


def test_description_is_the_summary_without_summary_or_tldr(make_wiki):
    p = only_page(make_wiki, "---\ndescription: >\n  What the note\n  is for.\n---\nBody.\n")
    assert (p.summary, p.summary_derived) == ("What the note is for.", False)


def test_summary_and_tldr_win_over_description(make_wiki):
    p = only_page(make_wiki, "---\ntldr: Short.\ndescription: Longer.\n---\nBody.\n")
    assert p.summary == "Short."


def test_a_description_that_is_not_text_is_a_violation(make_wiki):
    wiki = make_wiki({"note.md": "---\ndescription: [a, b]\n---\nBody.\n"})
    (problem,) = wiki.pages["note"].problems
    assert (problem.rule, problem.detail) == ("schema-violation", "description")
    assert not [f for f in run_lint(wiki).findings if f.rule == "missing-summary"]
