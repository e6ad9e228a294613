"""The lane registry: one list of lanes, from which everything that knows them derives."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from groundwiki_sidecar import lanes
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.mcp_tools import build_mcp
from groundwiki_sidecar.api.openapi import resolved
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.lanes import BaseLane, LaneQuery, LaneState, Scored
from groundwiki_sidecar.search.query import QueryEngine
from helpers.sidecar_helpers import small_wiki
from starlette.testclient import TestClient

HEAVY = ("whoosh", "chromadb", "onnxruntime", "starlette", "uvicorn", "mcp", "watchdog", "numpy")


def test_the_registry_imports_no_index_or_server_library():
    script = (
        "import sys, groundwiki_sidecar.lanes\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_registry_names_the_lanes_and_their_default_weights():
    assert lanes.names() == tuple(lane.name for lane in lanes.LANES)
    assert set(lanes.names("chunk")) < set(lanes.names("page")) == set(lanes.names())
    assert lanes.default_weights() == {lane.name: lane.weight for lane in lanes.LANES}
    assert lanes.get(lanes.names()[0]) is lanes.LANES[0]


# --- adding a lane: one module (here, this test) and one entry in the registry ---------------


@dataclass(frozen=True)
class TitleLengthLane(BaseLane):
    """A toy lane: pages with the shortest titles first, whatever the query."""

    def rank(self, query: LaneQuery) -> Scored:
        pages = query.snapshot.pages
        ranked = sorted((len(pages[key].title), key) for key in pages if key in query.allowed)
        return tuple((key, -float(size)) for size, key in ranked[: query.depth])


TOY = TitleLengthLane(name="brevity", kinds=("page",), weight=0.5, doc="short titles first")


@dataclass(frozen=True)
class WarmingLane(TitleLengthLane):
    def state(self, indexer: object, kind: str | None, view: object = None) -> LaneState:
        return LaneState("warming", "still counting letters")


@pytest.fixture
def toy_lane(monkeypatch):
    monkeypatch.setattr(lanes, "LANES", (*lanes.LANES, TOY))
    return TOY


@pytest.fixture
def toy_service(tmp_path):
    service = SidecarService(small_wiki(tmp_path), embed=False)
    service.start(watch=False)
    yield service
    service.stop()


def test_a_registered_lane_has_its_default_weight_and_ranks_its_kinds(toy_lane):
    assert lanes.default_weights()["brevity"] == 0.5
    assert "brevity" in lanes.names("page") and "brevity" not in lanes.names("chunk")
    assert lanes.get("brevity") is toy_lane


def test_a_registered_lane_is_in_the_api_its_document_and_the_tools(toy_lane, toy_service):
    client = TestClient(create_app(toy_service), base_url="http://127.0.0.1")
    document = resolved(client.get("/openapi.json").json())
    for path, kind in (("/search", "page"), ("/chunks/search", "chunk")):
        search = document["paths"][path]["get"]
        (param,) = (p for p in search["parameters"] if p["name"] == "lanes")
        assert param["schema"]["items"]["enum"] == list(lanes.names(kind)), path
    assert "brevity" in lanes.names("page") and "brevity" not in lanes.names("chunk")
    answer = client.get("/search", params={"q": "flutter", "lanes": "brevity"})
    assert answer.status_code == 200, answer.text
    assert [(run["name"], run["state"]) for run in answer.json()["lanes"]] == [("brevity", "ok")]
    search = document["paths"]["/search"]["get"]["responses"]["200"]
    jsonschema.validate(answer.json(), search["content"]["application/json"]["schema"])
    status = document["paths"]["/status"]["get"]["responses"]["200"]
    assert (
        "brevity"
        in status["content"]["application/json"]["schema"]["properties"]["lanes"]["properties"]
    )
    ops = Operations(toy_service)
    try:
        listed = {tool.name: tool for tool in asyncio.run(build_mcp(ops).list_tools())}
    finally:
        ops.close()
    assert "brevity" in listed["search_wiki"].description


def test_a_registered_lane_can_be_weighted_in_the_settings(toy_lane):
    from groundwiki_sidecar.base.settings import settings_from_mapping

    weights = settings_from_mapping({"weights": {"brevity": 2}}).weights
    assert weights == {**lanes.default_weights(), "brevity": 2.0}


def test_a_registered_lane_is_in_the_status(toy_lane, toy_service):
    ok = {"state": "ok", "reason": ""}
    assert toy_service.status().lanes["brevity"] == {**ok, "kinds": {"page": ok}}


def test_a_registered_lane_is_run_and_fused_by_the_engine(toy_lane, toy_service):
    engine = QueryEngine(toy_service.indexer, lanes.default_weights(), 60)
    try:
        ranking = engine.search_pages("flutter", 10)
        runs = {run.name: run for run in ranking.runs}
        assert runs["brevity"].state == "ok"
        assert runs["brevity"].ranked == ("index", "shock", "wing")  # Home, Shock waves, Wing…
        assert all("brevity" in hit.contributions for hit in ranking.fused)
        chunks = engine.search_chunks("flutter", 10)
        assert "brevity" not in {run.name for run in chunks.runs}  # it ranks pages only
    finally:
        engine.close()


def test_status_and_the_engine_take_a_lane_state_from_one_function(monkeypatch, toy_service):
    warming = WarmingLane(name="brevity", kinds=("page",), weight=0.5, doc="short titles first")
    monkeypatch.setattr(lanes, "LANES", (*lanes.LANES, warming))
    said = {"state": "warming", "reason": "still counting letters"}
    assert toy_service.status().lanes["brevity"] == {**said, "kinds": {"page": said}}
    engine = QueryEngine(toy_service.indexer, lanes.default_weights(), 60)
    try:
        run = next(r for r in engine.search_pages("flutter", 10).runs if r.name == "brevity")
        assert (run.state, run.reason, run.ranked) == ("warming", said["reason"], ())
    finally:
        engine.close()


# In a process of its own: the embedding model's thread pools must not live on in the test
# process (see test_evaluation.py), and the lane is registered there the same way.
EVAL_WITH_A_TOY_LANE = """
import json, sys
from pathlib import Path
sys.path[:0] = [{tests!r}, {helpers!r}]
import test_lanes
from groundwiki_sidecar import lanes
lanes.LANES = (*lanes.LANES, test_lanes.TOY)
from groundwiki.cli.eval_commands import format_table
from groundwiki_sidecar.evaluation.collection import load_collection
from groundwiki_sidecar.evaluation.harness import evaluate
result = evaluate(load_collection(Path({collection!r})), grid=True).to_json()
print(json.dumps({{"systems": list(result["systems"]), "grid": result["grid"]["lead"][0],
                  "table": format_table(result)}}))
