"""Links: found in the token stream, resolved by key, then alias, then title; code is never a link."""

from __future__ import annotations

from groundwiki.core import run_lint
from groundwiki.core.read.markdown import parse_body, slugify
from helpers.wikis import page


def links_of(body: str):
    return parse_body(body, "wiki/p.md", 1).links


def test_wikilink_forms_are_parsed():
    (plain, labelled, anchored, both) = links_of(
        "[[alpha]] [[alpha|the alpha]] [[alpha#Some Heading]] [[alpha#Part|see]]\n"
    )
    assert (plain.target, plain.label, plain.anchor) == ("alpha", None, None)
    assert (labelled.target, labelled.label) == ("alpha", "the alpha")
    assert (anchored.target, anchored.anchor) == ("alpha", "Some Heading")
    assert (both.target, both.anchor, both.label) == ("alpha", "Part", "see")


def test_links_in_code_spans_and_fences_are_not_links():
    body = (
        "Inline `[[in-span]]` and ``[[double]]``.\n\n"
        "```md\n[[in-fence]]\n[x](in-fence.md)\n```\n\n"
        "Real [[real]].\n"
    )
    assert [link.target for link in links_of(body)] == ["real"]


def test_links_nested_by_indentation_in_admonitions_count():
    body = '!!! note "Read this"\n    First paragraph.\n\n    See [[inside-note]].\n'
    assert [link.target for link in links_of(body)] == ["inside-note"]


def test_line_and_column_point_at_the_link_in_the_file():
    structure = parse_body("para\nsecond line [[b]]\n\n- item [[c]]\n", "wiki/p.md", 10)
    b, c = structure.links
    assert (b.at.line, b.at.column) == (11, 13)
    assert (c.at.line, c.at.column) == (13, 8)


def test_markdown_links_to_md_files_count_and_external_ones_do_not():
    links = links_of(
        "[a](other.md) [b](sub/x.md#part) [c](https://example.com/x.md) [d](#local) [e](img.png)\n"
    )
    assert [(link.kind, link.target, link.anchor) for link in links] == [
        ("link", "other.md", None),
        ("link", "sub/x.md", "part"),
    ]


def test_resolution_order_is_key_then_alias_then_title(make_wiki):
    wiki = make_wiki(
        {
            "target.md": page(title="Shared Name", aliases=["former"]),
            "shared name.md": page(title="Other"),
            "from.md": page(body="[[TARGET]] [[Former]] [[shared name]] [[other]]\n"),
        }
    )
    source = wiki.pages["from"]
    resolved = [wiki.resolve(link, source) for link in source.links]
    assert [(r.key, r.via) for r in resolved] == [
        ("target", "key"),
        ("target", "alias"),
        ("shared name", "key"),  # a key beats a title
        ("shared name", "title"),
    ]


def test_markdown_links_resolve_relative_to_the_page(make_wiki):
    wiki = make_wiki(
        {
            "guide/a.md": page(body="[b](b.md) [c](../ref/c.md) [root](/ref/c.md)\n"),
            "guide/b.md": page(),
            "ref/c.md": page(),
        }
    )
    a = wiki.pages["a"]
    assert [wiki.resolve(link, a).key for link in a.links] == ["b", "c", "c"]


def test_refs_are_links_that_resolve_like_wikilinks(make_wiki):
    wiki = make_wiki({"a.md": page(refs=["b title", "nowhere"]), "b.md": page(title="B Title")})
    a = wiki.pages["a"]
    assert [r.kind for r in a.refs] == ["ref", "ref"]
    assert wiki.resolve(a.refs[0], a).key == "b"
    assert wiki.resolve(a.refs[1], a) is None


def test_heading_slugs_match_mkdocs_anchors():
    assert slugify("Lock & drift: how it works") == "lock-drift-how-it-works"
    assert slugify("Überblick") == "uberblick"


def test_every_link_in_a_ring_of_300_pages_resolves(make_wiki):
    pages = {f"p{i}.md": page(body=f"[[p{(i + 1) % 300}]]\n") for i in range(300)}
    wiki = make_wiki(pages)
    assert all(wiki.resolve(p.links[0], p) for p in wiki.pages.values())
    assert len(wiki.resolver.by_key) == 300


def test_a_same_page_anchor_resolves_to_the_page_itself(make_wiki):
    wiki = make_wiki({"a.md": page(body="## Part\n\nSee [[#Part]] and [[#Nope]].\n")})
    a = wiki.pages["a"]
    assert [wiki.resolve(link, a).key for link in a.links] == ["a", "a"]
    assert [f.detail for f in run_lint(wiki).findings if f.rule == "broken-anchor"] == ["a#Nope"]


def test_markdown_links_with_spaces_or_accents_resolve(make_wiki):
    body = "[u](café.md) [v](my%20page.md) [w](<my page.md>)\n"
    wiki = make_wiki({"a.md": page(body=body), "café.md": page(), "my page.md": page()})
    a = wiki.pages["a"]
    assert [wiki.resolve(link, a).key for link in a.links] == ["café", "my page", "my page"]


def test_positions_after_multi_line_code_spans_and_comments_are_exact():
    body = "para <!-- note\nspanning --> more `code\nspan` then\nnext [x](b.md) <!-- from: raw-sources/a.md -->\n"
    structure = parse_body(body, "wiki/p.md", 1)
    (link,) = structure.links
    assert (link.at.line, link.at.column) == (4, 6)
    assert [(c.line, c.column) for c in structure.comments] == [(1, 6), (4, 16)]


def test_a_wikilink_in_a_heading_keeps_its_words_in_the_heading_text():
    (heading,) = parse_body("## See [[the-page|the page]] first\n", "wiki/p.md", 1).headings
    assert heading.text == "See the page first"
    assert heading.slug == "see-the-page-first"


def test_in_tables_a_label_is_written_with_an_escaped_pipe():
    table = "| a |\n|---|\n| [[target\\|label]] |\n"
    (link,) = links_of(table)
    assert (link.target, link.label) == ("target", "label")
