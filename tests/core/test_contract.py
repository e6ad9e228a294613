"""The page contract: frontmatter fields, defaults, the JSON Schema, and errors that name the line."""

from __future__ import annotations

import json

import pytest
from groundwiki.core import load_config
from groundwiki.core.config.wiki_config import ConfigError
from helpers.wikis import ROOT, page, write_wiki


def test_key_is_the_lower_cased_file_stem_in_any_folder(make_wiki):
    wiki = make_wiki({"guide/Writing-Pages.md": page()})
    assert list(wiki.pages) == ["writing-pages"]
    assert wiki.pages["writing-pages"].doc_path == "guide/Writing-Pages.md"


def test_title_defaults_to_the_file_name_as_written_not_a_heading(make_wiki):
    wiki = make_wiki(
        {
            "a.md": page(body="## Not this\n\n# The Title\n"),
            "Macos Tips.md": page(body="no heading\n"),
            "c.md": page(title="Given", body="# Ignored\n"),
        }
    )
    assert wiki.pages["a"].title == "a"
    assert wiki.pages["macos tips"].title == "Macos Tips"
    assert wiki.pages["c"].title == "Given"


def test_a_footer_heading_is_no_title(make_wiki):
    """Issue 31: six notes of the obsidian-hub vault were titled by their footer's heading."""
    body = "Some text.\n\n%% Hub footer %%\n\n# This note in GitHub\n\n[Edit](https://x.y)\n"
    assert make_wiki({"PARA.md": page(body=body)}).pages["para"].title == "PARA"


def test_an_opening_h1_that_spells_the_file_name_is_the_title_as_written(make_wiki):
    wiki = make_wiki(
        {
            "getting-started.md": page(body="\n# Getting Started!\n\nText.\n"),
            "moc.md": page(body="%% private %%\n# MOC\n"),  # a blanked comment is no line
            "other.md": page(body="# Something else\n"),
            "late.md": page(body="Text first.\n\n# Late\n"),
        }
    )
    titles = {key: p.title for key, p in wiki.pages.items()}
    assert titles == {
        "getting-started": "Getting Started!",
        "moc": "MOC",
        "other": "other",
        "late": "late",
    }


def test_title_from_heading_keeps_the_first_h1_anywhere_then_the_file_name(make_wiki):
    wiki = make_wiki(
        {
            "a.md": page(body="## Not this\n\n# The Title\n"),
            "b.md": page(body="no heading\n"),
            "c.md": page(title="Given", body="# Ignored\n"),
        },
        options={"title_from": "heading"},
    )
    assert wiki.pages["a"].title == "The Title"
    assert wiki.pages["b"].title == "b"
    assert wiki.pages["c"].title == "Given"


def test_title_from_names_its_choices(tmp_path):
    config_file = write_wiki(tmp_path, {}, options={"title_from": "h1"})
    with pytest.raises(ConfigError, match=r"title_from.*'h1'.*file_name, heading"):
        load_config(config_file)


def test_tldr_is_a_synonym_of_summary(make_wiki):
    wiki = make_wiki({"a.md": page(summary=None, tldr="Short.")})
    assert wiki.pages["a"].summary == "Short."


def test_defaults_for_optional_fields(make_wiki):
    p = make_wiki({"a.md": page()}).pages["a"]
    assert (p.usage_mode, p.kind, p.tags, p.refs, p.aliases) == ("auto", "page", (), (), ())
    assert p.stale_since is None and p.archived_since is None


def test_unknown_fields_are_kept_and_passed_through(make_wiki):
    p = make_wiki({"a.md": page(owner="docs-team", scope={"team": "core"})}).pages["a"]
    assert p.extra == {"owner": "docs-team", "scope": {"team": "core"}}


def test_dates_stay_as_written(make_wiki):
    p = make_wiki({"a.md": page(stale_since="2026-01-31")}).pages["a"]
    assert p.stale_since == "2026-01-31"


