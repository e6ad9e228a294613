"""The int8 graph the default model runs: derived once from the packaged file with ONNX
Runtime's own tools, cached by hash, re-derived when the cache is damaged, usable when the
cache cannot be written; and its vectors are the float graph's within rounding."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# In a child process: a loaded ONNX session starts native threads, after which this process may
# no longer fork workers (the page reader's tests run later in the same process).
DERIVE = """
import hashlib, json, logging, os, sys
from pathlib import Path
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
from groundwiki_sidecar import onnx_model
from groundwiki_sidecar.embedding.embedders import MODEL_SHA256, MiniLMOnnx, _model_path
data = onnx_model.int8_model(_model_path(), MODEL_SHA256)
folder = onnx_model.cache_dir()
files = sorted(p.name for p in folder.glob("*")) if folder.exists() else []
int8, plain = MiniLMOnnx(), MiniLMOnnx(weights="float")
texts = ["Wing flutter grows with speed.", "Shock waves form ahead of blunt bodies.",
         "The library catalogue lists every journal it holds."]
a, b = int8.embed(texts), plain.embed(texts)
print(json.dumps({
    "sha256": hashlib.sha256(data).hexdigest(),
    "files": files,
    "cosine": [float(x) for x in (a * b).sum(axis=1)],
    "identities": [int8.identity, plain.identity],
    "fallback": int8.fallback,
}))
"""


def derive(cache) -> tuple[dict, str]:
    env = {**os.environ, "GROUNDWIKI_MODEL_CACHE": str(cache)}
    ran = subprocess.run(
        [sys.executable, "-c", DERIVE], capture_output=True, text=True, env=env, timeout=600
    )
    assert ran.returncode == 0, ran.stderr
    *log, last = ran.stdout.strip().splitlines()
    return json.loads(last), "\n".join(log)


def test_the_int8_graph_is_derived_once_cached_and_close_to_the_float_graph(tmp_path):
    cache = tmp_path / "models"
    first, _ = derive(cache)
    assert any(name.endswith(".onnx") for name in first["files"])
    assert any(name.endswith(".sha256") for name in first["files"])
    assert all(c > 0.98 for c in first["cosine"]), first["cosine"]
    int8, plain = first["identities"]
    assert int8 != plain and "onnx-fold-fuse-dynq8pc" in int8 and first["fallback"] == ""
    (model,) = [p for p in cache.iterdir() if p.suffix == ".onnx"]
    stamp = model.stat().st_mtime_ns
    again, _ = derive(cache)
    assert again["sha256"] == first["sha256"]  # the same graph, from the cache
    assert model.stat().st_mtime_ns == stamp

    model.write_bytes(b"damaged")
    repaired, log = derive(cache)
    assert repaired["sha256"] == first["sha256"]  # derived again, deterministically
    assert "does not match its hash" in log


def test_an_unwritable_cache_still_gives_the_int8_graph(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    found, log = derive(blocked / "models")
    assert found["fallback"] == "" and all(c > 0.98 for c in found["cosine"])
    assert "cannot cache the derived model" in log
