"""`groundwiki status` and `groundwiki query` as real processes: they find the sidecar that
`groundwiki serve --port N` started, and say in one line what answers when something else holds
the port (another HTTP server, a 404, a server that never answers)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from groundwiki.cli import build_parser
from groundwiki.core.config.settings_spec import SPEC
from groundwiki_sidecar.api.response_schemas import DEFAULT_LIMIT, MAX_LIMIT
from groundwiki_sidecar.base.settings import SidecarSettings
from helpers.sidecar_helpers import small_wiki, wait_for

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "GROUNDWIKI_TOKEN": ""}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def configure_port(root: Path, port: int) -> None:
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["plugins"][0]["groundwiki"]["sidecar"] = {"debounce_s": 0.1, "port": port}
    config.write_text(yaml.safe_dump(data))


def groundwiki(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), *args],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip


def answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return json.load(response)["ok"]
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Path, int, subprocess.Popen[str]]]:
    """A sidecar started with `serve --port N` while mkdocs.yml names another port, where
    nothing listens."""
    root = tmp_path_factory.mktemp("served")
    small_wiki(root)
    configure_port(root, free_port())
    port = free_port()
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(root / "mkdocs.yml"), "serve", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip

    def ready() -> bool:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        return answers(port)

    wait_for(ready, timeout=60, what="the sidecar to answer")
    yield root, port, process
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_status_finds_the_sidecar_on_the_port_serve_was_given(served):
    root, port, _ = served
    shown = groundwiki(root, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"running at http://127.0.0.1:{port}" in shown.stdout
    assert "lane lexical: ok" in shown.stdout


def test_status_port_option_asks_that_port(served, tmp_path):
    _, port, _ = served
    other = tmp_path / "other"  # another wiki's config: only --port leads to the sidecar
    small_wiki(other)
    configure_port(other, free_port())
    shown = groundwiki(other, "status", "--port", str(port), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["running"] is True


def test_query_finds_the_sidecar_on_the_port_serve_was_given(served):
    root, _, _ = served
    shown = groundwiki(root, "query", "flutter", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "wing" in [hit["key"] for hit in json.loads(shown.stdout)["hits"]]


WITHOUT_THE_EXTRA = """
import sys
from groundwiki.cli.sidecar_commands import SIDECAR_MODULES
for name in SIDECAR_MODULES:
    sys.modules[name] = None  # as if groundwiki were installed without groundwiki[sidecar]
from groundwiki.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def without_the_extra(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_EXTRA, "-f", str(root / "mkdocs.yml"), *args],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip


def test_query_asks_a_running_sidecar_without_the_sidecars_libraries(served):
    root, port, _ = served
    shown = without_the_extra(root, "query", "flutter", "--json", "--port", str(port))
    assert shown.returncode == 0, shown.stderr
    assert "wing" in [hit["key"] for hit in json.loads(shown.stdout)["hits"]]


def test_query_without_a_sidecar_or_its_libraries_says_what_to_install(tmp_path):
    small_wiki(tmp_path)
    configure_port(tmp_path, free_port())
    shown = without_the_extra(tmp_path, "query", "flutter")
    one_clear_line(shown, "groundwiki query needs the sidecar's libraries", "groundwiki[sidecar]")


def parse_error(capsys, *argv: str) -> str:
    """What `groundwiki ARGV` says when its arguments are refused (exit status 2)."""
    with pytest.raises(SystemExit) as refused:
        build_parser().parse_args(argv)
    assert refused.value.code == 2
    return capsys.readouterr().err


def test_serve_refuses_a_port_the_port_setting_does_not_take(capsys):
    # 0 used to pass as "no --port" and serve on sidecar.port instead.
    (declared,) = (f for f in fields(SidecarSettings) if f.name == "port")
    kind = declared.metadata[SPEC].kind
    for port in (kind.low - 1, kind.high + 1):
        error = parse_error(capsys, "serve", "--port", str(port))
        assert f"argument --port: a port is a number from {kind.low} to {kind.high}" in error
    assert build_parser().parse_args(["serve", "--port", str(kind.high)]).port == kind.high


