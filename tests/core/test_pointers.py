"""Pointers: the chunks a page cites, weighted, capped and in a stable order."""

from __future__ import annotations

from helpers.wikis import page

PARAS = (
    "\n\n".join(
        " ".join(
            f"Paragraph {p} sentence {s} talks about grounded wiki evidence." for s in range(8)
        )
        for p in range(12)
    )
    + "\n"
)


def test_a_line_range_points_at_the_chunks_overlapping_it(make_wiki):
    wiki = make_wiki(
        {"p.md": page(body="<!-- from: raw-sources/a.md#L5-L5 -->\n")}, {"a.md": PARAS}
    )
    (pointer,) = wiki.pointers["p"]
    chunk = wiki.chunks[pointer.chunk_id]
    assert chunk.start_line <= 5 <= chunk.end_line
    assert pointer.weight == 1.0
    assert (pointer.source, pointer.content_hash) == ("a.md", chunk.content_hash)


def test_a_whole_file_citation_points_at_its_chunks_up_to_the_cap(make_wiki):
    wiki = make_wiki(
        {"p.md": page(sources=["raw-sources/a.md"])}, {"a.md": PARAS}, options={"max_pointers": 3}
    )
    pointers = wiki.pointers["p"]
    assert len(wiki.chunks_of(wiki.sources["a.md"])) > 3
    assert len(pointers) == 3


def test_pointers_are_ordered_by_weight_then_chunk_id(make_wiki):
    body = "<!-- from: raw-sources/a.md#L1-L1 -->\n\n<!-- from: raw-sources/a.md -->\n"
    wiki = make_wiki({"p.md": page(body=body)}, {"a.md": PARAS}, options={"max_pointers": 20})
    pointers = wiki.pointers["p"]
    assert pointers[0].start_line == 1  # cited twice: the heaviest
    keys = [(-p.weight, p.chunk_id) for p in pointers]
    assert keys == sorted(keys)


def test_the_default_cap_is_five(make_wiki):
    wiki = make_wiki({"p.md": page(sources=["raw-sources/a.md"])}, {"a.md": PARAS})
    assert len(wiki.pointers["p"]) == 5
