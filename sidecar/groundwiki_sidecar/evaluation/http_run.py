"""The collection's queries asked of a real sidecar process over HTTP, as an agent asks them.

`groundwiki eval --http` serves the evaluation wiki with `groundwiki serve` on a free loopback
port, waits until every vector is computed (`/status`: nothing pending, every lane ready), and
posts each query to `/search`. Its hits are scored beside the harness's in-process ranking of
the same wiki: the two must agree (`parity`), or the harness is not measuring what users get.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

READY_TIMEOUT_S = 900.0  # a kept folder starts in seconds; a fresh one embeds on the way
REQUEST_TIMEOUT_S = 120.0  # quality, not speed: a busy machine must not drop a query
Progress = Callable[[str, int, int], None]


class HttpRunError(RuntimeError):
    """The sidecar process did not start or answer; the message ends with its log's tail."""


def http_rankings(
    config: Path,
    queries: Mapping[str, str],
    limit: int,
    progress: Progress | None = None,
) -> dict[str, tuple[str, ...]]:
    """Query ID -> the page keys `/search` answered, best first, from a sidecar serving
    `config` (a wiki whose indexes are up to date: it starts from them)."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        command = [
            sys.executable, "-m", "groundwiki", "-q", "-f", str(config),
            "serve", "--host", "127.0.0.1", "--port", str(port),
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_ready(base, process, log)
            found: dict[str, tuple[str, ...]] = {}
            for done, (query_id, text) in enumerate(queries.items(), start=1):
                answer = _post(base + "/search", {"query": text, "limit": limit}, process, log)
                found[query_id] = tuple(hit["key"] for hit in answer["hits"])
                if progress:
                    progress("queries over HTTP", done, len(queries))
            return found
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def parity(
    in_process: Mapping[str, tuple[str, ...]], over_http: Mapping[str, tuple[str, ...]], top: int
) -> dict[str, Any]:
    """How far the HTTP answers are from the harness's: queries whose first `top` hits are the
    same, in the same order, and the first query that differs (None: none)."""
    same = {q for q in in_process if in_process[q][:top] == over_http.get(q, ())[:top]}
    differing = [q for q in in_process if q not in same]
    return {
        "top": top,
        "queries": len(in_process),
        "identical": len(same),
        "first_difference": differing[0] if differing else None,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_ready(base: str, process: subprocess.Popen[bytes], log: Any) -> None:
    """Until the first sync is done, no vector is pending and every lane that ranks pages is
    `ok`: a query asked earlier would be answered without some lane, not as users are."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise HttpRunError(f"the sidecar exited with code {process.returncode}{_tail(log)}")
        try:
            status = _get(base + "/status")
        except (OSError, urllib.error.URLError):
            status = None
        if status is not None and _ready(status):
            return
        time.sleep(0.5)
    raise HttpRunError(f"the sidecar was not ready within {READY_TIMEOUT_S:.0f} s{_tail(log)}")


def _ready(status: Mapping[str, Any]) -> bool:
    lanes = status.get("lanes") or {}
    pages_ok = all(
        (lane.get("kinds", {}).get("page", {}).get("state", "unavailable")) in {"ok", "unavailable"}
        for lane in lanes.values()
    )
    return bool(lanes) and pages_ok and status.get("embedding_pending") == 0


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_S) as answer:
        found: dict[str, Any] = json.load(answer)
        return found


def _post(
    url: str, body: Mapping[str, Any], process: subprocess.Popen[bytes], log: Any
) -> dict[str, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as answer:
            found: dict[str, Any] = json.load(answer)
            return found
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:500]
        raise HttpRunError(f"POST {url}: HTTP {exc.code}: {detail}{_tail(log)}") from None
    except OSError as exc:
        state = "running" if process.poll() is None else f"exited ({process.returncode})"
        raise HttpRunError(f"POST {url}: {exc}; the sidecar is {state}{_tail(log)}") from None


def _tail(log: Any, lines: int = 20) -> str:
    log.flush()
    log.seek(0)
    text = log.read().splitlines()[-lines:]
    return ("\nthe sidecar's log ends:\n" + "\n".join(text)) if text else ""
