"""A page's lead, the opening prose its vector is embedded from, as the core's parser reads it:
code is no prose, headings and comments are left out, a wikilink reads as its visible text."""

from __future__ import annotations

from groundwiki.core.read.lead import lead_text, page_lead
from groundwiki.core.read.markdown import parse_body
from groundwiki_sidecar.index.documents import LEAD_WORDS, page_record


def test_a_wikilink_in_a_fenced_block_is_not_in_the_lead():
    body = "Prose first.\n\n```markdown\nSee [[secret-page|hidden words]].\n```\n\nProse after.\n"
    assert lead_text(body, 50) == "Prose first. Prose after."


def test_a_wikilink_in_a_code_span_stays_the_text_it_is():
    assert lead_text("Write `[[name|label]]` to link.\n", 50) == "Write `[[name|label]]` to link."


def test_a_comment_in_a_code_span_stays_and_one_outside_is_left_out():
    body = "Use `<!-- x -->` for notes. <!-- from: a.md#L1 -->\n"
    assert lead_text(body, 50) == "Use `<!-- x -->` for notes."


def test_a_multi_line_comment_is_left_out():
    assert lead_text("Before <!-- one\ntwo --> after.\n", 50) == "Before after."


def test_an_embed_adds_no_words():
    assert lead_text("![[diagram.png]]\n\nThe text.\n", 50) == "The text."


def test_a_link_to_a_heading_of_the_same_page_reads_as_the_heading():
    assert lead_text("See [[#Setup]] and [[#Usage|how to use it]].\n", 50) == (
        "See Setup and how to use it."
    )


def test_a_setext_heading_is_left_out():
    assert lead_text("Heading\n=======\n\nThe text.\n", 50) == "The text."


def test_ordinary_prose_keeps_its_markdown_as_written():
    body = "# Title\n\nA *marked* [link](x.md) and [[page|a label]].\n\n- an item\n"
    assert lead_text(body, 50) == "A *marked* [link](x.md) and a label. - an item"


def test_a_fence_open_across_the_opening_of_a_long_page_stays_code():
    body = "word " * 150 + "\n\n```\n" + "[[code]] " * 300 + "\n```\n\n" + "after " * 300
    lead = lead_text(body, LEAD_WORDS)
    assert lead.split() == ["word"] * 150 + ["after"] * 50


def test_a_comment_open_across_the_opening_of_a_long_page_stays_out():
    body = "word " * 150 + "\n\n<!--\n" + "hidden " * 300 + "\n-->\n\n" + "after " * 300
    assert lead_text(body, LEAD_WORDS).split() == ["word"] * 150 + ["after"] * 50


def test_a_compiled_page_gives_the_lead_its_body_gives(make_wiki):
    body = (
        "# Deploys\n\nDeploys go out [[queue|twice]] a week. <!-- from: notes.md#L1 -->\n\n"
        "```\n[[not-a-link]] <!-- quoted -->\n```\n\n<!-- a note to the writer -->\nMore.\n"
    )
    wiki = make_wiki(
        {"deploys.md": f"---\nsummary: How deploys go.\n---\n{body}", "queue.md": "Queue.\n"},
        sources={"notes.md": "Deploys twice a week.\n"},
    )
    page = wiki.pages["deploys"]
    assert page_lead(page, 50) == lead_text(page.body, 50) == "Deploys go out twice a week. More."


def test_the_sidecar_embeds_the_core_lead(make_wiki):
    wiki = make_wiki({"note.md": "---\nsummary: S.\n---\n```\n[[x]]\n```\nThe words.\n"})
    assert page_record(wiki.pages["note"], lead=True).lead == "The words."


def test_a_page_with_a_comment_that_is_no_citation_gets_the_lead_its_body_gives(make_wiki):
    body = (
        "Before <!-- a note\nto the writer --> after, with [[queue|a link]].\n\n<!-- x -->\nEnd.\n"
    )
    wiki = make_wiki({"note.md": f"---\nsummary: S.\n---\n{body}", "queue.md": "Queue.\n"})
    page = wiki.pages["note"]
    assert page_lead(page, 50) == lead_text(page.body, 50) == "Before after, with a link. End."


def test_the_compile_keeps_the_blocks_the_site_reads():
    # A nested list indented four spaces is no code to the site: the compile's blocks are its.
    body = "# Title\n\n- item\n    - nested\n\n```\ncode\n```\n\nText <!-- c -->.\n"
    body_map = parse_body(body, "p.md", 1).body_map
    assert body_map is not None and body_map.site_blocks
    assert body_map.block_starts == (0, 2, 5, 9)
    assert body_map.code_and_headings == ((0, 1), (5, 8))
    assert [body[at : at + 4] for at in body_map.comments] == ["<!--"]


def test_indented_code_marks_the_compile_blocks_as_not_the_site_s(make_wiki):
    # Four spaces make code for the site, prose for the compile: the lead reads the site's.
    body = "Intro.\n\n    # not a heading\n    [[x]] in code\n\nAfter.\n"
    assert parse_body(body, "p.md", 1).body_map.site_blocks is False
    wiki = make_wiki({"note.md": f"---\nsummary: S.\n---\n{body}"})
    page = wiki.pages["note"]
    assert page_lead(page, 50) == lead_text(page.body, 50)


def test_a_long_page_s_lead_from_its_compile_is_its_body_s(make_wiki):
    body = (
        "word " * 150
        + "<!-- note -->\n\n## Part\n\n```\n[[code]]\n```\n\n"
        + "more [[a|label]] " * 100
        + "\n\n> quote\n"
    )
    wiki = make_wiki({"long.md": f"---\nsummary: S.\n---\n{body}", "a.md": "A.\n"})
    page = wiki.pages["long"]
    assert page_lead(page, LEAD_WORDS) == lead_text(page.body, LEAD_WORDS)
    assert page_lead(page, LEAD_WORDS).split()[150:152] == ["more", "label"]
