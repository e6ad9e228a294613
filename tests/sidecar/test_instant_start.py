"""A sidecar answers within a second or two of its start, whatever the wiki: the port opens
before the libraries, the model and the first sync, and what it says meanwhile is true (real
`groundwiki serve` processes; MCP's operations while the service starts)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

import jsonschema
import pytest
from groundwiki_sidecar.api import starting
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.parameters import OperationError
from groundwiki_sidecar.api.response_schemas import HEALTH, status_response
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.startup import Startup
from helpers.sidecar_helpers import small_wiki, wait_for
from test_sidecar_process import BIN, ENV, free_port, set_sidecar


def _ask(url: str, body: dict | None = None, host: str | None = None) -> tuple[int, dict, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if host:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc), exc.headers


def test_the_port_opens_before_the_indexes_and_says_how_far_the_start_is(tmp_path):
    small_wiki(tmp_path)
    port = free_port()
    set_sidecar(tmp_path, port=port)
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "serve"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip
    try:
        first: list[dict] = []

        def answers() -> bool:
            assert process.poll() is None, process.stdout.read()
            try:
                first.append(_ask(f"{base}/healthz")[1])
            except (urllib.error.URLError, OSError):
                return False
            return True

        wait_for(answers, timeout=60, what="the open port")
        # The libraries and the model take seconds to load; the port is open before them.
        health = first[0]
        jsonschema.validate(health, HEALTH)
        assert health["ok"] is False and health["warming"] is True
        assert health["starting"]["stage"] == "loading"
        code, status, _ = _ask(f"{base}/status")
        assert code == 200 and status["warming"] is True
        jsonschema.validate(status, status_response())
        assert {lane["state"] for lane in status["lanes"].values()} <= {"warming", "ok"}
        code, refused, headers = _ask(f"{base}/search", {"query": "flutter"})
        if code == 503:  # the pages are not in yet: say so, and when to ask again
            assert refused["error"] == "not_ready" and "starting" in refused["message"]
            assert int(headers["Retry-After"]) > 0
        # The guards stand in front of the start too.
        assert _ask(f"{base}/healthz", host="evil.example")[0] == 421

        def ready() -> bool:
            found = _ask(f"{base}/healthz")[1]
            return found["ok"] and not found["warming"]

        wait_for(ready, timeout=120, what="the first sync")
        code, status, _ = _ask(f"{base}/status")
        assert status["warming"] is False and status["starting"] is None
        jsonschema.validate(status, status_response())
        hits = _ask(f"{base}/search", {"query": "why do wings flutter"})[1]["hits"]
        assert hits[0]["key"] == "wing"
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    # The log says each stage of the start, though it is no terminal.
    assert "starting: reading the page files" in output
    assert "pages indexed" in output and "indexes ready in" in output


def test_a_second_sidecar_on_the_index_is_refused_before_its_port_opens(tmp_path):
    small_wiki(tmp_path)
    port = free_port()
    set_sidecar(tmp_path, port=port)
    command = [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "serve"]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        wait_for(lambda: (tmp_path / ".groundwiki/listening.json").exists(), 60, "the first")
        second = subprocess.run(
            [*command, "--port", str(free_port())], capture_output=True, text=True, env=ENV,
            timeout=60,
        )  # fmt: skip
        assert second.returncode == 2 and "is in use by pid" in second.stderr
        # Refused before its port opened: it never said it was serving.
        assert "serving http" not in second.stderr, second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(timeout=60)


def test_a_tool_called_during_the_start_waits_then_says_what_the_start_is_doing(
    tmp_path, monkeypatch
):
    # What `groundwiki mcp` hands its tools before the service runs. (A real MCP client over
    # stdio calling every tool right after `initialize`: test_sidecar_api.)
    monkeypatch.setattr(starting, "WAIT_S", 0.3)
    startup = Startup(quiet=True)
    startup.update("pages", 1, 4)
    ops = starting.StartingOperations(startup, None)
    early = ops.viewing(None)
    assert time.time() - startup.started >= 0.3  # it waited for the start before refusing
    again = time.monotonic()
    ops.viewing(None)
    assert time.monotonic() - again < 0.25  # the wait is counted from the start, not per call
    for call in (lambda: early.search("flutter", 5), lambda: early.service.audit):
        with pytest.raises(OperationError) as refused:
            call()
        assert refused.value.status == 503 and refused.value.code == "not_ready"
        assert "reading the page files (25%)" in refused.value.message
    # Once the service runs, the calls are its own, with no wait.
    service = SidecarService(small_wiki(tmp_path), embed=False)
    try:
        service.start(watch=False)
        ops.ready = Operations(service)
        startup.running()
        assert [hit["key"] for hit in ops.viewing(None).search("flutter", 5)["hits"]] == ["wing"]
    finally:
        ops.ready.close()
        service.stop()
