"""Chroma's client reads a collection's schema back from JSON on every `add` (for sparse
embeddings this sidecar never uses); the page collection's schema grows a key per tag, so the
sidecar keeps the answer per collection object (chroma_index._sparse_targets_once)."""

from __future__ import annotations

import chromadb
import numpy as np
from chromadb.api.types import Schema
from groundwiki_sidecar.index.chroma_index import _sparse_targets_once


def test_adds_read_the_schema_once_and_store_what_they_are_given(tmp_path, monkeypatch):
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    collection = client.create_collection("pages-test", embedding_function=None)
    vectors = np.eye(4, dtype=np.float32)
    # A schema with many tag keys, as the page collection's becomes.
    collection.add(
        ids=["a"], embeddings=vectors[:1], metadatas=[{f"tag:t{i}": True for i in range(200)}]
    )
    collection = client.get_collection("pages-test")
    expected = collection._get_sparse_embedding_targets()
    read = []
    real = Schema.deserialize_from_json
    monkeypatch.setattr(
        Schema, "deserialize_from_json", classmethod(lambda cls, j: read.append(1) or real(j))
    )
    kept = _sparse_targets_once(collection)
    for number in range(1, 4):
        kept.add(ids=[f"p{number}"], embeddings=vectors[number : number + 1],
                 metadatas=[{"tag:t1": True, "kind": "note"}])  # fmt: skip
    assert len(read) == 1  # once, not once per add
    assert kept._get_sparse_embedding_targets() == expected
    found = kept.get(where={"tag:t1": True}, include=["metadatas"])
    assert sorted(found["ids"]) == ["a", "p1", "p2", "p3"]
