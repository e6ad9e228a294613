"""`groundwiki mcp` beside a running `groundwiki serve` of the same wiki forwards its stdio
session to the sidecar's MCP endpoint instead of exiting: the tools, answers and scopes are the
sidecar's, a session is never forwarded in another scope than asked, and a sidecar that stops
ends the session with an error instead of a hang. Real processes, driven with the MCP SDK's
own clients over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from helpers.scoped import scoped_copy
from helpers.sidecar_helpers import wait_for
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import LATEST_MODERN_VERSION
from test_identity import new_tokens, set_sidecar, start, stop
from test_sidecar_api import ENV, _serve, _wiki, call
from test_sidecar_hostile_requests import StdioSession, _no_chroma
from test_sidecar_process import free_port

BIN = Path(sys.executable).parent
QUESTION = "why do wings flutter"


def _params(root: Path, *args: str, token: str = "") -> StdioServerParameters:
    return StdioServerParameters(
        command=str(BIN / "groundwiki"),
        args=["-f", str(root / "mkdocs.yml"), "mcp", *args],
        env={**ENV, "GROUNDWIKI_TOKEN": token},
    )


async def _over_stdio(params: StdioServerParameters, log: Path, calls: Any) -> Any:
    """`calls(session)` on a `groundwiki mcp` session; its stderr in `log`."""
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await calls(session)


async def _over_http(base: str, calls: Any) -> Any:
    async with (
        streamable_http_client(f"{base}/mcp/") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await calls(session)


async def _tools_and_hits(session: ClientSession) -> tuple[list[dict], list[dict]]:
    tools = [tool.model_dump() for tool in (await session.list_tools()).tools]
    found = await session.call_tool(
        "search_wiki", {"query": QUESTION, "detail": "full", "format": "json"}
    )
    assert not found.is_error, found.content
    return tools, found.structured_content["hits"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("forward")
    _wiki(root, _no_chroma())
    process, base = _serve(root)
    yield root, base, process.pid
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_mcp_beside_a_running_sidecar_forwards_to_it(served, tmp_path):
    root, base, pid = served
    log = tmp_path / "mcp.log"
    tools, hits = asyncio.run(_over_stdio(_params(root), log, _tools_and_hits))
    assert (tools, hits) == asyncio.run(_over_http(base, _tools_and_hits))
    assert {tool["name"] for tool in tools} >= {"search_wiki", "get_pages", "get_chunks"}
    status, answer = call(base, f"/search?q={urllib.parse.quote(QUESTION)}")
    assert status == 200 and hits == answer["hits"] and hits[0]["key"] == "wing"
    told = log.read_text()
    assert f"forwarding to the sidecar at {base} (pid {pid})" in told, told


def test_the_sidecars_errors_come_through_unchanged(served, tmp_path):
    root, base, _ = served

    async def invented(session: ClientSession) -> tuple[bool, str]:
        answer = await session.call_tool("get_chunks", {"ids": ["ch_invented0000001"]})
        return answer.is_error, answer.content[0].text

    forwarded = asyncio.run(_over_stdio(_params(root), tmp_path / "mcp.log", invented))
    assert forwarded == asyncio.run(_over_http(base, invented))
    assert forwarded[0] and "closest" in forwarded[1]


def test_a_session_of_the_per_request_protocol_is_forwarded_too(served):
    """No `initialize`: each request carries its version, which the sidecar routes by."""
    root, _, _ = served
    meta = {
        PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
        CLIENT_INFO_META_KEY: {"name": "test", "version": "1"},
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    session = StdioSession(root / "mkdocs.yml")
    try:
        discover = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": meta},
        }
        session.send(json.dumps(discover).encode())
        assert LATEST_MODERN_VERSION in session.reply()["result"]["supportedVersions"]
        search = {"name": "search_wiki", "arguments": {"query": QUESTION}, "_meta": meta}
        session.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search}
            ).encode()
        )
        answer = session.reply()
        assert (
            answer["id"] == 2 and answer["result"]["structuredContent"]["hits"][0]["key"] == "wing"
        )
    finally:
        session.close()


@pytest.fixture(scope="module")
def scoped(tmp_path_factory):
    root = tmp_path_factory.mktemp("forward-scoped")
    scoped_copy(root)
    set_sidecar(root, tokens="tokens.yml", **_no_chroma())
    tokens = new_tokens(root, ("alice", "bob"))
    process, base = start(root)
    yield root, base, tokens
    stop(process)


async def _views(session: ClientSession) -> dict[str, Any]:
    scratch = await session.call_tool("get_pages", {"ids": ["scratch"]})
    rollback = await session.call_tool("get_pages", {"ids": ["rollback"]})
    found = await session.call_tool("search_wiki", {"query": "marmalade rollback tangerine"})
    return {
        "scratch": not scratch.is_error,
        "rollback": not rollback.is_error,
        "hits": json.dumps(found.structured_content["hits"]).lower(),
    }


@pytest.mark.parametrize("user", ["alice", "bob"])
def test_a_forwarded_session_answers_in_its_tokens_scope(scoped, tmp_path, user):
    root, _, tokens = scoped
    log = tmp_path / "mcp.log"
    params = _params(root, "--user", user, token=tokens[user])
    seen = asyncio.run(_over_stdio(params, log, _views))
    assert "in the user:" + user + " scope" in log.read_text()
    assert seen["scratch"] == (user == "alice") and seen["rollback"] == (user == "bob")
    assert ("tangerine" in seen["hits"]) == (user == "alice")
    assert ("marmalade" in seen["hits"]) == (user == "bob")
    assert tokens[user] not in log.read_text()


def _refused(root: Path, *args: str, token: str = "") -> str:
    done = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "mcp", *args],
        input="", capture_output=True, text=True, timeout=60,
        env={**ENV, "GROUNDWIKI_TOKEN": token},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("groundwiki:")]
    return line


def test_a_session_without_the_token_a_scoped_sidecar_needs_is_refused(scoped):
    root, base, tokens = scoped
    line = _refused(root, "--user", "alice")
    assert f"the sidecar at {base}" in line and "requires a token" in line
    assert "set GROUNDWIKI_TOKEN to alice's token" in line
    other = _refused(root, "--user", "bob", token=tokens["alice"])
    assert "user:alice scope, not user:bob" in other and "bob's token" in other
    assert tokens["alice"] not in other
    assert "refused the token" in _refused(root, token="not-a-token")


def test_a_sidecar_that_answers_in_another_scope_is_refused(served):
    root, _, _ = served  # no tokens, started without --user: the shared scope
    line = _refused(root, "--user", "alice")
    assert "answers in the global scope, not user:alice" in line
    assert "groundwiki serve --user alice" in line


def test_a_sidecar_just_started_is_waited_for_and_its_stop_ends_the_session(tmp_path):
    _wiki(tmp_path, _no_chroma())
    port = str(free_port())
    sidecar = subprocess.Popen(
        [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "serve", "--port", port],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip
    try:
        # The record is written once the sidecar holds the index folder, before it listens.
        wait_for((tmp_path / ".groundwiki/listening.json").exists, 60, "the record")
        log = tmp_path / "mcp.log"

        async def calls(session: ClientSession) -> tuple[str, str]:
            found = await session.call_tool("search_wiki", {"query": QUESTION})
            sidecar.send_signal(signal.SIGKILL)
            sidecar.wait(timeout=30)
            with pytest.raises(MCPError) as stopped:
                await session.call_tool("search_wiki", {"query": QUESTION})
            return found.structured_content["hits"][0]["key"], str(stopped.value)

        began = time.monotonic()
        top, error = asyncio.run(_over_stdio(_params(tmp_path), log, calls))
        assert top == "wing"
        assert "stopped answering" in error and "start groundwiki mcp again" in error
        assert time.monotonic() - began < 90
        assert "forwarding to the sidecar" in log.read_text()
    finally:
        if sidecar.poll() is None:
            sidecar.kill()
            sidecar.wait(timeout=30)


def _sidecar(root: Path, port: int) -> subprocess.Popen:
    """`groundwiki serve` on `port`, once its MCP endpoint serves."""
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip

    def serving() -> bool:
        assert process.poll() is None, "the sidecar exited"
        try:
            return call(f"http://127.0.0.1:{port}", "/status")[1]["tokens"]["state"] != "starting"
        except OSError:  # not listening yet
            return False

    wait_for(serving, 120, "the sidecar")
    return process


def test_a_restarted_sidecar_ends_the_session_it_no_longer_knows(tmp_path):
    _wiki(tmp_path, _no_chroma())
    port = free_port()
    sidecars = [_sidecar(tmp_path, port)]
    log = tmp_path / "mcp.log"

    async def calls(session: ClientSession) -> str:
        await session.call_tool("search_wiki", {"query": QUESTION})
        sidecars[0].kill()
        sidecars[0].wait(timeout=30)
        sidecars.append(await asyncio.to_thread(_sidecar, tmp_path, port))
        with pytest.raises(MCPError) as lost:
            await session.call_tool("search_wiki", {"query": QUESTION})
        return str(lost.value)

    try:
        assert asyncio.run(_over_stdio(_params(tmp_path), log, calls)) == "Session not found"
        told = log.read_text()
        assert "no longer knows this session (it was restarted)" in told, told
    finally:
        for sidecar in sidecars:
            sidecar.kill()
            sidecar.wait(timeout=30)


def test_a_sidecar_not_listening_yet_is_waited_for_until_it_stops(tmp_path):
    """This process stands where `serve` is before its port opens: it holds the index folder
    and has recorded where it will listen. The session waits, and says so; when the record
    goes (the sidecar stopped), it says that in one line."""
    from groundwiki_sidecar.base import listening
    from groundwiki_sidecar.base.claim import IndexClaim

    _wiki(tmp_path, _no_chroma())
    index = tmp_path / ".groundwiki"
    claim = IndexClaim.take(index)
    listening.record(index, "127.0.0.1", free_port())
    mcp = subprocess.Popen(
        [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=ENV,
    )  # fmt: skip
    try:
        assert mcp.stderr is not None
        waiting = mcp.stderr.readline()
        assert "which is starting: its port is not open yet" in waiting, waiting
        assert f"pid {os.getpid()}" in waiting and "up to 120 s" in waiting
        listening.forget(index)
        assert mcp.wait(timeout=30) == 2
        told = mcp.stderr.read()
        assert "stopped while starting" in told and "groundwiki mcp again" in told
    finally:
        if mcp.poll() is None:
            mcp.kill()
        claim.release()


def test_no_sidecar_record_keeps_the_busy_error(tmp_path):
    """A folder held without a record (an `index` run holds it so) is refused as before."""
    from groundwiki_sidecar.base.claim import IndexClaim

    _wiki(tmp_path, _no_chroma())
    index = tmp_path / ".groundwiki"
    claim = IndexClaim.take(index)
    try:
        line = _refused(tmp_path)
        assert "is in use by pid" in line and "/mcp/" in line
    finally:
        claim.release()
    assert not (index / "listening.json").exists()
