"""How soon a sidecar answers after its process starts, with no index yet: a real `groundwiki
serve` polled every 50 ms until its port opens (then every 0.5 s), and a real `groundwiki mcp` sent `initialize` over stdio.

Printed, in seconds from the process start: the first `/healthz` answer (the port open), the
first page search answered by the lexical lane, and the end of the first sync (every kind of
record indexed, `warming` false); the ratio of the first answer to the whole start, measured in
the same run; and the MCP session's `initialize` answer and its first search answered.

Targets (issue 29): HTTP and MCP answer within 2 s of the start on any wiki; the lexical page
lane within 30 s on the 6,571-note vault.

    .venv/bin/python bench/instant_start.py [--wiki mkdocs.yml] [--vault ../shared/vaults/obsidian-hub]
        [--until lexical]
"""

from __future__ import annotations

import argparse
import json
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from harness import RESULTS, free_port, machine_facts, stop_sidecar, write_results

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
POLL_S = 0.05  # until the port opens
READY_POLL_S = 0.5
TARGET_ANSWER_S = 2.0


def _ask(url: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def wiki_copy(work: Path, wiki: Path | None, vault: Path | None) -> Path:
    """A mkdocs.yml in `work` (its index lands there): the handbook copied, or the vault as
    its docs_dir, read in place and never written."""
    if vault is not None:
        config = {
            "site_name": vault.name,
            "docs_dir": str(vault.resolve()),
            "theme": {"name": "material"},
            "plugins": [{"groundwiki": {}}],
        }
        path = work / "mkdocs.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path
    source = (wiki or ROOT / "mkdocs.yml").resolve().parent
    for name in ("wiki", "raw-sources", "mkdocs.yml", "wiki.lock"):
        if (source / name).is_dir():
            shutil.copytree(source / name, work / name)
        elif (source / name).exists():
            shutil.copy2(source / name, work / name)
    return work / "mkdocs.yml"


def http_start(config: Path, limit_s: float, until: str = "ready") -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(config), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    found: dict[str, Any] = {"first_answer_s": None, "lexical_s": None, "ready_s": None}
    try:
        while time.monotonic() - started < limit_s:
            try:
                health = _ask(f"{base}/healthz")[1]
            except (urllib.error.URLError, OSError):
                time.sleep(POLL_S)
                continue
            now = time.monotonic() - started
            if found["first_answer_s"] is None:
                found["first_answer_s"] = round(now, 2)
            if found["lexical_s"] is None:
                code, answer = _ask(f"{base}/search", {"query": "plugin settings", "limit": 5})
                states = {lane["name"]: lane["state"] for lane in answer.get("lanes", [])}
                if code == 200 and states.get("lexical") == "ok":
                    found["lexical_s"] = round(time.monotonic() - started, 2)
                    if until == "lexical":
                        break
            if health["ok"] and not health.get("warming"):
                found["ready_s"] = round(now, 2)
                break
            # Once open, asked as a client would: each request takes the interpreter from the
            # start's thread, and polling every 50 ms slowed the start it measured.
            time.sleep(READY_POLL_S)
    finally:
        stop_sidecar(process)
    return found


def mcp_start(config: Path, limit_s: float) -> dict[str, Any]:
    started = time.monotonic()
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(config), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()

    def receive() -> dict[str, Any] | None:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], limit_s)
        return json.loads(process.stdout.readline()) if ready else None

    found: dict[str, Any] = {"initialize_s": None, "tools_list_s": None, "first_search_s": None}
    try:
        client = {"name": "bench", "version": "1"}
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        reply = receive()
        if reply is None or "result" not in reply:  # an error reply is no handshake
            found["initialize_error"] = reply
            return found
        found["initialize_s"] = round(time.monotonic() - started, 2)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # What a client asks next: the tools, answered by the SDK once it is imported.
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = receive()
        if listed is None or "result" not in listed:
            found["tools_list_error"] = listed
            return found
        found["tools_list_s"] = round(time.monotonic() - started, 2)
        for number in range(3, 10_000):
            arguments = {"query": "plugin settings", "limit": 5}
            params = {"name": "search_wiki", "arguments": arguments}
            send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
            answer = receive()
            if answer is None or time.monotonic() - started > limit_s:
                break
            if not answer.get("result", {}).get("isError"):
                found["first_search_s"] = round(time.monotonic() - started, 2)
                break
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wiki", type=Path, help="a mkdocs.yml (default: the handbook)")
    parser.add_argument("--vault", type=Path, help="an Obsidian vault, read in place")
    parser.add_argument("--limit", type=float, default=900.0, help="seconds per start at most")
    parser.add_argument(
        "--until",
        choices=("ready", "lexical"),
        default="ready",
        help="stop each HTTP start when every kind is indexed (default) or the lexical page "
        "lane answers (the vault's vectors take many minutes)",
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"machine": machine_facts()}
    with tempfile.TemporaryDirectory(prefix="instant-start-") as folder:
        work = Path(folder)
        for surface in ("http", "mcp"):
            where = work / surface
            where.mkdir()
            config = wiki_copy(where, args.wiki, args.vault)  # no index: a cold start each
            if surface == "http":
                results[surface] = http_start(config, args.limit, args.until)
            else:
                results[surface] = mcp_start(config, args.limit)
    http, mcp = results["http"], results["mcp"]
    if http["first_answer_s"] and http["ready_s"]:
        http["first_answer_over_ready"] = round(http["first_answer_s"] / http["ready_s"], 3)
    print(f"wiki: {args.vault or args.wiki or 'the handbook'}")
    print(
        f"http: first answer {http['first_answer_s']} s (target {TARGET_ANSWER_S} s), lexical page "
        f"lane {http['lexical_s']} s, every kind indexed {http['ready_s']} s "
        f"(first answer / whole start: {http.get('first_answer_over_ready')})"
    )
    print(
        f"mcp: initialize {mcp['initialize_s']} s, tools/list {mcp['tools_list_s']} s, "
        f"first search {mcp['first_search_s']} s"
    )
    name = "instant_start_vault.json" if args.vault else "instant_start.json"
    write_results(RESULTS / name, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
