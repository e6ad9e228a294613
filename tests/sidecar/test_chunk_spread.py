"""A chunk search's answer spread over its documents: at most `chunks_per_source` chunks of one
raw source (or passages of one page), the places filled from deeper hits, and one chunk per
text (`cut_duplicate_chunks`); the answer says what was removed. A real in-process sidecar of a
small wiki (Whoosh on disk, no embedding model: the lexical lane ranks)."""

from __future__ import annotations

import jsonschema
import pytest
from groundwiki.core.config.errors import GroundwikiError
from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.response_schemas import search_response
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar, settings_from_mapping
from groundwiki_sidecar.search.query import QueryEngine
from groundwiki_sidecar.search.spread import Spread, same_text_key
from helpers.wikis import page, write_wiki
from starlette.testclient import TestClient

pytestmark = pytest.mark.sidecar

WORDS = [chr(97 + n) * 3 for n in range(20)]  # aaa, bbb, ...


def filler(seed: int, count: int) -> str:
    """Words no other text has (each carries its seed), so texts differ and stay long enough
    for the chunker to keep each section apart."""
    return " ".join(f"{WORDS[(seed * 7 + i) % len(WORDS)]}{seed}" for i in range(count))


def dense_section(n: int) -> str:
    return f"## Part {n}\n\nTurbulence turbulence turbulence in run {n}. {filler(n, 70)}.\n"


VORTEX = "# Vortex notes\n\nVortex shedding behind the cylinder grows with speed. {}.\n"
VORTEX_TEXT = VORTEX.format(filler(90, 80))
# The same text re-wrapped: one word a line for its first words. The same text all the same.
REWRAPPED = VORTEX_TEXT.replace("Vortex shedding behind", "Vortex\nshedding   behind")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("spread")
    sources = {"dense.md": "# Dense notes\n\n" + "\n".join(dense_section(n) for n in range(1, 7))}
    for n in range(4):
        sources[f"other{n}.md"] = f"# Other {n}\n\nOne turbulence reading. {filler(20 + n, 90)}.\n"
    for n in range(6):  # the query words are rare, not in every chunk (the stop-word gate)
        sources[f"plain{n}.md"] = f"# Plain {n}\n\nA calm reading. {filler(40 + n, 90)}.\n"
    sources |= {"copy-a.md": VORTEX_TEXT, "copy-b.md": VORTEX_TEXT, "copy-c.md": REWRAPPED}
    long_page = "# Cavitation\n\n" + "\n".join(
        f"## Stage {n}\n\nCavitation cavitation at stage {n}. {filler(60 + n, 70)}.\n"
        for n in range(1, 6)
    )
    write_wiki(
        root,
        {
            "index.md": page(kind="overview", title="Home", summary="Start here.", body="# Home\n"),
            "cavitation.md": page(title="Cavitation", summary="Bubbles.", body=long_page),
        },
        {**sources, "pumps.md": f"# Pumps\n\nSome cavitation in pumps. {filler(80, 90)}.\n"},
        {"sidecar": {"debounce_s": 0.1}},
    )
    running = SidecarService(load_sidecar(root / "mkdocs.yml"), embed=False)
    running.start(watch=False)
    yield running
    running.stop()


@pytest.fixture
def engines(service):
    """The wiki's engine (its settings: a cap of 2, duplicates cut) and one that neither caps
    nor cuts: what the fusion ranked, to compare with."""
    spread = QueryEngine(service.indexer, lanes.default_weights(), 60)
    plain = QueryEngine(service.indexer, lanes.default_weights(), 60, spread=Spread(0, False))
    yield spread, plain
    spread.close()
    plain.close()


def documents(service: SidecarService, ids: list[str]) -> list[str]:
    snapshot = service.indexer.snapshot
    chunks, passages = snapshot.wiki.chunks, snapshot.passages
    return [chunks[i].source if i in chunks else f"page:{passages[i].page}" for i in ids]


def test_the_wiki_s_settings_are_a_cap_of_two_and_the_duplicate_cut(engines):
    assert engines[0].spread == Spread(per_source=2, cut_duplicates=True)


def test_the_cap_keeps_two_chunks_of_a_source_and_fills_the_rest_from_deeper_hits(service, engines):
    spread, plain = engines
    fused = [f.id for f in plain.search_chunks("turbulence", 100).fused]
    assert documents(service, fused[:4]) == ["dense.md"] * 4  # one source would take them all
    ranking = spread.search_chunks("turbulence", 4)
    kept = [f.id for f in ranking.fused]
    assert len(kept) == 4
    assert documents(service, kept)[:2] == ["dense.md", "dense.md"]
    assert all(documents(service, kept).count(d) <= 2 for d in documents(service, kept))
    assert kept == [item for item in fused if item in kept]  # the fused order, kept
    assert set(kept) - set(fused[:4])  # places filled from past the limit
    dense_passed_over = sum(d == "dense.md" for d in documents(service, fused)) - 2
    assert ranking.spread is not None
    assert (ranking.spread.capped, ranking.spread.duplicates) == (dense_passed_over, 0)


