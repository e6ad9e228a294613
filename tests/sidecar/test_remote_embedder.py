"""The sidecar embedding through an OpenAI-compatible server: a real stand-in server process on
127.0.0.1 (tests/helpers/embedding_server.py), the sidecar's real indexer, Whoosh and Chroma on disk.
Batching, errors (retried and refused), and restarts of either side that resume."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from groundwiki_sidecar.index.chroma_index import vector_id
from helpers.embedding_server import MODEL, embed
from helpers.sidecar_helpers import wait_for
from helpers.wikis import page, write_wiki
from test_sidecar_process import BIN, ENV, free_port, get

HERE = Path(__file__).parent


class StandIn:
    """The stand-in server as a process that can be stopped and started on the same port."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.control = folder / "control.json"
        self.log = folder / "requests.jsonl"
        self.control.write_text("{}")
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE.parent / "helpers" / "embedding_server.py"), str(self.port),
             str(self.control), str(self.log)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def steer(self, **control) -> None:
        self.control.write_text(json.dumps(control))

    def requests(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def stand_in(tmp_path):
    server = StandIn(tmp_path)
    server.start()
    yield server
    server.stop()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def remote_wiki(root: Path, server: StandIn, pages: int = 12, **settings) -> Path:
    files = {
        "index.md": page(kind="overview", title="Home", summary="Start here.", body="# Home\n"),
        "wing.md": page(
            title="Wing flutter",
            summary="Why wings flutter at speed.",
            body="# Wing flutter\n\nFlutter grows with speed. <!-- from: raw-sources/notes.md#L3 -->\n",
        ),
    }
    for number in range(pages):
        files[f"topic-{number}.md"] = page(
            title=f"Topic {number}",
            summary=f"Notes on subject number {number} and its boundary layer.",
            body=f"# Topic {number}\n\nShock {number} forms ahead of blunt body {number}.\n",
        )
    sidecar = {
        "debounce_s": 0.1,
        "embedding": f"openai:{MODEL}",
        "embedding_url": server.url,
        **settings,
    }
    notes = "# Notes\n\nThe wing flutters at high speed.\n\nBoundary layers thicken downstream.\n"
    write_wiki(root, files, {"notes.md": notes}, {"sidecar": sidecar})
    return root / "mkdocs.yml"


def test_batches_go_to_the_server_and_their_vectors_land_in_order(tmp_path, stand_in):
    config = remote_wiki(tmp_path, stand_in, remote_batch=3, remote_concurrency=2)
    service = SidecarService(load_sidecar(config))
    try:
        service.start(watch=False)
        assert service.wait_embedded(60)
        indexer = service.indexer
        snapshot = indexer.snapshot
        answered = [r for r in stand_in.requests() if r["status"] == 200]
        assert answered and all(r["inputs"] <= 3 for r in answered)
        assert max(r["inputs"] for r in answered) == 3
        # Every text was sent once (the start's one-word check aside), and came back as the
        # server's own vector for it: the server answers each batch in reverse order.
        sent = [t for r in answered[1:] for t in r["texts"]]
        assert len(sent) == len(set(sent))
        wing = snapshot.pages["wing"]
        found = indexer.vectors.collection("page").get(
            ids=[vector_id("wing", wing.embed_hash)], include=["embeddings"]
        )
        stored = np.asarray(found["embeddings"][0])
        assert np.allclose(stored, embed(wing.embed_text), atol=1e-5)
        assert digest(wing.embed_text) in sent
        status = service.status()
        assert status.model == f"openai/{MODEL}"
        assert status.embedding_pending == 0 and status.embedding_eta_s == 0
        assert status.lanes["semantic"]["state"] == "ok"
    finally:
        service.stop()


def test_busy_and_failing_answers_are_retried_and_a_refusal_is_reported(tmp_path, stand_in):
    config = remote_wiki(tmp_path, stand_in, pages=4, remote_batch=4)
    stand_in.steer(fail=[[503, 2], [500, 1], [429, 1]], retry_after="0")
    service = SidecarService(load_sidecar(config))
    try:
        service.start(watch=False)
        assert service.wait_embedded(60)
        statuses = [r["status"] for r in stand_in.requests()]
        assert statuses[:4] == [503, 503, 500, 429] and set(statuses[4:]) == {200}
        assert service.indexer.embedder.retried == 4
        assert service.status().embedding["state"] == "ok"
        # A server that refuses the request itself (here: a batch over its limit) is not asked
        # again and again: the embedding state says what it answered; the lexical lane works.
        stand_in.steer(max_batch=1)
        (tmp_path / "wiki/extra.md").write_text(
            page(title="Extra", summary="One more page.", body="# Extra\n\nOne. Two.\n")
        )
        (tmp_path / "wiki/more.md").write_text(
            page(title="More", summary="And another.", body="# More\n\nThree.\n")
        )
        service.sync("edit")
        service.indexer.embedder.retried = 0
        with pytest.raises(Exception, match="HTTP 413 batch too large"):
            service.indexer.embed_pending()
        assert service.indexer.embedder.retried == 0
    finally:
        service.stop()


def test_a_wrong_model_name_turns_the_semantic_lane_off_with_the_servers_words(tmp_path, stand_in):
    config = remote_wiki(tmp_path, stand_in, pages=1)
    text = config.read_text().replace(f"openai:{MODEL}", "openai:no-such-model")
    config.write_text(text)
    service = SidecarService(load_sidecar(config))
    try:
        service.start(watch=False)
        lane = service.status().lanes["semantic"]
        assert lane["state"] == "unavailable"
        assert "model 'no-such-model' not found" in lane["reason"]
        assert service.status().lanes["lexical"]["state"] == "ok"
    finally:
        service.stop()


def test_a_server_restart_mid_way_is_ridden_out(tmp_path, stand_in):
    config = remote_wiki(tmp_path, stand_in, pages=16, remote_batch=1, remote_concurrency=1)
    stand_in.steer(delay_s=0.05)
    service = SidecarService(load_sidecar(config))
    try:
        service.start(watch=False)
        wait_for(lambda: service.status().page_vectors >= 3, 60, "some vectors")
        stand_in.stop()  # refused connections: the embedder backs off and tries again
        time.sleep(1.0)
        stand_in.start()
        assert service.wait_embedded(120)
        status = service.status()
        assert status.embedding["state"] == "ok"
        assert status.page_vectors == status.pages
    finally:
        service.stop()


def test_a_sidecar_restart_resumes_where_it_stopped(tmp_path, stand_in):
    config = remote_wiki(tmp_path, stand_in, pages=24, remote_batch=1, remote_concurrency=1)
    stand_in.steer(delay_s=0.15)
    port = free_port()
    text = config.read_text().replace("debounce_s: 0.1", f"debounce_s: 0.1\n      port: {port}")
    config.write_text(text)
    base = f"http://127.0.0.1:{port}"

    def serve() -> subprocess.Popen:
        return subprocess.Popen(
            [str(BIN / "groundwiki"), "-f", str(config), "serve"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
        )  # fmt: skip

    def status() -> dict:
        try:
            return get(f"{base}/status")[1]
        except OSError:
            return {}

    process = serve()
    try:

        def midway() -> bool:  # some vectors in, some pending: the kill lands mid-embedding
            now = status()
            return now.get("page_vectors", 0) >= 4 and now.get("embedding_pending", 0) > 0

        wait_for(midway, 90, "the first vectors")
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        sent_before = {t for r in stand_in.requests() if r["status"] == 200 for t in r["texts"]}
        done_before = len(stand_in.requests())
        process = serve()
        # `warming` first: while the start runs, nothing is counted yet, so nothing is pending.
        done = lambda: status().get("warming") is False and status().get("embedding_pending") == 0  # noqa: E731
        wait_for(done, 120, "every vector")
        final = status()
        assert final["page_vectors"] == final["pages"]
        # After the restart only what was missing is sent: at most the one text in flight at the
        # kill (computed, never stored) is sent again, beside the start's one-word check.
        after = [r for r in stand_in.requests()[done_before:] if r["status"] == 200]
        again = [t for r in after[1:] for t in r["texts"] if t in sent_before]
        assert len(again) <= 1
        assert sum(r["inputs"] for r in after[1:]) < final["pages"] + final["chunks"]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
