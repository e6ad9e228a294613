"""A page without a summary gets its body's first sentence, marked as derived, and an info
finding; `missing_summary: require` and `ignore` restore an error, or silence."""

from __future__ import annotations

import pytest
from groundwiki.core import load_config, run_lint
from groundwiki.core.config.wiki_config import ConfigError
from groundwiki.core.read.summary import derive_summary
from helpers.wikis import write_wiki


def summary_findings(wiki):
    return [f for f in run_lint(wiki).findings if f.rule == "missing-summary"]


def test_a_page_without_a_summary_takes_its_first_sentence(make_wiki):
    p = make_wiki({"note.md": "# Note\n\nIt tracks reading. It has more.\n"}).pages["note"]
    assert (p.summary, p.summary_derived) == ("It tracks reading.", True)


def test_a_derived_summary_is_an_info_finding_saying_how_to_write_one(make_wiki):
    (finding,) = summary_findings(make_wiki({"note.md": "It tracks reading.\n"}))
    assert finding.severity == "info" and "first sentence" in finding.message
    assert "summary:" in finding.hint


def test_a_written_summary_is_not_derived(make_wiki):
    wiki = make_wiki({"note.md": "---\nsummary: Mine.\n---\nIt tracks reading.\n"})
    assert (wiki.pages["note"].summary, wiki.pages["note"].summary_derived) == ("Mine.", False)
    assert summary_findings(wiki) == []


def test_require_makes_a_missing_summary_an_error_and_derives_nothing(make_wiki):
    wiki = make_wiki({"note.md": "It tracks reading.\n"}, options={"missing_summary": "require"})
    (finding,) = summary_findings(wiki)
    assert finding.severity == "error" and wiki.pages["note"].summary is None


def test_ignore_derives_nothing_and_reports_nothing(make_wiki):
    wiki = make_wiki({"note.md": "It tracks reading.\n"}, options={"missing_summary": "ignore"})
    assert summary_findings(wiki) == [] and wiki.pages["note"].summary is None


def test_a_rule_setting_wins_over_the_mode(make_wiki):
    options = {"missing_summary": "require", "rules": {"missing-summary": "warning"}}
    (finding,) = summary_findings(make_wiki({"note.md": "Text.\n"}, options=options))
    assert finding.severity == "warning"


def test_an_unknown_mode_names_the_option_and_the_choices(tmp_path):
    config_file = write_wiki(tmp_path, {}, options={"missing_summary": "maybe"})
    with pytest.raises(ConfigError, match=r"missing_summary.*derive, require,? (or )?ignore"):
        load_config(config_file)


def test_a_private_comment_never_becomes_the_summary(make_wiki):
    p = make_wiki({"note.md": "%% not for readers. %%\n\nFor readers.\n"}).pages["note"]
    assert p.summary == "For readers."


# What is passed over to find the first paragraph of prose.


def test_headings_callouts_code_and_embeds_are_not_prose():
    body = (
        "# Title\n\n> [!tip] A callout.\n> Inside it.\n\n```\ncode. line\n```\n\n"
        "![[diagram.png]]\n![badge](https://x/y.svg)\n\n<!-- a comment. -->\n\nThe note.\n"
    )
    assert derive_summary(body) == "The note."


def test_lists_and_tables_are_not_prose():
    body = "- an item.\n  continued.\n\n| a | b |\n|---|---|\n| c. | d |\n\nThe note.\n"
    assert derive_summary(body) == "The note."


def test_key_value_lines_and_tag_lines_are_not_prose():
    body = "Plugin ID: `x`\nDeveloped by: [[someone]]\n\n#placeholder/description\n\nIt does x.\n"
    assert derive_summary(body) == "It does x."


def test_a_line_introducing_a_list_is_not_a_summary():
    assert derive_summary("Colors:\n\n- red\n\nA dark theme.\n") == "A dark theme."


def test_markdown_is_stripped_and_links_show_their_text():
    body = "Uses **bold**, `code`, [a site](https://x.y), [[Note#Part]] and [[key|a label]].\n"
    assert derive_summary(body) == "Uses bold, code, a site, Note > Part and a label."


def test_an_abbreviation_does_not_end_the_sentence():
    assert derive_summary("Tools, e.g. Dataview, help. More.\n") == "Tools, e.g. Dataview, help."


def test_a_body_without_prose_has_no_summary():
    assert derive_summary("# Title\n\n- [[a]]\n- [[b]]\n") is None


def test_a_long_sentence_is_cut_at_a_word():
    summary = derive_summary("word " * 200)
    assert summary is not None and len(summary) <= 301 and summary.endswith("word…")


def test_what_is_left_between_badges_is_not_prose():
    body = "![a](https://x/a.svg) * ![b](https://x/b.svg)\n\nThe note.\n"
    assert derive_summary(body) == "The note."


def test_a_block_id_alone_on_its_line_is_no_summary():
    """Found on the dev vault: `^883251` under a quote became a page's summary."""
    assert (
        derive_summary("> A quote.\n\n^883251\n\nThe real sentence. More.") == "The real sentence."
    )


def test_code_keeps_its_markup_and_entities_read_as_characters():
    """Found on the dev vault: "rendered using `<canvas>` and WebGL" lost its `<canvas>`."""
    assert (
        derive_summary("Drawn with `<canvas>` &amp; WebGL. More.") == "Drawn with <canvas> & WebGL."
    )