def test_passages_of_one_page_are_capped_as_a_source_s_chunks_are(service, engines):
    spread, plain = engines
    fused = documents(service, [f.id for f in plain.search_chunks("cavitation", 10).fused])
    assert fused[:3] == ["page:cavitation"] * 3
    kept = documents(service, [f.id for f in spread.search_chunks("cavitation", 3).fused])
    assert kept == ["page:cavitation", "page:cavitation", "pumps.md"]


def test_a_text_is_answered_once_the_best_ranked_copy(service, engines):
    spread, plain = engines
    copies = {"copy-a.md", "copy-b.md", "copy-c.md"}
    fused = [f.id for f in plain.search_chunks("vortex shedding", 10).fused]
    found = [i for i, d in zip(fused, documents(service, fused), strict=True) if d in copies]
    # copy-b.md is copy-a.md byte for byte: indexed once, as copy-a.md (dedupe_sources); the
    # re-wrapped copy is another text, with the same first 200 characters but for spaces.
    assert len(found) == 2 and "copy-b.md" not in documents(service, fused)
    ranking = spread.search_chunks("vortex shedding", 10)
    kept = [f.id for f in ranking.fused]
    assert [i for i in kept if i in found] == found[:1]
    assert ranking.spread is not None and ranking.spread.duplicates == 1


def test_the_same_text_key_ignores_whitespace_and_reads_200_characters():
    assert same_text_key(" a\n b\t\tc ") == same_text_key("a b c")
    assert same_text_key("x" * 200 + "one") == same_text_key("x" * 200 + "two")
    assert same_text_key("x" * 199 + "one") != same_text_key("x" * 199 + "two")


def test_with_no_cap_and_no_cut_the_answer_is_the_fused_ranking(service, engines):
    _, plain = engines
    ranking = plain.search_chunks("turbulence vortex shedding", 20)
    assert ranking.spread is not None and not ranking.spread.removed
    assert documents(service, [f.id for f in ranking.fused]).count("dense.md") == 6


def test_the_answer_says_what_the_cap_and_the_cut_removed_and_is_as_declared(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    answer = client.get("/chunks/search", params={"q": "turbulence", "limit": "4"}).json()
    assert answer["spread"] == {"per_source": 2, "capped": 4, "duplicates": 0}
    jsonschema.validate(answer, search_response("chunk"))
    copies = client.post("/chunks/search", json={"query": "vortex shedding"}).json()
    assert copies["spread"]["duplicates"] == 1
    # The byte-for-byte copy is named wherever its original's chunk is shown.
    wiki = service.indexer.snapshot.wiki
    (original,) = [c.id for c in wiki.chunks.values() if c.source == "copy-a.md"]
    (shown,) = client.post("/chunks", json={"ids": [original]}).json()["chunks"]
    assert shown["copies"] == ["copy-b.md"]
    assert all(hit.get("copies", ["copy-b.md"]) == ["copy-b.md"] for hit in copies["hits"])
    jsonschema.validate(copies, search_response("chunk"))


def test_an_answer_nothing_was_removed_from_has_no_spread(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    answer = client.get("/chunks/search", params={"q": "calm reading"}).json()
    assert answer["hits"] and "spread" not in answer
    pages = client.get("/search", params={"q": "turbulence"}).json()
    assert "spread" not in pages  # a page search has no spread
    assert "spread" not in search_response("page")["properties"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"chunks_per_source": -1}, "'chunks_per_source' must be an integer from 0 to 100, got -1"),
        ({"chunks_per_source": 101}, "must be an integer from 0 to 100, got 101"),
        ({"chunks_per_source": "two"}, "must be an integer from 0 to 100, got 'two'"),
        ({"chunks_per_source": True}, "must be an integer from 0 to 100, got True"),
        ({"cut_duplicate_chunks": "yes"}, "'cut_duplicate_chunks' must be true or false"),
    ],
)
def test_a_bad_spread_setting_is_refused_with_what_to_write(raw, message):
    with pytest.raises(GroundwikiError) as refused:
        settings_from_mapping(raw)
    assert message in str(refused.value)
    assert str(refused.value).startswith("mkdocs.yml: sidecar setting")


def test_the_spread_settings_are_read_from_the_block():
    settings = settings_from_mapping({"chunks_per_source": 0, "cut_duplicate_chunks": False})
    assert (settings.chunks_per_source, settings.cut_duplicate_chunks) == (0, False)
