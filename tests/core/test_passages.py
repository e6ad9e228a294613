"""A page's body cut into passages by the core's chunker: IDs, headings and lines in the file."""

from __future__ import annotations

import os

from groundwiki.core import compile_wiki, load_config
from groundwiki.core.wiki.compiler import CompileCache
from helpers.wikis import page, write_wiki

SENTENCE = "Lift grows with the angle of attack until the flow separates from the upper surface. "
LONG_BODY = (
    "# Wing design\n\n"
    + SENTENCE * 12
    + "\n\n## Flutter\n\n"
    + "Flutter couples bending and torsion of the wing at a critical speed. " * 12
    + "\n\n```text\n# not a heading, inside a fence\n```\n\n"
    + "### Flutter margins\n\n"
    + "The flutter margin is fifteen percent above the dive speed. " * 10
    + "\n\n## Stall\n\nThe stall begins at the wing root.\n"
)


def _bump(path, text):
    path.write_text(text, encoding="utf-8")
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))  # clocks can be coarse


def test_passages_sit_at_their_lines_in_the_page_file(make_wiki):
    wiki = make_wiki({"wing.md": page(title="Wing", tags=["aero"], body=LONG_BODY)})
    page_ = wiki.pages["wing"]
    passages = wiki.passages_of(page_)
    assert len(passages) > 2
    lines = page_.path.read_text(encoding="utf-8").split("\n")
    for passage in passages:
        shown = "\n".join(lines[passage.start_line - 1 : passage.end_line])  # sed -n 'a,bp'
        assert passage.text in shown
        assert shown.startswith(passage.text.split("\n")[0])
        assert passage.page == "wing" and passage.path == "wiki/wing.md"


def test_passages_carry_the_headings_they_sit_under(make_wiki):
    wiki = make_wiki({"wing.md": page(title="Wing", body=LONG_BODY)})
    by_text = {p.text.split("\n")[0]: p.heading_path for p in wiki.passages_of(wiki.pages["wing"])}
    assert by_text["### Flutter margins"] == ("Wing design", "Flutter", "Flutter margins")
    # A `#` line inside a code fence is no heading: it opens no section of its own.
    assert not any("# not a heading" in first for first in by_text)


def test_passage_ids_are_deterministic_and_not_chunk_ids(tmp_path):
    config = load_config(write_wiki(tmp_path, {"wing.md": page(title="Wing", body=LONG_BODY)}))
    first = compile_wiki(config).passages
    second = compile_wiki(config).passages
    assert list(first) == list(second)
    assert all(len(i) == 19 and i.startswith("pa_") for i in first)
    assert {p.start_line for p in first.values()} == {p.start_line for p in second.values()}


def test_a_repeated_passage_gets_its_own_id(make_wiki):
    body = "# A\n\n" + SENTENCE * 6 + "\n\n# B\n\n" + SENTENCE * 6 + "\n"
    wiki = make_wiki({"twice.md": page(title="Twice", body=body)})
    passages = wiki.passages_of(wiki.pages["twice"])
    ids = [p.id for p in passages]
    assert len(ids) == len(set(ids))


def test_an_edit_cuts_only_the_edited_page_again(tmp_path):
    config = load_config(
        write_wiki(
            tmp_path,
            {
                "wing.md": page(title="Wing", body=LONG_BODY),
                "tail.md": page(body="# Tail\n\nFin.\n"),
            },
        )
    )
    cache = CompileCache()
    first = compile_wiki(config, files=cache)
    before = {key: first.passages_of(p) for key, p in first.pages.items()}
    _bump(tmp_path / "wiki/tail.md", page(body="# Tail\n\nRudder.\n"))
    second = compile_wiki(config, files=cache)
    assert second.passages_of(second.pages["wing"]) is before["wing"]  # not cut again
    assert second.passages_of(second.pages["tail"])[0].text == "# Tail\n\nRudder."


def test_the_passage_cache_forgets_pages_as_they_were(tmp_path):
    config = load_config(write_wiki(tmp_path, {"tail.md": page(body="# Tail\n\nFin.\n")}))
    cache = CompileCache()
    for edit in range(80):
        _bump(tmp_path / "wiki/tail.md", page(body=f"# Tail\n\nFin number {edit}.\n"))
        wiki = compile_wiki(config, files=cache)
        assert len(wiki.passages) == 1
        assert len(cache.passages) <= 2 * len(wiki.pages) + 64 + 1  # not one per edit


def test_a_broken_page_keeps_its_passages_and_the_others_theirs(tmp_path):
    config = load_config(
        write_wiki(
            tmp_path,
            {
                "broken.md": "---\ntitle: [unclosed\n---\n# Broken\n\nThe body is still here.\n",
                "empty.md": page(title="Empty"),
                "good.md": page(title="Good", body="# Good\n\nA good page.\n"),
            },
        )
    )
    (tmp_path / "wiki/binary.md").write_bytes(b"\xff\xfe\x00garbage\x00")
    wiki = compile_wiki(config)
    assert wiki.pages["broken"].problems and wiki.pages["binary"].problems
    found = {p.page: p for p in wiki.passages.values()}
    assert sorted(found) == ["broken", "good"]  # nothing to cut in the empty or unreadable one
    assert found["good"].text == "# Good\n\nA good page."
    assert (found["broken"].start_line, found["broken"].end_line) == (4, 6)


def test_a_passage_of_citation_comments_only_is_dropped(make_wiki):
    body = (
        "# Notes\n\n" + SENTENCE * 5 + "\n\n<!-- from: raw-sources/n.md#L1 -->\n"
        "<!-- from: raw-sources/n.md#L2 -->\n"
    )
    wiki = make_wiki({"notes.md": page(title="Notes", body=body)}, {"n.md": "a\nb\n"})
    passages = wiki.passages_of(wiki.pages["notes"])
    assert passages and all("Lift grows" in p.text for p in passages)
