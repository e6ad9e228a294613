"""The sidecar as real processes: `groundwiki serve` on 127.0.0.1, kill -9 and restart, and
the vectors on a real Chroma server (`chroma run`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from groundwiki_sidecar.embedding.choice import make_embedder
from groundwiki_sidecar.index.chroma_index import VectorIndex
from groundwiki_sidecar.index.state_store import Store
from groundwiki_sidecar.index.whoosh_index import LexicalIndex
from helpers.sidecar_helpers import converged, expected_ids, expected_passages, small_wiki, wait_for
from helpers.wikis import page, write_wiki

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str, token: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def set_sidecar(root: Path, **settings) -> None:
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["plugins"][0]["groundwiki"]["sidecar"] = {"debounce_s": 0.1, **settings}
    config.write_text(yaml.safe_dump(data))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One sidecar process for the module: its tests add a page at most, which the others
    never count."""
    root = tmp_path_factory.mktemp("served")
    small_wiki(root)
    port = free_port()
    set_sidecar(root, port=port, token="s3cret")
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "serve"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return get(f"{base}/healthz")[1]["ok"]
        except (urllib.error.URLError, OSError):
            assert process.poll() is None, process.stdout.read()
            return False

    wait_for(ready, timeout=60, what="the sidecar to answer")
    yield base, root, process
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_serve_reports_status_and_follows_edits(server):
    base, root, _ = server
    wait_for(
        lambda: get(f"{base}/status", "s3cret")[1]["lanes"]["semantic"]["state"] == "ok",
        timeout=120,
        what="the semantic lane",
    )
    status = get(f"{base}/status", "s3cret")[1]
    assert status["pages"] == 3 and status["watcher"] == "watching"
    assert status["model"].startswith("all-MiniLM-L6-v2/onnx-fold-fuse-dynq8pc-")  # int8 kernels
    (root / "wiki/nozzle.md").write_text(page(title="Nozzle", summary="Nozzle flow."))
    wait_for(lambda: get(f"{base}/status", "s3cret")[1]["pages"] == 4, what="the new page")
    assert get(f"{base}/status", "s3cret")[1]["generation"] >= 2
    shown = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "status"],
        capture_output=True, text=True, env={**ENV, "GROUNDWIKI_TOKEN": ""}, timeout=60,
    )  # fmt: skip
    assert "running at" in shown.stdout and "lane lexical: ok" in shown.stdout


def test_a_token_guards_everything_but_healthz(server):
    base, _, _ = server
    assert get(f"{base}/status")[0] == 401
    assert get(f"{base}/status")[1]["error"] == "unauthorized"
    assert get(f"{base}/status", "wrong")[0] == 401
    assert get(f"{base}/healthz")[0] == 200


def test_binding_beyond_loopback_needs_a_token(tmp_path):
    small_wiki(tmp_path)
    done = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "serve", "--host", "0.0.0.0"],
        capture_output=True, text=True, env={**ENV, "GROUNDWIKI_TOKEN": ""}, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "without a token" in done.stderr


def test_status_without_a_running_sidecar_says_so(tmp_path):
    small_wiki(tmp_path)
    set_sidecar(tmp_path, port=free_port())
    shown = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "status"],
        capture_output=True, text=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0
    assert "not running" in shown.stdout and "none yet" in shown.stdout


def _bigger_wiki(root: Path) -> None:
    sentence = "Pressure rises across the shock while the flow slows and the entropy grows. "
    sources = {
        f"run-{n:02}.md": "".join(
            f"## Part {p}\n\n{sentence * 4}Run {n} part {p}.\n\n" for p in range(4)
        )
        for n in range(30)
    }
    pages = {
        f"p{n:03}.md": page(title=f"Page {n}", summary=f"About run {n % 30}, page {n}.")
        for n in range(150)
    }
    write_wiki(root, pages, sources, {"sidecar": {"debounce_s": 0.1}})


