"""`groundwiki mcp` answers `initialize` before it imports the MCP SDK (mcp_handshake): the
early answer must be the SDK's own, byte for byte, for every request it answers, and the
session that follows must be the SDK's as if it had read the line itself."""

from __future__ import annotations

import io
import json

import anyio
import pytest
from groundwiki_sidecar.api import mcp_handshake
from groundwiki_sidecar.api.mcp_tools import build_mcp
from mcp.server import runner
from mcp.server.stdio import stdio_server
from test_sidecar_api import _wiki
from test_sidecar_hostile_requests import StdioSession, _no_chroma

CLIENT = {"name": "client", "version": "1.0"}


def _hello(**params: object) -> dict:
    given = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT}
    given.update(params)
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": given}


def _sdk_reply(server, line: str) -> str:
    """What the SDK itself writes back to `line` over its stdio transport."""
    written = io.StringIO()

    async def serve() -> None:
        lowlevel = server._lowlevel_server
        wire_in = anyio.wrap_file(io.StringIO(line + "\n"))
        async with stdio_server(wire_in, anyio.wrap_file(written)) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(serve)
    return written.getvalue().splitlines()[0] + "\n"


def test_the_handshake_versions_are_the_sdks():
    assert tuple(runner.HANDSHAKE_PROTOCOL_VERSIONS) == mcp_handshake.PROTOCOL_VERSIONS
    assert mcp_handshake.PROTOCOL_VERSIONS[-1] == runner.LATEST_HANDSHAKE_VERSION


ANSWERED = [
    *(_hello(protocolVersion=version) for version in runner.HANDSHAKE_PROTOCOL_VERSIONS),
    _hello(protocolVersion="2031-01-01"),  # unknown: the newest is offered
    _hello(capabilities={"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}),
    _hello(clientInfo={"name": "ü client", "version": "2", "title": "Ünïcode"}),
    {**_hello(), "id": "a string id ✓"},
    {**_hello(), "id": 2**53},
]
LEFT_TO_THE_SDK = [
    _hello(clientInfo={"name": "no version"}),  # the SDK refuses it
    _hello(capabilities={"roots": 5}),
    _hello(capabilities={"roots": {"listChanged": 5}}),
    _hello(protocolVersion=5),
    {k: v for k, v in _hello().items() if k != "params"},
    _hello(_meta={"progressToken": 1}),
    {**_hello(), "id": True},
    {**_hello(), "method": "ping"},
    {**_hello(), "jsonrpc": "1.0"},
]


@pytest.mark.parametrize("request_", ANSWERED, ids=range(len(ANSWERED)))
def test_the_early_answer_is_the_sdks_byte_for_byte(request_):
    early = mcp_handshake.initialize_answer(request_)
    assert early is not None
    assert mcp_handshake.wire(early).decode() == _sdk_reply(build_mcp(None), json.dumps(request_))


@pytest.mark.parametrize("request_", LEFT_TO_THE_SDK, ids=range(len(LEFT_TO_THE_SDK)))
def test_what_the_early_answer_is_unsure_of_is_left_to_the_sdk(request_):
    assert mcp_handshake.initialize_answer(request_) is None


def test_the_session_after_an_early_answer_is_the_sdks(tmp_path):
    _wiki(tmp_path, _no_chroma())
    session = StdioSession(tmp_path / "mkdocs.yml")
    try:
        session.send(json.dumps(_hello()).encode())
        hello = session.reply()
        assert hello["id"] == 1 and hello["result"]["serverInfo"]["name"] == "groundwiki"
        session.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        session.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
        listed = session.reply()  # the next line: the SDK's own answer to id 1 was dropped
        assert listed["id"] == 2 and "search_wiki" in {t["name"] for t in listed["result"]["tools"]}
        call = {"name": "get_pages", "arguments": {"ids": ["wing"]}}
        session.send(
            json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}).encode()
        )
        served = session.reply()
        assert (
            served["id"] == 3 and served["result"]["structuredContent"]["pages"][0]["key"] == "wing"
        )
    finally:
        session.close()


def test_a_first_line_the_early_answer_cannot_read_reaches_the_sdk(tmp_path):
    _wiki(tmp_path, _no_chroma())
    session = StdioSession(tmp_path / "mkdocs.yml")
    try:
        session.send(b"not json")
        assert session.reply()["error"]["code"] == -32700  # the SDK read the line and said so
        session.send(json.dumps(_hello(clientInfo={"name": "no version"})).encode())
        refused = session.reply()  # left to the SDK, which refuses it
        assert refused["id"] == 1 and refused["error"]["code"] == -32602
        session.send(json.dumps({**_hello(), "id": 2}).encode())
        assert session.reply()["result"]["protocolVersion"] == "2025-06-18"
        session.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        session.send(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}')
        assert session.reply()["id"] == 3
    finally:
        session.close()


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["mcp"], "mcp"),
        (["-q", "-f", "site/mkdocs.yml", "mcp", "--user", "ann"], "mcp"),
        (["--config-file=mkdocs.yml", "mcp"], "mcp"),
        (["-fmkdocs.yml", "--quiet", "mcp"], "mcp"),
        (["-f", "mcp", "serve"], "serve"),  # a config file named mcp
        (["mcp", "--help"], None),
        (["--unknown", "mcp"], None),
        ([], None),
    ],
)
def test_the_command_is_found_without_the_parser(argv, command):
    from groundwiki.cli import command_of

    assert command_of(argv) == command
