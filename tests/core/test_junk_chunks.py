"""Junk in raw sources: binary read as text, base64 and hex blobs, runs of whitespace. Such
chunks are cut (their lines stay citable) but neither embedded nor ranked, and no real
paragraph goes with them: the corpus below labels every paragraph by hand, real or junk."""

from __future__ import annotations

import base64
import random

import pytest
from groundwiki.core import run_lint
from groundwiki.core.config.junk_rules import DEFAULT_JUNK_RULES
from groundwiki.core.config.settings_spec import ConfigError
from groundwiki.core.sources.hygiene import JUNK_KINDS, chunk_measures, junk_kind, measure
from groundwiki.core.wiki.compiled import Wiki
from helpers.wikis import MakeWiki, page

# Real paragraphs, each to be found whole in an indexed chunk; written to look like what teams
# keep (a runbook, notes in two scripts, a link list, a log, a lock file with hashes).
REAL = {
    "runbook": "The deploy queue retries a failed job three times, backing off exponentially "
    "from two seconds, before it pages the on-call engineer.",
    "short": "Attachment follows.",
    "after": "The signature was checked against the vendor's published key on 3 March.",
    "chinese": "部署队列在失败后重试三次，每次等待的时间加倍，然后通知值班工程师。"
    "如果三次都失败，任务会被移到死信队列，等待人工处理。",
    "links": "https://github.com/example/queue/blob/9f2c4e1a7b3d5f60a1c2e3d4b5a6978812345678/"
    "README.md and https://docs.example.org/queue/retries.html describe the policy.",
    "log": "2026-03-03T10:00:01Z worker-7 retry 2/3 job=invoice-4411 backoff=4s",
    "hash": "The release tarball's sha256 is "
    "0f9a3c1e5d7b2a4c6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d; we checked it against "
    "the vendor's signed list before the deploy.",
    "spaced": "Capacity planning happens every quarter, with the queue's peak load as input.",
    "german": "Die Donaudampfschifffahrtsgesellschaftskapitänsmütze liegt im Schrank.",
}


def _b64(seed: int, size: int) -> str:
    blob = base64.b64encode(random.Random(seed).randbytes(size)).decode()
    return "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76))


def _latin1(seed: int, size: int) -> str:
    # A binary "fixed" by a tool that read it as Latin-1 and wrote UTF-8 (no NUL: that alone
    # makes extraction refuse the file).
    data = bytes(b or 1 for b in random.Random(seed).randbytes(size))
    return data.decode("latin-1")


def corpus() -> dict[str, str | bytes]:
    return {
        "runbook.md": f"# Deploy queue\n\n{REAL['runbook']}\n",
        # A short paragraph, then an attachment pasted in, then a real paragraph again.
        "note.md": f"{REAL['short']}\n\n{_b64(1, 3000)}\n\n{REAL['after']}\n",
        "chinese.txt": REAL["chinese"] + "\n",
        "links.txt": REAL["links"] + "\n",
        "worker.log": "\n".join([REAL["log"]] * 3) + "\n",
        "hash.txt": REAL["hash"] + "\n",
        # Whitespace runs between real paragraphs: kept with them, the paragraphs indexed.
        "spaced.txt": REAL["spaced"] + " " * 10_000 + "\n\n" + " " * 8000 + REAL["german"],
        "german.txt": REAL["german"] + "\n",
        "blob.txt": _b64(2, 6000) + "\n",
        "hexdump.txt": random.Random(3).randbytes(2000).hex() + "\n",
        "latin1.txt": _latin1(4, 1500),
        "random.txt": random.Random(5).randbytes(4000),  # not UTF-8: unreadable, not chunked
        "padding.txt": "x" + " " * 20_000 + "\n\n" + " " * 5000 + "y\n",
    }


JUNK_SOURCES = {"blob.txt", "hexdump.txt", "latin1.txt", "padding.txt"}


@pytest.fixture()
def wiki(make_wiki: MakeWiki) -> Wiki:
    body = "Evidence: <!-- from: raw-sources/note.md#L1-L1 -->\n"
    return make_wiki({"a.md": page(body=body)}, corpus())


def test_no_junk_chunk_is_indexed_and_no_real_paragraph_is_lost(wiki: Wiki) -> None:
    indexed = wiki.indexed_chunks
    for chunk in indexed.values():
        assert chunk.source not in JUNK_SOURCES, chunk.text[:80]
        assert (
            "\n" not in chunk.text.strip()
            or chunk.source != "note.md"
            or ("Attachment" not in chunk.text and "signature" not in chunk.text)
        )
        assert junk_kind(chunk_measures(chunk), DEFAULT_JUNK_RULES) is None
    # Every chunk of note.md that holds base64 is skipped: none is indexed.
    assert not [c for c in indexed.values() if c.source == "note.md" and "==" in c.text]
    texts = [" ".join(c.text.split()) for c in indexed.values()]
    for name, paragraph in REAL.items():
        assert any(paragraph in text for text in texts), f"the {name} paragraph was lost"
    assert "random.txt" in wiki.sources and wiki.sources["random.txt"].text is None


