"""/status per lane and per kind, from the state function the searches ask, over a real sidecar
with the embedding model (Whoosh and Chroma on disk) and chunk vectors turned off."""

from __future__ import annotations

import threading

import jsonschema
import pytest
from groundwiki.cli.sidecar_commands import _print_status
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.openapi import resolved
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from helpers.sidecar_helpers import small_wiki
from starlette.testclient import TestClient

OFF = "chunk vectors are off (sidecar.embed_chunks)"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("status")
    running = SidecarService(small_wiki(root, {"embed_chunks": False}))
    running.start(watch=False)
    assert running.wait_embedded(120)
    yield running
    running.stop()


def test_status_says_per_kind_what_a_search_of_that_kind_finds(service):
    ops = Operations(service)
    try:
        status = ops.status()
        chunk_runs = {run["name"]: run for run in ops.search_chunks("wing flutters", 5)["lanes"]}
        page_runs = {run["name"]: run for run in ops.search("wing flutter", 5)["lanes"]}
    finally:
        ops.close()
    semantic = status["lanes"]["semantic"]
    assert (semantic["state"], semantic["reason"]) == ("ok", "")  # the lane as a whole
    assert semantic["kinds"]["page"] == {"state": "ok", "reason": ""}
    assert semantic["kinds"]["chunk"] == {"state": "unavailable", "reason": OFF}
    assert (chunk_runs["semantic"]["state"], chunk_runs["semantic"]["reason"]) == (
        "unavailable",
        OFF,
    )
    assert page_runs["semantic"]["state"] == "ok"
    for name, lane in status["lanes"].items():  # each lane reports the kinds it ranks
        assert set(lane["kinds"]) == ({"page", "chunk"} if name in chunk_runs else {"page"})


def test_the_status_answer_is_as_documented(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    document = resolved(client.get("/openapi.json").json())
    answer = client.get("/status").json()
    schema = document["paths"]["/status"]["get"]["responses"]["200"]["content"]
    jsonschema.validate(answer, schema["application/json"]["schema"])
    lane = schema["application/json"]["schema"]["properties"]["lanes"]["properties"]["semantic"]
    assert set(lane["properties"]["kinds"]["properties"]) == {"page", "chunk"}


def test_groundwiki_status_shows_a_kind_the_lane_answers_otherwise(service, capsys):
    _print_status(service.status().to_json(), "in this process")
    lines = capsys.readouterr().out.splitlines()
    semantic = lines.index("lane semantic: ok")
    assert lines[semantic + 1] == f"  chunk searches: unavailable ({OFF})"
    assert (
        "lane lexical: ok" in lines and not lines[lines.index("lane lexical: ok") + 1][0].isspace()
    )


def test_a_status_call_counts_the_pending_vectors_at_most_once_per_kind(service):
    """/status is answered on the event loop, and each count scans the store under its lock."""
    store = service.indexer.store
    asking = threading.current_thread()
    counts: list[str] = []

    def seen(sql: str) -> None:
        # Only this thread's statements: the embedding thread may count its own work meanwhile.
        if threading.current_thread() is asking and "vector_hash != embed_hash" in sql:
            counts.append(sql)

    store._db.set_trace_callback(seen)
    try:
        service.status()
        service.status()  # nothing written since: no count is made again
    finally:
        store._db.set_trace_callback(None)
    assert len(counts) == len(set(counts)) <= 2, counts
