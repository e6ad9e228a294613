"""Hostile requests to a real sidecar process on 127.0.0.1: foreign Host and Origin headers (DNS
rebinding), JSON that is no text, bodies over the limit on every route, broken lines to
`groundwiki mcp` over stdio. Requests go out as raw bytes (http.client, sockets) so that no
client library cleans them first."""

from __future__ import annotations

import http.client
import json
import queue
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest
import schemathesis
from groundwiki import __version__
from groundwiki_sidecar.api.openapi import COMPACT_MEDIA_TYPE, TOON_MEDIA_TYPE, openapi, resolved
from groundwiki_sidecar.api.response_schemas import MAX_BODY_BYTES
from groundwiki_sidecar.base.settings import SidecarSettings
from schemathesis import GenerationMode, checks
from test_sidecar_api import BIN, ENV, _serve, _wiki
from test_sidecar_process import free_port


def _no_chroma() -> dict:
    # The semantic lane is not under test here: an unreachable Chroma server starts faster.
    return {"chroma_url": f"http://127.0.0.1:{free_port()}"}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    _wiki(root, _no_chroma())
    process, base = _serve(root)
    yield int(base.rsplit(":", 1)[1])
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def send(
    port: int,
    method: str,
    target: str,
    body: bytes = b"",
    host: str | None = "127.0.0.1",
    headers: dict[str, str] | list[tuple[str, str]] | None = None,
) -> tuple[int, dict]:
    """One request with exactly these headers and bytes; the answer's status and JSON body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", host)
        pairs = headers.items() if isinstance(headers, dict) else headers or []
        for name, value in pairs:
            connection.putheader(name, value)
        if method == "POST":
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body if method == "POST" else None)
        response = connection.getresponse()
        raw = response.read()
    finally:
        connection.close()
    assert response.getheader("content-type", "").startswith("application/json"), raw[:300]
    return response.status, json.loads(raw)


def _every_route() -> list[tuple[str, str, bytes]]:
    """Each route of the OpenAPI document, /mcp/ and an unknown path: a new route is covered
    as soon as it is documented."""
    routes = []
    for path, operations in resolved(openapi(__version__))["paths"].items():
        for method in operations:
            target = path.replace("{key}", "wing") + ("?q=wing" if "search" in path else "")
            body = b'{"ids": ["wing"]}' if method == "post" else b""
            if path == "/verify":
                body = b'{"answer": "wings flutter"}'
            routes.append((method.upper(), target, body))
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    return [*routes, ("POST", "/mcp/", json.dumps(mcp).encode()), ("GET", "/no/such/route", b"")]


@pytest.mark.parametrize(("method", "target", "body"), _every_route())
def test_a_foreign_host_is_refused_on_every_route(live, method, target, body):
    mcp = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    status, data = send(live, method, target, body, host=f"rebind.example:{live}", headers=mcp)
    assert (status, data["error"]) == (421, "host_not_allowed")
    assert "'rebind.example:" in data["message"] and "sidecar.allowed_hosts" in data["message"]


@pytest.mark.parametrize(
    "host",
    ["localhost.rebind.example", "127.0.0.1.nip.io", "[::1].rebind.example", "localhost@rebind.example",
     "127.0.0.1:80:80", "127.0.0.1:port", "[::1", ""],
)  # fmt: skip
def test_names_that_only_look_local_are_refused(live, host):
    status, data = send(live, "POST", "/pages", b'{"ids": ["wing"]}', host=host)
    assert (status, data["error"]) == (421, "host_not_allowed")


def test_a_request_without_a_host_header_is_refused(live):
    status, data = send(live, "GET", "/status", host=None)
    assert (status, data["error"]) == (421, "host_not_allowed")
    assert "without a Host header" in data["message"]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LocalHost", "[::1]"])
@pytest.mark.parametrize("with_port", [False, True])
def test_loopback_names_are_served_with_or_without_a_port(live, name, with_port):
    host = f"{name}:{live}" if with_port else name
    status, data = send(live, "POST", "/pages", b'{"ids": ["wing"]}', host=host)
    assert status == 200 and data["pages"][0]["key"] == "wing"


def test_a_browser_page_from_a_foreign_origin_is_refused(live):
    foreign = {"Origin": "http://rebind.example"}
    status, data = send(live, "POST", "/pages", b'{"ids": ["wing"]}', headers=foreign)
    assert (status, data["error"]) == (403, "origin_not_allowed")


@pytest.mark.parametrize("origin", ["http://[::1", "http://[evil", "http://[::1]:x"])
def test_a_malformed_origin_is_refused_not_a_server_error(live, origin):
    status, data = send(live, "GET", "/status", host="localhost", headers={"Origin": origin})
    assert (status, data["error"]) == (403, "origin_not_allowed")


@pytest.mark.parametrize(
    "headers",
    [
        [("Host", "rebind.example"), ("Host", "localhost")],
        [("Host", "localhost"), ("Host", "rebind.example")],
    ],
)
def test_two_host_headers_are_refused(live, headers):
    status, data = send(live, "POST", "/pages", b'{"ids": ["wing"]}', host=None, headers=headers)
    assert (status, data["error"]) == (421, "host_not_allowed")


def test_two_origin_headers_are_refused(live):
    origins = [("Origin", "http://rebind.example"), ("Origin", "http://localhost")]
    status, data = send(live, "POST", "/pages", b'{"ids": ["wing"]}', headers=origins)
    assert (status, data["error"]) == (403, "origin_not_allowed")


def test_a_browser_page_served_from_loopback_is_served(live):
    local = {"Origin": "http://localhost:3000"}
    assert send(live, "POST", "/pages", b'{"ids": ["wing"]}', headers=local)[0] == 200


def test_a_name_in_allowed_hosts_is_served(tmp_path):
    _wiki(tmp_path, {"allowed_hosts": ["wiki.example.org"], **_no_chroma()})
    process, base = _serve(tmp_path)
    port = int(base.rsplit(":", 1)[1])
    try:
        assert send(port, "GET", "/overview", host=f"wiki.example.org:{port}")[0] == 200
        assert send(port, "GET", "/overview", host="other.example.org")[0] == 421
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def test_served_hosts_add_the_bound_name_and_never_a_wildcard_address():
    public = SidecarSettings(host="10.1.2.3", token="t", allowed_hosts=("wiki.example.org",))
    assert public.served_hosts() == (
        "127.0.0.1", "localhost", "[::1]", "10.1.2.3", "wiki.example.org",
    )  # fmt: skip
    assert SidecarSettings(host="0.0.0.0").served_hosts() == ("127.0.0.1", "localhost", "[::1]")
    assert SidecarSettings(host="fd00::1").served_hosts()[-1] == "[fd00::1]"


def test_the_cli_reaches_a_wildcard_bound_sidecar_on_loopback():
    # A Host of 0.0.0.0 would be refused: the shell commands ask for 127.0.0.1 instead.
    from groundwiki.cli.sidecar_client import base_url

    assert base_url(SidecarSettings(host="0.0.0.0", port=9000)) == "http://127.0.0.1:9000"
    assert base_url(SidecarSettings(host="::1", port=9000)) == "http://[::1]:9000"


SURROGATE_IDS = b'{"ids": ["\\ud800"]}'
DEEP = b'{"ids": ' + b"[" * 1000 + b"]" * 1000 + b"}"
DEEPISH = b'{"ids": ' + b"[" * 40 + b"]" * 40 + b"}"


@pytest.mark.parametrize(
    ("target", "body"),
    [
        ("/pages", SURROGATE_IDS),
        ("/chunks", SURROGATE_IDS),
        ("/verify", b'{"answer": "x", "chunks": ["\\udc00"]}'),
        ("/verify", b'{"answer": "a lone \\ud800 in the answer"}'),
        ("/pages", b'{"ids": ["wing"], "\\ud800": 1}'),
        ("/pages", DEEP),
        ("/chunks", DEEP),
        ("/verify", b'{"answer": ' + b"[" * 1000 + b"]" * 1000 + b"}"),
        ("/pages", DEEPISH),
    ],
)
def test_json_that_is_no_text_gets_a_400(live, target, body):
    status, data = send(live, "POST", target, body)
    assert (status, data["error"]) == (400, "bad_json")
    assert ("lone surrogate" in data["message"]) != ("levels deep" in data["message"])


@pytest.mark.parametrize(
    "target",
    [
        "/search?q=%ED%A0%80",
        "/search?q=%ED%A0%80%ED%B0%80",
        "/search?q=wing&tags=%ED%A0%80",
        "/search?q=wing&kind=%ED%A0%80",
        "/search?q=wing&lanes=%ED%A0%80",
        "/search?q=%00&tags=%00&kind=%00",
        "/search?q=wing&tags=" + "a" * 2000,
        "/search?q=wing&kind=" + "a" * 200,
        "/chunks/search?q=%ED%A0%80&lanes=%ED%A0%80",
        "/pages/%ED%A0%80/links",
        "/pages/%00/links",
        "/pages/" + "a" * 5000 + "/links",
    ],
)
def test_hostile_query_parameters_never_get_a_server_error(live, target):
    status, data = send(live, "GET", target)
    assert status < 500, data
    assert status == 200 or (data["error"] and len(data["message"]) < 1000)


def _raw(port: int, head: bytes, chunks: list[bytes]) -> bytes:
    """Send a head and then body parts on one socket, without ever ending the body; what the
    sidecar answers. Times out (a failure) if it waits for the rest instead of answering."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        for chunk in chunks:
            sock.sendall(chunk)
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            part = sock.recv(65536)
            if not part:
                break
            answer += part
    return answer


