"""The semantic lane's storage: two Chroma collections (pages, chunks) of vectors and metadata.

Chroma runs embedded, on disk under the index folder, or as a client of a Chroma server
(`sidecar.chroma_url`), so replicas of the sidecar can share one vector store while each keeps
its own Whoosh index. Vectors are computed by the sidecar (batched, cached) and passed in; no
documents are stored in Chroma, because the text already lives in the sidecar's store and
storing it again triples Chroma's insert cost.

Each collection records the identity of the model its vectors came from. A collection made by
another model is dropped and rebuilt rather than mixed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

MODEL_KEY = "groundwiki_model"
COLLECTIONS = ("groundwiki-pages", "groundwiki-chunks")


class VectorStoreUnavailable(RuntimeError):
    """Chroma cannot be reached or opened; the message says where and how to fix it."""


def _client(folder: Path, url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    try:
        if url:
            parsed = urlparse(url)
            if parsed.scheme not in {"http", "https"} or not parsed.hostname:
                raise VectorStoreUnavailable(
                    f"sidecar chroma_url '{url}' is not an http(s) URL like http://127.0.0.1:8000"
                )
            port = parsed.port or (443 if parsed.scheme == "https" else 8000)
            client = chromadb.HttpClient(
                host=parsed.hostname, port=port, ssl=parsed.scheme == "https", settings=settings
            )
            client.heartbeat()
            return client
        folder.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(folder), settings=settings)
    except VectorStoreUnavailable:
        raise
    except Exception as exc:  # chromadb raises many types for an unreachable server
        where = url or str(folder)
        raise VectorStoreUnavailable(f"cannot open Chroma at {where}: {exc}") from exc


class VectorIndex:
    def __init__(self, folder: Path, model: str, url: str | None = None) -> None:
        self.model = model
        self.client = _client(folder, url)
        self.model_changed = False
        self.pages = self._collection(COLLECTIONS[0])
        self.chunks = self._collection(COLLECTIONS[1])

    def _collection(self, name: str) -> Any:
        existing = {
            c.name if hasattr(c, "name") else str(c) for c in self.client.list_collections()
        }
        if name in existing:
            collection = self.client.get_collection(name)
            if (collection.metadata or {}).get(MODEL_KEY) == self.model:
                return collection
            self.client.delete_collection(name)  # another model's vectors: never mix them
            self.model_changed = True
        return self.client.create_collection(
            name,
            metadata={MODEL_KEY: self.model},
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def collection(self, kind: str) -> Any:
        return self.pages if kind == "page" else self.chunks

    def replace(
        self,
        kind: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, Any]],
    ) -> None:
        """Delete then add: overwriting existing IDs with upsert is ten times slower."""
        if not ids:
            return
        collection = self.collection(kind)
        collection.delete(ids=list(ids))
        collection.add(ids=list(ids), embeddings=vectors, metadatas=[dict(m) for m in metadatas])

    def delete(self, kind: str, ids: Sequence[str]) -> None:
        collection = self.collection(kind)
        for start in range(0, len(ids), 5000):
            collection.delete(ids=list(ids[start : start + 5000]))

    def ids(self, kind: str) -> set[str]:
        collection = self.collection(kind)
        found: set[str] = set()
        offset = 0
        while True:
            batch = collection.get(include=[], limit=5000, offset=offset)["ids"]
            found.update(batch)
            if len(batch) < 5000:
                return found
            offset += len(batch)

    def count(self, kind: str) -> int:
        return int(self.collection(kind).count())

    def query(
        self, kind: str, vector: np.ndarray, limit: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """(id, cosine distance) nearest first."""
        # No count() first: Chroma answers an empty or small collection with what it has, and
        # the count is another SQLite round trip on every query.
        found = self.collection(kind).query(
            query_embeddings=[vector],
            n_results=limit,
            where=dict(where) if where else None,
            include=["distances"],
        )
        return list(zip(found["ids"][0], found["distances"][0], strict=True))
