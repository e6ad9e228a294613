"""The link graph: nodes for pages and sources, typed edges, backlinks."""

from __future__ import annotations

import json

from groundwiki.core import build_graph, compile_wiki, load_config
from helpers.wikis import page


def test_edges_are_typed_and_record_how_they_resolved(make_wiki):
    wiki = make_wiki(
        {
            "a.md": page(
                refs=["b"], body="[[old-c]] [see](b.md) <!-- from: raw-sources/n.md -->\n"
            ),
            "b.md": page(),
            "c.md": page(aliases=["old-c"], tags=["t"]),
        },
        {"n.md": "evidence\n"},
    )
    graph = build_graph(wiki)
    edges = {(e.source, e.target, e.type, e.via) for e in graph.edges}
    assert edges == {
        ("a", "b", "ref", "key"),
        ("a", "b", "link", "path"),
        ("a", "c", "wikilink", "alias"),
        ("a", "raw-sources/n.md", "provenance", "citation"),
    }
    nodes = {n.id: n for n in graph.nodes}
    assert nodes["c"].tags == ("t",) and nodes["c"].url == "c/"
    assert nodes["raw-sources/n.md"].type == "source"


def test_backlinks_list_the_pages_that_link_here(make_wiki):
    wiki = make_wiki(
        {"a.md": page(body="[[c]]\n"), "b.md": page(refs=["c"]), "c.md": page(body="[[c]]\n")}
    )
    assert build_graph(wiki).backlinks() == {"c": ("a", "b")}


def test_broken_links_are_not_edges(make_wiki):
    wiki = make_wiki({"a.md": page(body="[[ghost]]\n")})
    assert build_graph(wiki).edges == ()


def test_the_json_export_is_the_same_for_two_compiles(make_wiki):
    wiki = make_wiki({"b.md": page(body="[[a]]\n"), "a.md": page(body="[[b]] [[b]]\n")})
    again = compile_wiki(wiki.config)
    first = json.dumps(build_graph(wiki).to_json())
    assert first == json.dumps(build_graph(again).to_json())
    assert [n["id"] for n in build_graph(wiki).to_json()["nodes"]] == ["a", "b"]


def test_urls_follow_use_directory_urls(make_wiki, tmp_path):
    make_wiki({"a.md": page(), "sub/b.md": page()})
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(config_file.read_text() + "use_directory_urls: false\n")
    urls = {n.id: n.url for n in build_graph(compile_wiki(load_config(config_file))).nodes}
    assert (urls["a"], urls["b"]) == ("a.html", "sub/b.html")