"""


def test_a_registered_lane_gets_its_own_evaluation_columns(tmp_path):
    from test_evaluation import GOOD_CORPUS, GOOD_QRELS, GOOD_QUERIES, beir

    collection = beir(tmp_path / "c", GOOD_CORPUS, GOOD_QUERIES, GOOD_QRELS)
    here = Path(__file__).parent
    script = EVAL_WITH_A_TOY_LANE.format(
        tests=str(here), helpers=str(here.parent), collection=str(collection)
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.splitlines()[-1])
    assert "brevity" in data["systems"]
    assert "brevity" in data["grid"]["weights"]  # the grid tries its weights too
    assert "brevity 1.0" in data["table"] and "brevity " in data["table"].split("times")[1]


def test_the_token_lane_bounds_a_long_question_to_its_rarest_known_words(toy_service):
    from groundwiki_sidecar.lanes.token_lane import bound_terms, normalise

    snapshot = toy_service.indexer.snapshot
    # "wing" is held by one page (key, title), "flutter" by one, "speed" by one; words no page
    # holds ("qqq") are dropped without counting.
    terms = normalise("qqq speed wing flutter shocks qqq")
    kept, left_out = bound_terms(snapshot, terms, limit=2)
    assert len(kept) == 2 and "qqq" not in kept
    assert left_out == "matched the 2 rarest of the question's 4 known words"
    assert bound_terms(snapshot, terms, limit=2) == (kept, left_out)  # deterministic
    whole, nothing = bound_terms(snapshot, terms)
    assert whole == ("speed", "wing", "flutter", "shocks") and nothing == ""


@dataclass(frozen=True)
class CountingFillIn(TitleLengthLane):
    """Fills in for the lexical lane, and counts how often it is asked to rank."""

    asked: list[str] = None  # type: ignore[assignment]

    def rank(self, query: LaneQuery) -> Scored:
        self.asked.append(query.text)
        return super().rank(query)


def test_a_lane_on_standby_is_not_run_unless_the_evaluation_asks(monkeypatch, toy_service):
    fill_in = CountingFillIn(
        name="spare", kinds=("page",), weight=0.5, doc="fills in", fills_in_for="lexical", asked=[]
    )
    monkeypatch.setattr(lanes, "LANES", (*lanes.LANES, fill_in))
    engine = QueryEngine(toy_service.indexer, lanes.default_weights(), 60, "fallback")
    try:
        found = {r.name: r for r in engine.search_pages("flutter", 10).runs}
        assert found["lexical"].ranked and found["spare"].state == "standby"
        assert fill_in.asked == []  # the lexical lane found pages: the spare was never run
        nothing = {r.name: r for r in engine.search_pages("the", 10).runs}  # a stop word
        assert nothing["spare"].state == "ok" and nothing["spare"].ranked
        assert fill_in.asked == ["the"]
    finally:
        engine.close()
    evaluating = QueryEngine(
        toy_service.indexer, lanes.default_weights(), 60, "fallback", rank_standby=True
    )
    try:
        run = next(r for r in evaluating.search_pages("flutter", 10).runs if r.name == "spare")
        assert run.state == "standby" and run.ranked  # ranked, for the grid to fuse another way
        assert fill_in.asked == ["the", "flutter"]
    finally:
        evaluating.close()
