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
