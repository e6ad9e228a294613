"""Links, embeds, anchors, comments and tags as an Obsidian vault writes them."""

from __future__ import annotations

from groundwiki.core import run_lint
from groundwiki.core.links.anchors import anchor_id
from groundwiki.core.read.comments import blank_comments
from groundwiki.core.read.markdown import parse_body
from groundwiki.core.wiki.graph import build_graph
from helpers.wikis import page


def link_findings(wiki):
    return [f for f in run_lint(wiki).findings if f.rule in {"broken-link", "broken-anchor"}]


def landed(wiki, key):
    source = wiki.pages[key]
    return [(r.key if (r := wiki.resolve(link, source)) else None) for link in source.links]


def test_a_link_in_a_code_span_does_not_take_the_place_of_the_same_link_in_prose():
    body = "Write `[[a]]` to get [[a]].\n"
    (link,) = parse_body(body, "p.md", 1).links
    assert link.at.column == body.index("[[a]].") + 1


def test_a_table_wikilink_with_an_escaped_pipe_is_found_where_it_is_written():
    body = "| a |\n|---|\n| [[key\\|label]] |\n\n> | b |\n> |---|\n> | [[other\\|x]] |\n"
    links = parse_body(body, "p.md", 1).links
    assert [(x.target, x.label, x.raw, x.at.line) for x in links] == [
        ("key", "label", "[[key\\|label]]", 3),
        ("other", "x", "[[other\\|x]]", 7),
    ]


def test_a_table_wikilink_inside_a_blockquote_is_in_the_graph(make_wiki):
    wiki = make_wiki(
        {
            "key.md": page(),
            "from.md": page(body="> | a |\n> |---|\n> | [[key\\|label]] |\n"),
        }
    )
    graph = build_graph(wiki)
    assert ("from", "key") in {(e.source, e.target) for e in graph.edges}
    assert not link_findings(wiki)


def test_embeds_heading_chains_and_block_ids_are_parsed():
    body = "![[img.png|400]] [[N#H1#H2]]\n\nA claim. ^claim-1\n\nText #tag and #a/b-c, not #1\n"
    found = parse_body(body, "p.md", 1)
    embed, chain = found.links
    assert (embed.embed, embed.target, embed.label, embed.raw) == (
        True,
        "img.png",
        "400",
        "![[img.png|400]]",
    )
    assert (chain.embed, chain.target, chain.anchor) == (False, "N", "H1#H2")
    assert [(b.id, b.line) for b in found.blocks] == [("claim-1", 3)]
    assert found.tags == ("tag", "a/b-c")


def test_names_resolve_anywhere_without_case_and_paths_from_the_root_relative_or_by_their_end(
    make_wiki,
):
    wiki = make_wiki(
        {
            "People/Ann Lee.md": page(),
            "Guides/Deep/Setup Notes.md": page(),
            "Guides/from.md": page(
                body="[[ann lee]] [[People/Ann Lee]] [[Deep/Setup Notes]] [[./Deep/Setup Notes.md]]"
                " [[../People/Ann Lee]] [[Setup notes.md]]\n"
            ),
        }
    )
    ann, setup = "ann lee", "setup notes"
    assert landed(wiki, "from") == [ann, ann, setup, setup, ann, setup]
    assert not link_findings(wiki)


def test_an_ambiguous_name_goes_to_the_note_in_the_linking_notes_folder(make_wiki):
    wiki = make_wiki(
        {
            "a/Same.md": page(),
            "b/Same.md": page(),
            "b/from.md": page(body="[[Same]]\n"),
        }
    )
    assert landed(wiki, "from") == ["b/same"]


def test_attachments_resolve_by_name_or_path_under_the_wiki_and_raw_sources(make_wiki):
    wiki = make_wiki(
        {
            "from.md": page(
                body="![[diagram.png]] ![[img/icon.svg#icon]] ![[clip.mp4]] ![[notes.txt]]"
                " ![[missing.png]]\n"
            ),
        },
        {"notes.txt": "evidence\n"},
    )
    (wiki.config.docs_dir / "img").mkdir()
    for name in ("img/diagram.png", "img/icon.svg", "clip.mp4"):
        (wiki.config.docs_dir / name).write_bytes(b"x")
    from groundwiki.core import compile_wiki

    wiki = compile_wiki(wiki.config)
    source = wiki.pages["from"]
    found = [wiki.attachment(link, source) for link in source.links]
    assert [(a.path, a.where) if a else None for a in found] == [
        ("img/diagram.png", "docs"),
        ("img/icon.svg", "docs"),
        ("clip.mp4", "docs"),
        ("notes.txt", "raw"),
        None,
    ]
    (broken,) = link_findings(wiki)
    assert "missing.png" in broken.message and "no page or file" in broken.message


