"""Session fixtures for the sidecar tests: the default model's int8 graph derived once per test
session, before any test starts a process that embeds."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

# In a child process: deriving (or loading) the graph starts ONNX Runtime's native threads, after
# which a test process may no longer fork page readers. Reads the cache when it holds the graph.
ENSURE_DERIVED = """
from groundwiki_sidecar.embedding import onnx_model
from groundwiki_sidecar.embedding.embedders import MODEL_SHA256, _model_path
onnx_model.int8_model(_model_path(), MODEL_SHA256)
"""


@pytest.fixture(scope="session", autouse=True)
def derived_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The int8 graph in the machine's model cache before the first sidecar test.

    On a fresh machine every process that embeds would otherwise derive it on its own (seconds
    of CPU each), several at once when pytest-xdist's workers start together. The workers share
    the folder above their own temporary folders: the first one derives, under a lock, and
    leaves a mark that this session has done it."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    with (shared / "derived-model.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "derived-model.done"
        if not done.exists():
            ran = subprocess.run(
                [sys.executable, "-c", ENSURE_DERIVED], capture_output=True, text=True, timeout=600
            )
            assert ran.returncode == 0, ran.stderr
            done.touch()
    yield
