"""The MCP endpoint is made on its first request: a sidecar that is never asked over MCP never
imports the MCP SDK (1.3 s of a start), and the first MCP request is answered all the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from helpers.sidecar_helpers import small_wiki
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.service import SidecarService
from starlette.testclient import TestClient

service = SidecarService(small_wiki(Path(sys.argv[1])), embed=False)
service.start(watch=False)
seen = {}
with TestClient(create_app(service), base_url="http://127.0.0.1") as client:
    seen["healthz"] = client.get("/healthz").status_code
    seen["search"] = client.get("/search", params={"q": "wing", "lanes": "lexical"}).status_code
    seen["sdk before"] = "mcp" in sys.modules
    answer = client.post(
        "/mcp/",
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}},
        headers={"Accept": "application/json, text/event-stream"},
    )
    seen["initialize"] = answer.status_code
    seen["server"] = "groundwiki" in answer.text
    seen["sdk after"] = "mcp" in sys.modules
print(json.dumps(seen))
"""


def test_the_sdk_is_imported_on_the_first_mcp_request_only(tmp_path: Path) -> None:
    tests = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "w"), str(tests)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        '{"healthz": 200, "search": 200, "sdk before": false, "initialize": 200,'
        ' "server": true, "sdk after": true}'
    )
