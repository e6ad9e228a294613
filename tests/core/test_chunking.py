"""Chunking: deterministic, sized for the model (measured with its tokenizer), stable under edits."""

from __future__ import annotations

import hashlib
import random

from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy, chunk_text
from groundwiki.core.sources.extract import Extracted
from groundwiki.core.sources.tokens import load_tokenizer
from helpers.prose import WORDS, prose


def markdown(seed: int, sections: int) -> str:
    return "".join(f"## Section {i}\n\n{prose(seed + i, 3)}\n" for i in range(sections))


def chunks_of(text: str, fmt: str = "text", path: str = "doc.txt", policy=DEFAULT_POLICY):
    from groundwiki.core.sources.extract import _markdown_heading_lines

    headings = frozenset(_markdown_heading_lines(text)) if fmt == "markdown" else frozenset()
    return chunk_text(path, Extracted(fmt, text, headings), policy)


def real_tokens(text: str) -> int:
    return len(load_tokenizer().encode(text).ids)


def test_the_same_input_gives_the_same_chunks():
    text = markdown(1, 6)
    assert chunks_of(text, "markdown") == chunks_of(text, "markdown")


def test_a_known_text_has_a_known_chunk_id():
    # Pinned: if this changes, chunk IDs changed for every user; bump ChunkPolicy.version on purpose.
    (chunk,) = chunks_of("Evidence is immutable. Pages cite it.\n")
    assert (
        chunk.id
        == "ch_"
        + hashlib.sha256(
            f"{DEFAULT_POLICY.identity}\0doc.txt\0Evidence is immutable. Pages cite it.".encode()
        ).hexdigest()[:16]
    )
    assert DEFAULT_POLICY.identity == ("groundwiki-chunk/1/max256/min64/overlap48/tok-be50c3628f2b")


def test_every_chunk_fits_the_model_measured_with_its_tokenizer():
    rng = random.Random(3)
    long_sentence = " ".join(rng.choice(WORDS) for _ in range(900)) + "."
    long_word = "x" * 90 + ",".join(str(i) for i in range(400))
    csv = "\n".join(",".join(rng.choice(WORDS) for _ in range(12)) for _ in range(200))
    for text, fmt in [
        (prose(5, 30), "text"),
        (markdown(9, 12), "markdown"),
        (long_sentence, "text"),
        (long_word, "text"),
        (csv, "csv"),
    ]:
        chunks = chunks_of(text, fmt)
        assert chunks
        for chunk in chunks:
            measured = real_tokens(chunk.text)
            assert measured <= 256, (fmt, measured)
            assert measured == chunk.tokens, (fmt, measured, chunk.tokens)


def test_chunks_are_verbatim_slices_with_their_line_ranges():
    text = markdown(4, 5)
    lines = text.split("\n")
    for chunk in chunks_of(text, "markdown"):
        assert chunk.text in "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.text.startswith(lines[chunk.start_line - 1].strip()[:10])
        assert chunk.content_hash == hashlib.sha256(chunk.text.encode()).hexdigest()


def test_every_line_with_text_is_in_some_chunk():
    text = prose(11, 25)
    covered = set()
    for chunk in chunks_of(text):
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    wanted = {n for n, line in enumerate(text.split("\n"), start=1) if line.strip()}
    assert wanted <= covered


def test_markdown_sections_are_chunk_boundaries():
    text = markdown(2, 8)
    heading_lines = {n for n, line in enumerate(text.split("\n"), start=1) if line.startswith("##")}
    for chunk in chunks_of(text, "markdown"):
        inside = {n for n in heading_lines if chunk.start_line < n <= chunk.end_line}
        assert not inside, (chunk.start_line, chunk.end_line, inside)


def test_an_edit_in_one_section_keeps_the_ids_of_the_others():
    text = markdown(6, 8)
    edited = text.replace("## Section 5\n\n", "## Section 5\n\nA brand new sentence here. ", 1)
    before = {c.id for c in chunks_of(text, "markdown")}
    after = {c.id for c in chunks_of(edited, "markdown")}
    changed = before - after
    assert 1 <= len(changed) <= 2
    assert len(before & after) >= len(before) - 2


def test_an_edit_near_the_start_of_plain_text_keeps_most_ids():
    text = prose(8, 40)
    edited = text.replace(". ", ". Inserted words change this sentence. ", 1)
    before = [c.id for c in chunks_of(text)]
    after = {c.id for c in chunks_of(edited)}
    survived = sum(1 for chunk_id in before if chunk_id in after)
    assert survived >= len(before) - 3


def test_the_policy_is_part_of_the_identity():
    text = prose(1, 3)
    other = ChunkPolicy(version="2")
    assert {c.id for c in chunks_of(text)}.isdisjoint({c.id for c in chunks_of(text, policy=other)})


def test_the_path_is_part_of_the_identity():
    text = prose(1, 2)
    assert chunks_of(text, path="a.txt")[0].id != chunks_of(text, path="b.txt")[0].id


def test_repeated_text_gets_distinct_ids():
    block = prose(12, 1)
    chunks = chunks_of("\n".join([block] * 3))
    assert len({c.id for c in chunks}) == len(chunks) >= 3


def test_empty_and_blank_text_has_no_chunks():
    assert chunks_of("") == ()
    assert chunks_of("\n  \n\t\n") == ()


def log_lines(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"2026-11-{rng.randint(1, 28):02d} worker-{rng.randint(1, 9)} "
        + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
        for _ in range(count)
    ]


def test_text_without_sentence_ends_is_cut_at_line_ends_and_stays_stable():
    lines = log_lines(21, 600)
    text = "\n".join(lines) + "\n"
    before = chunks_of(text, path="app.log")
    for chunk in before:
        assert text.split("\n")[chunk.start_line - 1].startswith(chunk.text.split("\n", 1)[0])
    edited = "2026-11-01 worker-0 a new first line\n" + text
    after = {c.id for c in chunks_of(edited, path="app.log")}
    survived = sum(1 for c in before if c.id in after)
    assert survived >= len(before) - 3


def test_a_long_run_without_spaces_is_cut_between_word_pieces():
    blob = "".join(f'{{"key{i}":"value{i}","n":{i * 7}}},' for i in range(1500))  # minified JSON
    chunks = chunks_of(blob, "json", path="data.json")
    assert "".join(c.text for c in chunks) == blob
    for chunk in chunks:
        assert real_tokens(chunk.text) == chunk.tokens <= 256
