"""The artifacts' texts kept across a server's rebuilds equal the JSON of a build from scratch."""

from __future__ import annotations

from pathlib import Path

from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.render.artifacts import ArtifactTexts, dumps, graph_json, pages_index
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki
from groundwiki.core.wiki.graph import build_graph
from helpers.wikis import page, write_wiki


def test_texts_kept_across_rebuilds_equal_the_json_of_each_build(tmp_path: Path) -> None:
    config_file = write_wiki(
        tmp_path,
        {
            "a.md": page("A page.", "Links [[b]] and cites. <!-- from: raw-sources/s.md#L1 -->"),
            "b.md": page("B page.", "Links [[a]].", tags=["x"], refs=["a"]),
            "c.md": page("C page.", "Nothing. Ünïcode."),
        },
        {"s.md": "one\ntwo\n"},
    )
    config = load_config(config_file)
    cache, texts = CompileCache(), ArtifactTexts()
    edits = [
        ("c.md", page("C page.", "Now links [[b]].")),
        ("b.md", page("B changed.", "Links [[a]] and [[c]].", tags=["y"])),
        ("d.md", page("A new page.", "[[a]]")),
    ]
    for step in range(len(edits) + 1):
        wiki = compile_wiki(config, files=cache)
        graph = build_graph(wiki)
        for source_pages in (True, False):
            expected = graph_json(graph)
            if not source_pages:
                for node in expected["nodes"]:
                    if node["type"] == "source":
                        node["url"] = None
            assert texts.graph(graph, source_pages) == dumps(expected)
        assert texts.index(wiki) == dumps(pages_index(wiki))
        if step < len(edits):
            name, text = edits[step]
            (tmp_path / "wiki" / name).write_text(text + "\n" * (step + 2), encoding="utf-8")


def test_each_pages_shard_holds_its_local_graph_as_the_whole_graph_has_it(tmp_path: Path) -> None:
    import json

    from groundwiki.core.model.site_paths import local_graph_file

    pages = {
        f"p{n}.md": page(f"Page {n}.", f"[[p{(n + 1) % 40}]] [[p{n * 7 % 40}]]") for n in range(40)
    }
    pages["p3.md"] = page("Cites.", "[[p4]] <!-- from: raw-sources/s.md#L1 -->")
    wiki = compile_wiki(load_config(write_wiki(tmp_path, pages, {"s.md": "one\n"})))
    graph = build_graph(wiki)
    whole = graph_json(graph)
    texts = ArtifactTexts()
    shards = {name: json.loads(text) for name, text in texts.local_graphs(graph).items()}
    assert len(shards) > 1  # 40 pages over 256 shards
    for node in (n for n in whole["nodes"] if n["type"] == "page"):
        key = node["id"]
        shard = shards[local_graph_file(key)]
        star = [e for e in whole["edges"] if key in (e["source"], e["target"])]
        ends = {key} | {end for e in star for end in (e["source"], e["target"])}
        assert [e for e in shard["edges"] if key in (e["source"], e["target"])] == star
        assert ends <= {n["id"] for n in shard["nodes"]}
        assert all(n in whole["nodes"] for n in shard["nodes"])
    again = ArtifactTexts().local_graphs(build_graph(wiki))
    assert texts.local_graphs(graph) == again  # the same text every time, kept or made anew
    assert all(json.loads(text) for text in again.values())