def _progress(db: Path) -> tuple[int, int] | None:
    """(vectors stored, vectors pending) as a killed run left them, read-only; None before any."""
    if not db.exists():
        return None
    import sqlite3

    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            done, pending = con.execute(
                "SELECT COUNT(vector_hash), COUNT(*) - COUNT(vector_hash) FROM items"
            ).fetchone()
    except sqlite3.Error:
        return None  # the schema is being created
    return done, pending


def test_kill_9_at_any_moment_then_restart_converges(tmp_path):
    _bigger_wiki(tmp_path)
    db = tmp_path / ".groundwiki/store.sqlite"
    command = [str(BIN / "groundwiki"), "-q", "-f", str(tmp_path / "mkdocs.yml"), "index"]
    # First while the first batch is being indexed (the store exists, the manifest is still
    # empty), then in the middle of embedding (some vectors stored, some pending).
    moments = [
        lambda: db.exists(),
        lambda: (p := _progress(db)) is not None and p[0] > 0 and p[1] > 0,
    ]
    for moment in moments:
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV
        )
        wait_for(moment, timeout=120, what="the moment to kill")
        process.send_signal(signal.SIGKILL)
        process.wait()
        left = _progress(db)
        assert left is None or left[1] > 0 or left == (0, 0)  # killed before the work was done
    finished = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=600)
    assert finished.returncode == 0, finished.stderr
    sidecar = load_sidecar(tmp_path / "mkdocs.yml")
    pages, chunks = expected_ids(sidecar)
    lexical = LexicalIndex(sidecar.index_dir / "whoosh")
    assert lexical.ids() == (pages, chunks)
    passages = expected_passages(sidecar)
    assert lexical.passage_ids() == passages
    counts = {"pages": len(pages), "chunks": len(chunks), "passages": len(passages)}
    assert lexical.doc_counts() == counts  # no duplicates
    settings = sidecar.settings
    identity = make_embedder(settings.embedding, passage_tokens=settings.passage_tokens).identity
    vectors = VectorIndex(sidecar.index_dir / "chroma", identity)
    assert vectors.ids("page") == pages and vectors.ids("chunk") == chunks
    assert vectors.count("page") == len(pages) and vectors.count("chunk") == len(chunks)
    store = Store(sidecar.index_dir / "store.sqlite")
    assert store.pending_count() == 0
    assert store.counts()["page"] == len(pages) and store.counts()["chunk"] == len(chunks)


@pytest.fixture
def chroma_server(tmp_path):
    port = free_port()
    process = subprocess.Popen(
        [str(BIN / "chroma"), "run", "--path", str(tmp_path / "chroma-server"), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip

    def up() -> bool:
        try:
            return get(f"http://127.0.0.1:{port}/api/v2/heartbeat")[0] == 200
        except (urllib.error.URLError, OSError):
            assert process.poll() is None, "chroma run exited"
            return False

    wait_for(up, timeout=60, what="chroma run")
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=30)


def test_vectors_can_live_on_a_chroma_server(tmp_path, chroma_server):
    import chromadb

    sidecar = small_wiki(tmp_path / "wiki-root", {"chroma_url": chroma_server})
    service = SidecarService(sidecar)
    service.start(watch=False)
    try:
        assert service.wait_embedded(120)
        assert converged(service, sidecar)
        assert not (sidecar.index_dir / "chroma").exists()  # nothing on local disk
        port = int(chroma_server.rsplit(":", 1)[1])
        remote = chromadb.HttpClient(host="127.0.0.1", port=port)
        assert remote.get_collection("groundwiki-pages").count() == 3
    finally:
        service.stop()


def test_an_unreachable_chroma_server_leaves_the_lexical_lane_working(tmp_path):
    sidecar = small_wiki(tmp_path, {"chroma_url": f"http://127.0.0.1:{free_port()}"})
    service = SidecarService(sidecar)
    service.start(watch=False)
    try:
        lanes = service.status().lanes
        assert lanes["lexical"]["state"] == "ok"
        assert lanes["semantic"]["state"] == "unavailable"
        assert "cannot open Chroma at http://127.0.0.1:" in lanes["semantic"]["reason"]
    finally:
        service.stop()