def test_a_schema_violation_names_the_field_line_and_keeps_the_page(make_wiki):
    text = "---\nsummary: Fine.\ntags: {a: b}\nusage_mode: sometimes\n---\nBody [[b]]\n"
    wiki = make_wiki({"a.md": text, "b.md": page()})
    problems = {p.detail: p for p in wiki.pages["a"].problems}
    assert problems["tags"].at.line == 3
    assert problems["usage_mode"].at.line == 4
    assert "always, auto, never" in problems["usage_mode"].message
    assert wiki.pages["a"].tags == ()  # the bad value is dropped, the default applies
    assert wiki.pages["a"].usage_mode == "auto"
    assert [link.target for link in wiki.pages["a"].links] == ["b"]


def test_a_multi_line_summary_is_a_violation(make_wiki):
    wiki = make_wiki({"a.md": "---\nsummary: |\n  one\n  two\n---\n"})
    (problem,) = wiki.pages["a"].problems
    assert problem.rule == "schema-violation"
    assert "single line" in problem.message


def test_invalid_yaml_reports_the_line_of_the_error(make_wiki):
    text = "---\nsummary: ok\ntags: [a, b\nrefs: [c]\n---\n# Broken, still a page\n"
    p = make_wiki({"broken.md": text}).pages["broken"]
    (problem,) = p.problems
    assert problem.rule == "invalid-frontmatter"
    assert problem.at.path == "wiki/broken.md"
    assert 3 <= problem.at.line <= 5
    assert [h.text for h in p.headings] == ["Broken, still a page"]  # the body is compiled


def test_unclosed_frontmatter_is_reported(make_wiki):
    p = make_wiki({"a.md": "---\nsummary: x\n\n# Body\n"}).pages["a"]
    assert [pr.detail for pr in p.problems] == ["unclosed"]


def test_frontmatter_that_is_not_a_mapping_is_reported(make_wiki):
    p = make_wiki({"a.md": "---\n- a\n- b\n---\nx\n"}).pages["a"]
    assert p.problems[0].rule == "invalid-frontmatter"
    assert "mapping" in p.problems[0].message


def test_a_page_without_frontmatter_still_compiles(make_wiki):
    p = make_wiki({"plain.md": "# Plain\n\ntext\n"}).pages["plain"]
    assert p.title == "Plain" and p.summary_derived and p.problems == ()


def test_body_line_numbers_are_file_line_numbers(make_wiki):
    p = make_wiki({"a.md": "---\nsummary: s\n---\nintro\n\nsee [[x]]\n"}).pages["a"]
    assert p.links[0].at.line == 6


def test_the_published_schema_describes_every_contract_field():
    published = json.loads((ROOT / "plugins/groundwiki/core/schemas/page.schema.json").read_text())
    assert set(published["properties"]) >= {
        "title", "summary", "tldr", "tags", "refs", "aliases", "usage_mode",
        "kind", "stale_since", "archived_since", "sources",
    }  # fmt: skip
    assert published["additionalProperties"] is True


def test_a_blank_summary_is_a_violation(make_wiki):
    (problem,) = make_wiki({"a.md": '---\nsummary: "   "\n---\n'}).pages["a"].problems
    assert problem.rule == "schema-violation" and "blank" in problem.message


def test_a_folded_summary_is_one_line(make_wiki):
    p = make_wiki({"a.md": "---\nsummary: >\n  folded into\n  one line\n---\n"}).pages["a"]
    assert p.problems == () and p.summary == "folded into one line"


def test_an_impossible_date_is_a_violation(make_wiki):
    (problem,) = (
        make_wiki({"a.md": "---\nsummary: s\nstale_since: 2024-13-45\n---\n"}).pages["a"].problems
    )
    assert (problem.detail, problem.at.line) == ("stale_since", 3)
    assert "real date" in problem.message


def test_a_field_given_twice_is_reported_at_its_second_line(make_wiki):
    p = make_wiki({"a.md": "---\nsummary: first\ntags: [x]\nsummary: second\n---\n"}).pages["a"]
    (problem,) = p.problems
    assert (problem.rule, problem.at.line) == ("invalid-frontmatter", 4)
    assert "lines 2 and 4" in problem.message
