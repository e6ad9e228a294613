"""The lexical lane's stop-word gate: a query whose known terms are too common in the index to
rank by (mean idf under `stopword_idf`), or that has no terms at all once stop words are out,
is skipped, and the lane says why; any other query is ranked. Page and chunk searches alike, on
a real in-process sidecar of a small wiki where every text says "groundwiki wiki page"."""

from __future__ import annotations

import math
from dataclasses import dataclass

import jsonschema
import pytest
from groundwiki.core.config.errors import GroundwikiError
from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.response_schemas import search_response
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar, settings_from_mapping
from groundwiki_sidecar.index.common_terms import NO_TERMS, too_common
from groundwiki_sidecar.lanes import BaseLane, LaneQuery, Scored
from groundwiki_sidecar.search.query import QueryEngine
from helpers.wikis import page, write_wiki
from starlette.testclient import TestClient

pytestmark = pytest.mark.sidecar

TOPICS = ["turbulence", "cavitation", "flutter", "buckling", "fatigue", "corrosion"]
COMMON = "groundwiki wiki page"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("stopwords")
    pages = {
        "index.md": page(
            kind="overview", title="Home", summary="Start here.", body=f"# Home\n\nA {COMMON}.\n"
        ),
        **{
            f"{topic}.md": page(
                title=topic.title(),
                summary=f"The {COMMON} on {topic}.",
                body=f"# {topic.title()}\n\nThis {COMMON} is about {topic}.\n",
            )
            for topic in TOPICS
        },
    }
    sources = {f"{topic}.md": f"# {topic}\n\nA {COMMON} note: {topic}.\n" for topic in TOPICS}
    write_wiki(root, pages, sources, {"sidecar": {"debounce_s": 0.1}})
    running = SidecarService(load_sidecar(root / "mkdocs.yml"), embed=False)
    running.start(watch=False)
    yield running
    running.stop()


@dataclass(frozen=True)
class ChunkOrderLane(BaseLane):
    """A second lane for chunk searches (this wiki embeds nothing): chunks by ID."""

    def rank(self, query: LaneQuery) -> Scored:
        ranked = sorted(item for item in query.snapshot.wiki.chunks if item in query.allowed)
        return tuple((item, 1.0) for item in ranked[: query.depth])


@pytest.fixture
def client(service, monkeypatch):
    """With a lane besides the lexical one for each kind: the token lane for pages, a chunk
    lane here; the gate holds only where another lane can answer."""
    spare = ChunkOrderLane(name="by_id", kinds=("chunk",), weight=0.5, doc="chunks by ID")
    monkeypatch.setattr(lanes, "LANES", (*lanes.LANES, spare))
    return TestClient(create_app(service), base_url="http://127.0.0.1")


def lane(answer: dict, name: str) -> dict:
    return next(entry for entry in answer["lanes"] if entry["name"] == name)


@pytest.mark.parametrize("path", ["/search", "/chunks/search"])
def test_a_query_of_terms_every_text_has_skips_the_lexical_lane_and_says_why(client, path):
    answer = client.get(path, params={"q": COMMON}).json()
    lexical = lane(answer, "lexical")
    assert lexical["state"] == "skipped"
    assert "too common in this index to rank by (mean idf 0.0" in lexical["reason"]
    assert "< 0.2, the stopword_idf setting" in lexical["reason"]
    assert all("lexical" not in hit["lanes"] for hit in answer["hits"])
    kind = "page" if path == "/search" else "chunk"
    jsonschema.validate(answer, search_response(kind))


@pytest.mark.parametrize("path", ["/search", "/chunks/search"])
def test_a_query_of_a_rare_term_is_ranked_by_the_lexical_lane(client, path):
    answer = client.get(path, params={"q": f"{COMMON} flutter"}).json()
    assert lane(answer, "lexical")["state"] == "ok"
    best = answer["hits"][0]
    assert "lexical" in best["lanes"]
    assert best.get("key") == "flutter" or "flutter" in best["text"]


@pytest.mark.parametrize("path", ["/search", "/chunks/search"])
def test_a_query_of_stop_words_only_says_it_has_no_words_to_rank_by(client, path):
    answer = client.get(path, params={"q": "and or with the?"}).json()  # Whoosh's stop words
    assert lane(answer, "lexical") == {"name": "lexical", "state": "skipped", "reason": NO_TERMS}
    # "but" is not one of them: a word no text here has, ranked, found nowhere, not skipped.
    unknown = lane(client.get(path, params={"q": "and but"}).json(), "lexical")
    assert unknown["state"] == "ok"


def test_a_skipped_lexical_lane_is_dropped_from_fusion_and_the_token_lane_fills_in(service):
    engine = QueryEngine(service.indexer, lanes.default_weights(), 60)
    try:
        runs = {run.name: run for run in engine.search_pages(COMMON, 10).runs}
    finally:
        engine.close()
    assert runs["lexical"].state == "skipped" and runs["lexical"].ranked == ()
    assert runs["token"].state == "ok"  # it fills in for a lexical lane that found nothing


def test_a_query_only_the_lexical_lane_can_answer_is_ranked_however_common(service):
    """Without chunk vectors the lexical lane is chunk search's only lane: a weak ranking by
    common words beats an empty answer."""
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    answer = client.get("/chunks/search", params={"q": COMMON}).json()
    assert lane(answer, "semantic")["state"] == "unavailable"
    assert lane(answer, "lexical")["state"] == "ok" and answer["hits"]
    narrowed = client.get("/search", params={"q": COMMON, "lanes": "lexical"}).json()
    assert lane(narrowed, "lexical")["state"] == "ok" and narrowed["hits"]


def test_with_the_gate_off_every_query_with_terms_is_ranked(service):
    engine = QueryEngine(service.indexer, lanes.default_weights(), 60, stopword_idf=0.0)
    try:
        runs = {run.name: run for run in engine.search_chunks(COMMON, 10).runs}
        empty = {run.name: run for run in engine.search_chunks("and or", 10).runs}
    finally:
        engine.close()
    assert runs["lexical"].state == "ok" and runs["lexical"].ranked
    assert empty["lexical"].reason == NO_TERMS  # no terms: nothing to rank by, gate or not


def test_the_default_threshold_ranks_a_one_document_index_and_not_a_word_in_both_of_two():
    def idf(df: int, total: int) -> float:
        return math.log(1.0 + (total - df + 0.5) / (df + 0.5))

    default = settings_from_mapping({}).stopword_idf
    assert too_common([idf(1, 1)], default) == ""
    assert too_common([idf(2, 2)], default) != ""
    assert too_common([idf(520, 1000)], default) == ""  # Cranfield's commonest term, "flow"
    assert too_common([], default) == ""  # no known term: ranked, finds nothing


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-0.1, "'stopword_idf' must be 0 to 10, got -0.1"),
        (11, "'stopword_idf' must be 0 to 10, got 11"),
        ("high", "'stopword_idf' must be 0 to 10, got 'high'"),
        (float("nan"), "'stopword_idf' must be 0 to 10, got nan"),
    ],
)
def test_a_bad_stopword_idf_is_refused_with_what_to_write(value, message):
    with pytest.raises(GroundwikiError) as refused:
        settings_from_mapping({"stopword_idf": value})
    assert message in str(refused.value)
