"""The int8 graph the default model runs: derived once from the packaged file with ONNX
Runtime's own tools, cached by hash, re-derived when the cache is damaged, usable when the
cache cannot be written; and its vectors are the float graph's within rounding."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

# In one child process for the whole module: a loaded ONNX session starts native threads, after
# which this process may no longer fork workers (the page reader's tests run later in the same
# process). Each derivation costs seconds of CPU, so the child derives three times only, once
# per path that must derive (an empty cache, a damaged one, one that cannot be written), and
# answers every question about each from that one derivation. `cache_dir()` reads
# GROUNDWIKI_MODEL_CACHE at each call, so one process can point it at each cache in turn.
DERIVE = """
import hashlib, json, logging, os, sys
from pathlib import Path
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
from groundwiki_sidecar.embedding import onnx_model
from groundwiki_sidecar.embedding.embedders import MODEL_SHA256, MiniLMOnnx, _model_path
cache, blocked = Path(sys.argv[1]), Path(sys.argv[2])
texts = ["Wing flutter grows with speed.", "Shock waves form ahead of blunt bodies.",
         "The library catalogue lists every journal it holds."]
def step(name, **found):
    print(json.dumps({"step": name, **found}), flush=True)
def digest(data):
    return hashlib.sha256(data).hexdigest()
def model_file():
    (model,) = [p for p in cache.iterdir() if p.suffix == ".onnx"]
    return model

os.environ["GROUNDWIKI_MODEL_CACHE"] = str(cache)
data = onnx_model.int8_model(_model_path(), MODEL_SHA256)
files = sorted(p.name for p in onnx_model.cache_dir().glob("*"))
stamp = model_file().stat().st_mtime_ns
int8, plain = MiniLMOnnx(), MiniLMOnnx(weights="float")
floats = plain.embed(texts)
step("first", sha256=digest(data), files=files,
     cosine=[float(x) for x in (int8.embed(texts) * floats).sum(axis=1)],
     identities=[int8.identity, plain.identity], fallback=int8.fallback)

again = onnx_model.int8_model(_model_path(), MODEL_SHA256)
step("again", sha256=digest(again), rewritten=model_file().stat().st_mtime_ns != stamp)

model_file().write_bytes(b"damaged")
repaired = onnx_model.int8_model(_model_path(), MODEL_SHA256)
step("repaired", sha256=digest(repaired), cached=digest(model_file().read_bytes()))

os.environ["GROUNDWIKI_MODEL_CACHE"] = str(blocked)
unwritable = MiniLMOnnx()
vectors = unwritable.embed(texts)
step("blocked", sha256=digest(unwritable._model), fallback=unwritable.fallback,
     cosine=[float(x) for x in (vectors * floats).sum(axis=1)])
"""


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each step's answer, with the log lines the step wrote under "log"."""
    root = tmp_path_factory.mktemp("model-cache")
    blocked = root / "blocked"
    blocked.write_text("a file where the cache folder would be")
    ran = subprocess.run(
        [sys.executable, "-c", DERIVE, str(root / "models"), str(blocked / "models")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    steps: dict[str, dict[str, Any]] = {}
    log: list[str] = []
    for line in ran.stdout.splitlines():
        if line.startswith('{"step": '):
            found = json.loads(line)
            steps[found.pop("step")] = {**found, "log": "\n".join(log)}
            log = []
        else:
            log.append(line)
    assert set(steps) == {"first", "again", "repaired", "blocked"}, ran.stdout
    return steps


def test_the_int8_graph_is_derived_once_cached_and_close_to_the_float_graph(derived):
    first = derived["first"]
    assert any(name.endswith(".onnx") for name in first["files"])
    assert any(name.endswith(".sha256") for name in first["files"])
    assert all(c > 0.98 for c in first["cosine"]), first["cosine"]
    int8, plain = first["identities"]
    assert int8 != plain and "onnx-fold-fuse-dynq8pc" in int8 and first["fallback"] == ""
    again = derived["again"]
    assert again["sha256"] == first["sha256"]  # the same graph, from the cache
    assert not again["rewritten"]

    repaired = derived["repaired"]
    assert repaired["sha256"] == first["sha256"]  # derived again, deterministically
    assert repaired["cached"] == first["sha256"]  # and the damaged file replaced
    assert "does not match its hash" in repaired["log"]


def test_an_unwritable_cache_still_gives_the_int8_graph(derived):
    found = derived["blocked"]
    assert found["fallback"] == "" and all(c > 0.98 for c in found["cosine"])
    assert found["sha256"] == derived["first"]["sha256"]
    assert "cannot cache the derived model" in found["log"]
