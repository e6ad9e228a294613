"""The handbook cites copies of the API's own descriptions (raw-sources/api/): the operations
reference written from the catalogue, and a worked agent session recorded on the handbook
itself. Each copy must be what the code writes today, or the handbook documents an API that is
gone.

Regenerate them with `.venv/bin/python tests/sidecar/test_api_copies.py`, then fix the line
ranges lint reports as moved (`groundwiki lock --fix-moved`) and re-read those it reports as
drifted. (raw-sources/api/openapi.json is checked by tests/core/test_bundled_evidence.py and
written here too.)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "raw-sources/api"


def _handbook_copy(folder: Path) -> Path:
    """The bundled handbook in `folder`, without its index: a fresh one, built here."""
    for name in ("wiki", "raw-sources"):
        shutil.copytree(ROOT / name, folder / name)
    for name in ("mkdocs.yml", "wiki.lock"):
        shutil.copy2(ROOT / name, folder / name)
    return folder / "mkdocs.yml"


def written() -> dict[str, str]:
    from groundwiki import __version__
    from groundwiki_sidecar.api.openapi import openapi
    from groundwiki_sidecar.api.operations import Operations
    from groundwiki_sidecar.api.reference import agent_session, operations_markdown
    from groundwiki_sidecar.api.service import SidecarService
    from groundwiki_sidecar.base.settings import load_sidecar

    fresh = {
        "openapi.json": json.dumps(openapi(__version__), indent=2) + "\n",
        "operations.md": operations_markdown(),
    }
    with tempfile.TemporaryDirectory() as folder:
        config = _handbook_copy(Path(folder))
        # The session is recorded on the handbook as the code writes it, without the record of
        # the session itself: the same corpus whatever the copies on disk say.
        for name, text in fresh.items():
            (Path(folder) / "raw-sources/api" / name).write_text(text)
        (Path(folder) / "raw-sources/api/agent-session.md").unlink(missing_ok=True)
        running = SidecarService(load_sidecar(config), embed=False)
        running.start(watch=False)
        try:
            ops = Operations(running)
            session = agent_session(ops)
            ops.close()
        finally:
            running.stop()
    return {**fresh, "agent-session.md": session}


@pytest.fixture(scope="module")
def copies() -> dict[str, str]:
    return written()


@pytest.mark.parametrize("name", ["openapi.json", "operations.md", "agent-session.md"])
def test_the_cited_copy_is_what_the_code_writes(copies, name):
    assert (API / name).read_text() == copies[name], (
        f"raw-sources/api/{name} is out of date: run .venv/bin/python tests/sidecar/test_api_copies.py"
    )


def test_the_session_drills_down_and_verifies(copies):
    session = copies["agent-session.md"]
    for tool in ("search_wiki", "get_context", "get_chunks", "verify_citations"):
        assert f"`{tool}` with" in session
    assert '"status": "quote"' in session  # the quote was read verbatim


if __name__ == "__main__":
    for name, text in written().items():
        (API / name).write_text(text)
        print(f"wrote raw-sources/api/{name}", file=sys.stderr)