def test_each_junk_source_is_skipped_for_its_kind_and_stays_citable(wiki: Wiki) -> None:
    kinds = {path: {kind for _, kind in junk} for path, junk in wiki.junk_chunks.items()}
    assert kinds == {
        "note.md": {"encoded"},
        "blob.txt": {"encoded"},
        "hexdump.txt": {"encoded"},
        "latin1.txt": {"binary"},
        "padding.txt": {"near-empty"},
    }
    assert all(wiki.chunks_of(wiki.sources[path]) for path in kinds)  # still cut
    # The skipped chunks keep their IDs in `chunks` (a citation can point into them).
    assert {c.id for junk in wiki.junk_chunks.values() for c, _ in junk} <= set(wiki.chunks)


def test_an_info_finding_per_source_names_the_skipped_lines(wiki: Wiki) -> None:
    found = {f.path: f for f in run_lint(wiki).findings if f.rule == "junk-chunks"}
    assert set(found) == {
        "raw-sources/note.md",
        "raw-sources/blob.txt",
        "raw-sources/hexdump.txt",
        "raw-sources/latin1.txt",
        "raw-sources/padding.txt",
    }
    note = found["raw-sources/note.md"]
    assert note.severity == "info"
    assert note.line == 3  # the blob starts on line 3
    assert JUNK_KINDS["encoded"] in note.message and "are not indexed" in note.message
    assert "skip_junk_chunks" in note.hint


def test_the_filter_can_be_turned_off_or_tuned(make_wiki: MakeWiki) -> None:
    off = make_wiki({"a.md": page()}, corpus(), {"skip_junk_chunks": False})
    assert off.junk_chunks == {} and off.indexed_chunks == off.chunks
    assert "p.txt" in make_wiki({"a.md": page()}, {"p.txt": "zzzz\n"}).junk_chunks
    tuned = make_wiki({"a.md": page()}, {"p.txt": "zzzz\n"}, {"junk_words_below": 1})
    assert "p.txt" not in tuned.junk_chunks  # one word is enough now
    with pytest.raises(ConfigError, match="junk_entropy_above"):
        make_wiki({"a.md": page()}, {}, {"junk_entropy_above": "high"})


def test_the_measures_are_kept_with_every_chunk(wiki: Wiki) -> None:
    chunk = next(c for c in wiki.chunks.values() if c.source == "runbook.md")
    assert 3.5 < chunk.entropy < 5.0 and chunk.words >= 20
    # The shares are measured where binary or encoded junk can be (a control character, a long
    # encoded run): the runbook has neither, so its chunks' shares are not measured.
    assert chunk.letters is chunk.encoded is chunk.controls is None
    note = next(c for c in wiki.chunks.values() if c.source == "note.md" and "signature" in c.text)
    assert note.letters > 0.7 and note.encoded == 0 and note.controls == 0
    latin = next(c for c in wiki.chunks.values() if c.source == "latin1.txt")
    assert latin.controls > 0.1 and latin.letters < 0.6
    assert measure("") == measure("")  # empty text measures without dividing by zero
    assert measure("aaaa").entropy == 0.0


def test_a_copy_of_a_source_is_extracted_and_indexed_once_and_both_are_citable(
    make_wiki: MakeWiki,
) -> None:
    text = f"# Queue\n\n{REAL['runbook']}\n"
    body = (
        "One <!-- from: raw-sources/a/runbook.md#L3-L3 -->\n\n"
        "Two <!-- from: raw-sources/b/copy.md#L3-L3 -->\n"
    )
    wiki = make_wiki(
        {"p.md": page(body=body)},
        {"a/runbook.md": text, "b/copy.md": text, "c/other.md": "# Other\n\nElse.\n"},
    )
    assert wiki.copies == {"b/copy.md": "a/runbook.md"}
    assert wiki.copies_of == {"a/runbook.md": ("b/copy.md",)}
    # One extraction: the very same text object serves both paths.
    assert wiki.sources["b/copy.md"].text is wiki.sources["a/runbook.md"].text
    indexed = {chunk.source for chunk in wiki.indexed_chunks.values()}
    assert indexed == {"a/runbook.md", "c/other.md"}
    report = run_lint(wiki)
    assert not [f for f in report.findings if f.rule == "invalid-citation"]
    (found,) = [f for f in report.findings if f.rule == "duplicate-source"]
    assert found.path == "raw-sources/b/copy.md" and "raw-sources/a/runbook.md" in found.message
    off = make_wiki({"p.md": page(body=body)}, None, {"dedupe_sources": False})
    assert off.copies == {} and {c.source for c in off.indexed_chunks.values()} >= {
        "a/runbook.md",
        "b/copy.md",
    }


def test_an_edit_of_a_page_does_not_look_at_every_source_again(make_wiki: MakeWiki) -> None:
    from groundwiki.core.wiki.compiler import CompileCache, compile_wiki

    first = make_wiki({"a.md": page()}, corpus())
    files = CompileCache()
    before = compile_wiki(first.config, files=files)
    junk, copies = before.junk_chunks, before.copies
    page_file = first.config.docs_dir / "a.md"
    page_file.write_text(page(summary="Edited."))
    after = compile_wiki(first.config, files=files, changed=[page_file])
    assert after.sources is before.sources  # no raw source read again
    assert after.junk_chunks is junk and after.copies is copies
    (first.config.raw_dir / "padding.txt").write_text("A real paragraph now, with words.\n")
    changed = compile_wiki(
        first.config, files=files, changed=[first.config.raw_dir / "padding.txt"]
    )
    assert "padding.txt" not in changed.junk_chunks and "blob.txt" in changed.junk_chunks
