"""The default embedder, as the sidecar and as Chroma call it."""

from __future__ import annotations

import numpy as np
from groundwiki.sidecar.embeddings import MiniLMOnnx


def test_embed_query_takes_chromas_list_of_documents_too():
    embedder = MiniLMOnnx()
    both = embedder.embed_query(["wing flutter", "boundary layer"])
    assert len(both) == 2
    assert np.allclose(both[0], embedder.embed_query("wing flutter"), atol=1e-6)
    assert np.allclose(both[1], embedder.embed_query("boundary layer"), atol=1e-6)
