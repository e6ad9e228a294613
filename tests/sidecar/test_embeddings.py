"""The default embedder, as the sidecar and as Chroma call it."""

from __future__ import annotations

import json
import subprocess
import sys

# In a child process: a loaded ONNX session starts native threads, after which this process may
# no longer fork workers, and the page reader's tests that run later would read in one process.
EMBED = """
import json
import numpy as np
from groundwiki_sidecar.embedding.embedders import MiniLMOnnx
embedder = MiniLMOnnx()
both = embedder.embed_query(["wing flutter", "boundary layer"])
print(json.dumps({
    "count": len(both),
    "same": [
        bool(np.allclose(both[0], embedder.embed_query("wing flutter"), atol=1e-6)),
        bool(np.allclose(both[1], embedder.embed_query("boundary layer"), atol=1e-6)),
    ],
}))
"""


def test_embed_query_takes_chromas_list_of_documents_too():
    ran = subprocess.run(
        [sys.executable, "-c", EMBED], capture_output=True, text=True, check=True, timeout=300
    )
    answer = json.loads(ran.stdout)
    assert answer == {"count": 2, "same": [True, True]}
