"""Identity: a user's token, never a parameter, decides whose scope an answer comes from.
A real `groundwiki serve` of the scoped example wiki on 127.0.0.1, over HTTP and MCP."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import httpx
import pytest
import yaml
from helpers.scoped import scoped_copy
from test_sidecar_process import free_port, get

pytestmark = pytest.mark.sidecar

BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def groundwiki(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), *args],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip


def new_tokens(root: Path, users: tuple[str, ...]) -> dict[str, str]:
    """A token for each user, made as a user makes one (`groundwiki token new`)."""
    tokens = {}
    for user in users:
        made = groundwiki(root, "token", "new", user)
        assert made.returncode == 0, made.stderr
        tokens[user] = made.stdout.strip().splitlines()[-1]
    return tokens


def set_sidecar(root: Path, **settings: object) -> None:
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["plugins"] = [{"groundwiki": {"sidecar": {"debounce_s": 0.1, **settings}}}]
    config.write_text(yaml.safe_dump(data))


def post(url: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def start(root: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            if get(f"{base}/healthz")[1].get("ok"):
                return process, base
        except (urllib.error.URLError, OSError):
            pass
        asyncio.run(asyncio.sleep(0.1))
    raise AssertionError("the sidecar did not start")


def stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    out, _ = process.communicate(timeout=60)
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("identity")
    scoped_copy(root)
    set_sidecar(root, tokens="team-tokens.yml")
    tokens = new_tokens(root, ("alice", "bob"))
    process, base = start(root)
    yield root, base, tokens
    log = stop(process)
    for token in tokens.values():  # neither a token nor its hash is ever logged
        assert token not in log
    for line in (root / "team-tokens.yml").read_text().splitlines():
        assert line.split(": ")[1] not in log


def test_token_new_keeps_only_the_hash_in_a_private_file(served):
    root, _, tokens = served
    path = root / "team-tokens.yml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text.startswith("alice: sha256:") and "\nbob: sha256:" in text
    assert not any(token in text for token in tokens.values())
    again = groundwiki(root, "token", "new", "alice")
    assert again.returncode == 2 and "groundwiki token revoke alice" in again.stderr


def test_each_token_answers_in_its_users_scope(served):
    _, base, tokens = served
    assert get(f"{base}/status", tokens["alice"])[1]["scope"] == "user:alice"
    assert get(f"{base}/status", tokens["bob"])[1]["scope"] == "user:bob"
    assert get(f"{base}/status")[0] == 401
    assert get(f"{base}/status", "not-a-token")[0] == 401
    assert get(f"{base}/healthz")[0] == 200  # the liveness probe stays public


def test_alices_token_cannot_reach_bobs_pages(served):
    _, base, tokens = served
    alice = tokens["alice"]
    status, answer = post(f"{base}/pages", {"ids": ["scratch"], "include_body": True}, alice)
    assert status == 200 and "quince" in answer["pages"][0]["body"]
    status, answer = post(f"{base}/pages", {"ids": ["rollback"]}, alice)
    assert status == 404 and "rollback" not in json.dumps(answer["missing"][0]["closest"])
    assert get(f"{base}/pages/rollback/links", alice)[0] == 404
    found = get(f"{base}/search?q=marmalade+rollback&explain=true", alice)[1]
    assert "marmalade" not in json.dumps(found["hits"]).lower()
    mine = get(f"{base}/search?q=tangerine&explain=true", alice)[1]
    assert [hit["key"] for hit in mine["hits"]][:1] == ["deploy"]
    theirs = get(f"{base}/search?q=tangerine&explain=true", tokens["bob"])[1]
    assert "tangerine" not in json.dumps(theirs["hits"]).lower()


def test_mcp_over_http_takes_the_scope_from_the_token_not_an_argument(served):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    _, base, tokens = served

    async def call(token: str) -> tuple[list, str]:
        client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with (
            client,
            streamable_http_client(f"{base}/mcp/", http_client=client) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = (await session.list_tools()).tools
            result = await session.call_tool("get_pages", {"ids": ["deploy"], "include_body": True})
            return tools, json.dumps(result.structured_content or {})

    tools, alice = asyncio.run(call(tokens["alice"]))
    for tool in tools:  # nothing an agent could set to pick another user's scope
        names = set(tool.input_schema.get("properties", {}))
        assert not names & {"user", "scope", "ctx"}, (tool.name, names)
    assert "tangerine" in alice
    _, bob = asyncio.run(call(tokens["bob"]))
    assert "tangerine" not in bob and "Releases go out" in bob


def test_user_on_loopback_without_tokens_serves_that_user(tmp_path):
    scoped_copy(tmp_path)
    set_sidecar(tmp_path)
    process, base = start(tmp_path, "--user", "alice")
    try:
        assert get(f"{base}/status")[1]["scope"] == "user:alice"
        status, _ = post(f"{base}/pages", {"ids": ["scratch"]}, None)
        assert status == 200
    finally:
        stop(process)


def test_tokens_written_into_mkdocs_yml_are_refused(tmp_path):
    scoped_copy(tmp_path)
    set_sidecar(tmp_path, tokens="alice: sha256:" + "0" * 64)
    done = groundwiki(tmp_path, "serve")
    assert done.returncode != 0
    assert "never hold them" in done.stderr and "sidecar.tokens" in done.stderr
    assert "0" * 64 not in done.stderr
    set_sidecar(tmp_path, tokens={"alice": "sha256:" + "0" * 64})
    done = groundwiki(tmp_path, "serve")
    assert done.returncode != 0 and "tokens" in done.stderr and "0" * 64 not in done.stderr


def test_a_bad_tokens_file_names_its_line_and_the_fix(tmp_path):
    scoped_copy(tmp_path)
    set_sidecar(tmp_path, tokens="tokens.yml")
    (tmp_path / "tokens.yml").write_text("alice: sha256:" + "0" * 64 + "\nbob: hunter2\n")
    done = groundwiki(tmp_path, "serve")
    assert done.returncode != 0
    assert "tokens.yml:2" in done.stderr and "groundwiki token new" in done.stderr
    assert "hunter2" not in done.stderr
