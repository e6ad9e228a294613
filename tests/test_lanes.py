"""The lane registry: one list of lanes, from which everything that knows them derives."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("whoosh", "chromadb", "onnxruntime", "starlette", "uvicorn", "mcp", "watchdog", "numpy")


def test_the_registry_imports_no_index_or_server_library():
    script = (
        "import sys, groundwiki.sidecar.lanes\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_registry_names_the_lanes_and_their_default_weights():
    from groundwiki.sidecar import lanes

    assert lanes.names() == tuple(lane.name for lane in lanes.LANES)
    assert set(lanes.names("chunk")) < set(lanes.names("page")) == set(lanes.names())
    assert lanes.default_weights() == {lane.name: lane.weight for lane in lanes.LANES}
    assert lanes.get(lanes.names()[0]) is lanes.LANES[0]