def test_anchors_land_on_headings_chains_and_blocks_as_obsidian_spells_them(make_wiki):
    wiki = make_wiki(
        {
            "note.md": page(
                body="# Top\n\n## Setup: the basics\n\n### Linux\n\n## Other\n\n### Linux\n\n"
                "A claim. ^Claim-1\n"
            ),
        }
    )
    note = wiki.pages["note"]
    assert anchor_id(note, "Setup the basics") == "setup-the-basics"
    assert anchor_id(note, "setup-the-basics") == "setup-the-basics"
    assert anchor_id(note, "Other#Linux") == "linux_1"
    assert anchor_id(note, "Top#Setup: the basics#Linux") == "linux"
    assert anchor_id(note, "^claim-1") == "^Claim-1"
    assert anchor_id(note, "Linux#Other") is None
    assert anchor_id(note, "^nothing") is None


def test_a_broken_anchor_names_what_is_missing(make_wiki):
    wiki = make_wiki(
        {
            "note.md": page(body="## Here\n\nText ^here\n"),
            "from.md": page(body="[[note#Here]] [[note#^here]] [[note#There]] [[note#^there]]\n"),
        }
    )
    messages = sorted(f.message for f in link_findings(wiki))
    assert messages == ["'note' has no block '^there'", "'note' has no heading 'There'"]


def test_comments_are_blanked_outside_code_and_keep_lines_and_columns():
    body = "a %%secret%% b `%%code%%`\n%%\nblock [[hidden]]\n%%\n```\n%% fenced %%\n```\nz"
    blanked = blank_comments(body)
    assert "secret" not in blanked and "hidden" not in blanked
    assert "`%%code%%`" in blanked and "%% fenced %%" in blanked
    assert [len(line) for line in blanked.split("\n")] == [len(x) for x in body.split("\n")]


def test_a_comment_hides_its_links_and_text_from_the_page(make_wiki):
    wiki = make_wiki({"from.md": page(body="Shown. %% [[nowhere]] private %%\n\n%%\nall\n%%\n")})
    page_ = wiki.pages["from"]
    assert "private" not in page_.body and "all" not in page_.body
    assert not page_.links and not link_findings(wiki)


def test_an_unclosed_comment_hides_the_rest_of_the_page_as_in_obsidian():
    assert blank_comments("shown %% hidden\nhidden too").strip() == "shown"


def test_a_page_without_title_or_h1_keeps_its_file_names_capitalisation(make_wiki):
    wiki = make_wiki({"Getting Started With MkDocs.md": page(body="Text.\n")})
    assert wiki.pages["getting started with mkdocs"].title == "Getting Started With MkDocs"


def test_the_lint_report_shows_quoted_syntax_as_code_and_escaped():
    from groundwiki.core.render.generated import quoted_as_code

    html = quoted_as_code("wikilink '![[<img src=x onerror=alert(1)>]]' points to no page or file")
    assert html == (
        "wikilink <code>![[&lt;img src=x onerror=alert(1)&gt;]]</code> points to no page or file"
    )


def test_an_apostrophe_in_a_findings_text_is_no_quote():
    from groundwiki.core.render.generated import quoted_as_code

    hint = quoted_as_code("create the page, add the name to a page's 'aliases', or fix the key")
    assert (
        hint
        == "create the page, add the name to a page&#x27;s <code>aliases</code>, or fix the key"
    )
    link = quoted_as_code("wikilink '[[Bob's notes]]' points to no page")
    assert link == "wikilink <code>[[Bob&#x27;s notes]]</code> points to no page"


def test_an_ambiguous_name_picks_as_obsidian_does_root_then_own_folder_then_shortest_path(
    make_wiki,
):
    """The order observed in Obsidian 1.13 (`getFirstLinkpathDest`): the exact path from the
    root, then the linking note's own folder (an ancestor's counts for nothing), then the
    shortest path string (not the fewest folders)."""
    notes = {"a/b/Note.md": page(), "zzzz/Note.md": page(), "zzzz/deep/Note.md": page()}
    wiki = make_wiki({**notes, "zzzz/deep/x/below.md": page(body="[[Note]]\n")})
    assert landed(wiki, "below") == ["a/b/note"]  # 11 characters beat 12; an ancestor is no help
    wiki = make_wiki({**notes, "zzzz/deep/beside.md": page(body="[[Note]]\n")})
    assert landed(wiki, "beside") == ["zzzz/deep/note"]
    wiki = make_wiki({**notes, "Note.md": page(), "zzzz/deep/rooted.md": page(body="[[Note]]\n")})
    assert landed(wiki, "rooted") == ["note"]