def test_query_limit_takes_what_the_apis_limit_takes(capsys):
    assert build_parser().parse_args(["query", "x"]).limit == DEFAULT_LIMIT
    assert build_parser().parse_args(["query", "x", "--limit", str(MAX_LIMIT)]).limit == MAX_LIMIT
    error = parse_error(capsys, "query", "x", "--limit", str(MAX_LIMIT + 1))
    assert f"argument --limit: limit must be an integer from 1 to {MAX_LIMIT}" in error


def test_status_after_the_sidecar_was_killed_reads_the_index_folder(tmp_path):
    small_wiki(tmp_path)
    configure_port(tmp_path, free_port())
    port = free_port()
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(tmp_path / "mkdocs.yml"), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip
    try:
        wait_for(lambda: answers(port), timeout=60, what="the sidecar to answer")
    finally:
        process.kill()  # kill -9: the sidecar cannot remove what it recorded
        process.wait(timeout=30)
    shown = groundwiki(tmp_path, "status")
    assert shown.returncode == 0, shown.stderr
    assert "sidecar: not running" in shown.stdout and "pages: 3" in shown.stdout


class HtmlPage(BaseHTTPRequestHandler):
    """Some other web application: HTML with 200 on every path."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>Dashboard</title><p>Welcome</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HtmlPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def file_server(tmp_path_factory) -> Iterator[int]:
    """`python -m http.server`: 404 (an HTML error page) for /status and /search."""
    port = free_port()
    folder = tmp_path_factory.mktemp("served-files")
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip

    def up() -> bool:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
            return True
        except (urllib.error.URLError, OSError):
            return False

    wait_for(up, timeout=30, what="python -m http.server")
    yield port
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A socket that accepts connections (the kernel completes them) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def one_clear_line(shown: subprocess.CompletedProcess[str], *words: str) -> None:
    assert shown.returncode == 2, shown.stdout + shown.stderr
    assert "Traceback" not in shown.stderr
    lines = shown.stderr.strip().splitlines()
    assert len(lines) == 1, shown.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_status_against_an_html_server_says_what_answers(tmp_path, html_server):
    small_wiki(tmp_path)
    configure_port(tmp_path, html_server)
    shown = groundwiki(tmp_path, "status")
    one_clear_line(
        shown, f"127.0.0.1:{html_server}", "not a groundwiki sidecar", "text/html", "--port"
    )


def test_status_against_a_404_says_what_answers(tmp_path, file_server):
    small_wiki(tmp_path)
    configure_port(tmp_path, file_server)
    shown = groundwiki(tmp_path, "status")
    one_clear_line(shown, f"127.0.0.1:{file_server}", "not a groundwiki sidecar", "404", "--port")


def test_status_against_a_server_that_never_answers_says_so(tmp_path, silent_server):
    small_wiki(tmp_path)
    configure_port(tmp_path, silent_server)
    shown = groundwiki(tmp_path, "status")
    one_clear_line(shown, f"127.0.0.1:{silent_server}", "no answer")


def test_query_against_an_html_server_says_what_answers(tmp_path, html_server):
    small_wiki(tmp_path)
    configure_port(tmp_path, html_server)
    shown = groundwiki(tmp_path, "query", "flutter")
    one_clear_line(shown, f"127.0.0.1:{html_server}", "not a groundwiki sidecar", "text/html")


def test_query_against_a_404_says_what_answers(tmp_path, file_server):
    small_wiki(tmp_path)
    configure_port(tmp_path, file_server)
    shown = groundwiki(tmp_path, "query", "flutter")
    one_clear_line(shown, f"127.0.0.1:{file_server}", "not a groundwiki sidecar", "404")