MCP_HEAD = (
    "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\n"
)


@pytest.mark.parametrize("path", ["/mcp/", "/pages"])
def test_a_declared_body_over_the_limit_is_refused_before_it_arrives(live, path):
    head = (MCP_HEAD + "Content-Length: 1000000\r\n\r\n").format(path=path).encode()
    answer = _raw(live, head, [])
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"] == "body_too_large"


@pytest.mark.parametrize("path", ["/mcp/", "/pages"])
def test_a_chunked_body_over_the_limit_is_refused_before_it_ends(live, path):
    head = (MCP_HEAD + "Transfer-Encoding: chunked\r\n\r\n").format(path=path).encode()
    part = b"x" * 16384
    chunks = [b"%x\r\n%s\r\n" % (len(part), part)] * (MAX_BODY_BYTES // len(part) + 2)
    answer = _raw(live, head, chunks)  # the final 0-length chunk is never sent
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"] == "body_too_large"


class StdioSession:
    """`groundwiki mcp` as a subprocess, spoken to in JSON-RPC lines."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "groundwiki"), "-q", "-f", str(config), "mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV,
        )  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict:
        """The next message from the server; a failure after 60 s of silence."""
        try:
            return json.loads(self.lines.get(timeout=60))
        except queue.Empty:
            raise AssertionError("groundwiki mcp sent no reply within 60 s") from None

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_an_unreadable_mcp_line_over_stdio_gets_an_error_reply_and_serving_goes_on(tmp_path):
    _wiki(tmp_path, _no_chroma())
    session = StdioSession(tmp_path / "mkdocs.yml")
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "test", "version": "1"}}  # fmt: skip
        session.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
            ).encode()
        )
        assert session.reply()["id"] == 1
        session.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        call = '{"jsonrpc": "2.0", "id": %s, "method": "tools/call", "params": {"name": "get_pages", "arguments": {"ids": [%s]}}}'  # fmt: skip
        session.send((call % (2, '"\\ud800"')).encode())
        surrogate = session.reply()
        assert surrogate["id"] == 2 and surrogate["error"]["code"] == -32700
        session.send(b"not json at all")
        garbage = session.reply()
        assert garbage["id"] is None and garbage["error"]["code"] == -32700
        session.send(b'{"jsonrpc": "1.0", "id": 7, "method": "ping"}')
        assert session.reply()["error"]["code"] == -32600  # readable JSON, wrong version
        session.send((call % (3, '"wing"')).encode())
        served = session.reply()
        assert (
            served["id"] == 3 and served["result"]["structuredContent"]["pages"][0]["key"] == "wing"
        )
    finally:
        session.close()


def test_a_bad_allowed_hosts_entry_is_named_with_the_fix():
    from groundwiki.core.config.wiki_config import ConfigError
    from groundwiki_sidecar.base.settings import settings_from_mapping

    with pytest.raises(ConfigError, match=r"allowed_hosts entry 'wiki/x' is not a host name"):
        settings_from_mapping({"allowed_hosts": ["wiki.example.org", "wiki/x"]})


# Requests that break the OpenAPI document on purpose (wrong types, missing fields, values out
# of range), generated by schemathesis: none may get a server error, or a status the document
# does not declare.
negative = schemathesis.openapi.from_dict(openapi(__version__))
negative.config.generation.update(modes=[GenerationMode.NEGATIVE], max_examples=25)


@negative.parametrize()
def test_no_invalid_request_gets_a_server_error(case, live):
    response = case.call_and_validate(
        base_url=f"http://127.0.0.1:{live}",
        timeout=30,
        checks=[checks.not_a_server_error, checks.status_code_conformance],
    )
    # An answer in the form `format` asked for (the document declares each); an error in JSON.
    media = response.headers["content-type"][0]
    if response.status_code >= 400:
        assert media.startswith("application/json")
        assert {"error", "message"} <= set(response.json())
    else:
        assert media.startswith(("application/json", COMPACT_MEDIA_TYPE, TOON_MEDIA_TYPE))