def test_a_block_id_closing_a_heading_is_neither_in_its_text_nor_in_its_id():
    structure = parse_body("## Setup ^setup-block\n", "p.md", 1)
    (heading,) = structure.headings
    assert (heading.text, heading.slug) == ("Setup", "setup")
    assert [(block.id, block.line) for block in structure.blocks] == [("setup-block", 1)]


def test_a_caret_inside_a_headings_code_span_is_heading_text():
    (heading,) = parse_body("## Use `a ^b`\n", "p.md", 1).headings
    assert (heading.text, heading.slug) == ("Use a ^b", "use-a-b")


def test_a_link_to_a_heading_closed_by_a_block_id_lands_on_it_by_its_text(make_wiki):
    wiki = make_wiki({"note.md": page(body="## Setup ^setup-block\n\nText.\n")})
    assert anchor_id(wiki.pages["note"], "Setup") == "setup"


def test_comments_are_blanked_where_markdown_sees_no_code():
    """Found in review: each of these published a private comment."""
    cases = [
        "see `code\nmore` %% secret %% and `x`\n",  # a code span across lines
        "Intro.\n\n    ```\n%%secret%%\n",  # four spaces: no fence to the site
        "> ```\n> code\n\n%% secret %%\n",  # a fence closed where its quote ends
        "```\n> ```\n```\n\n%% secret %%\n",  # a quoted fence inside a fence is text
        "a \\` b %% secret %% c `d`\n",  # an escaped backtick opens no code span
    ]
    for body in cases:
        assert "secret" not in blank_comments(body), body


def test_comments_keep_code_and_html_comments_and_do_not_hide_what_follows_nested_code():
    body = "- a\n    - b\n        ```\n        <%% x %>\n        ```\n\nImportant after.\n"
    assert blank_comments(body) == body
    kept = "x `%%code%%` y\n\n<!-- %% -->\n\nshown after\n"
    assert blank_comments(kept) == kept
    fenced_in_comment = "%%\n```\nhidden\n```\n%%\nshown\n"
    assert blank_comments(fenced_in_comment).split() == ["shown"]


def test_a_link_quoted_in_html_or_escaped_is_not_taken_for_the_real_one():
    body = '<span title="[[a]]">hover</span> then [[a]] here.\n\n\\[[a]] text then [[a]] real.\n'
    first, second = parse_body(body, "p.md", 1).links
    assert (first.at.line, first.at.column) == (1, body.index("[[a]] here") + 1)
    line3 = body.split("\n")[2]
    assert (second.at.line, second.at.column) == (3, line3.index("[[a]] real") + 1)


def test_headings_without_letters_get_the_ids_toc_gives_them():
    found = parse_body("## 第一章\n## 第二章\n## 🚀\n", "p.md", 1)
    assert [h.slug for h in found.headings] == ["_1", "_2", "_3"]


def test_escaped_hashes_entities_and_bare_marks_are_no_tags():
    found = parse_body("\\#not &#35;entity #real #- #/ #2024-01 #1984\n", "p.md", 1)
    assert found.tags == ("real", "2024-01")


def test_markdown_link_anchors_are_read_decoded(make_wiki):
    wiki = make_wiki(
        {
            "Target Note.md": page(body="## My Heading\n\nText ^blk\n"),
            "from.md": page(
                body="[a](Target%20Note.md#My%20Heading) [b](Target%20Note.md#%5Eblk)\n"
            ),
        }
    )
    assert [link.anchor for link in wiki.pages["from"].links] == ["My Heading", "^blk"]
    assert not link_findings(wiki)


def test_a_name_that_is_a_path_from_the_root_is_not_ambiguous(make_wiki):
    """The root's note is what `[[Note]]` names (Obsidian looks no further), from any folder:
    lint finds nothing ambiguous in it."""
    wiki = make_wiki(
        {
            "Note.md": page(),
            "sub/Note.md": page(),
            "sub/beside.md": page(body="[[Note]]\n"),
            "other.md": page(body="[[Note]]\n"),
        }
    )
    assert landed(wiki, "beside") == ["note"] and landed(wiki, "other") == ["note"]
    assert all(not item.resolution.candidates for item in wiki.resolved_links)
