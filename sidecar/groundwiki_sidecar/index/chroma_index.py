"""The semantic lane's storage: three Chroma collections (pages, passages of page bodies,
raw-source chunks) of vectors and metadata. Passages have their own collection, not the chunks'
with a kind in their metadata: a page search asks for passages on every query, and Chroma's
metadata filter first reads every matching ID from SQLite, which costs more than the search.

Chroma runs embedded, on disk under the index folder, or as a client of a Chroma server
(`sidecar.chroma_url`), so replicas of the sidecar can share one vector store while each keeps
its own Whoosh index. Vectors are computed by the sidecar (batched, cached) and passed in; no
documents are stored in Chroma, because the text already lives in the sidecar's store and
storing it again triples Chroma's insert cost.

Each collection records the identity of the model its vectors came from. A collection made by
another model is dropped and rebuilt rather than mixed.

A vector's Chroma ID is its item's ID (page key or chunk ID) and the hash of the text it was
embedded from, and its metadata names the item. A changed vector is added under its new ID
before the old one is deleted, and a vector still in Chroma for the same text is kept, never
deleted and added back: Chroma 1.5's HNSW index loses some vectors re-added after their
collection was emptied (measured: 7 to 25 of 1,000 are then not found even by their own
embedding), so a collection emptied by deletions is also made anew.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from groundwiki.core.config.errors import GroundwikiError

from groundwiki_sidecar.base.health import passing_failure

log = logging.getLogger("groundwiki_sidecar")
MODEL_KEY = "groundwiki_model"
ITEM_KEY = "groundwiki_item"  # metadata: the page key, passage or chunk ID a vector belongs to
COLLECTIONS = {
    "page": "groundwiki-pages",
    "passage": "groundwiki-passages",
    "chunk": "groundwiki-chunks",
}
HASH_CHARS = 16  # of the embed hash, in the Chroma ID: tells versions of one item apart
BATCH = 5000


def vector_id(item: str, embed_hash: str) -> str:
    return f"{item}#{embed_hash[:HASH_CHARS]}"


def item_of(vector: str) -> str:
    """The page key or chunk ID of a Chroma ID (the hash is hex, so the last '#' splits)."""
    return vector.rpartition("#")[0]


@dataclass(frozen=True)
class VectorRow:
    item: str
    embed_hash: str
    vector: np.ndarray
    metadata: Mapping[str, Any]


class VectorStoreUnavailable(GroundwikiError):
    """Chroma cannot be reached or opened; the message says where and how to fix it."""


def _probe(collection: Any) -> None:
    """Read one stored vector and search with it: what a query needs (Chroma's SQLite and its
    HNSW files) is readable. Raises what Chroma raises when it is not."""
    if collection.count() == 0:
        return
    found = collection.get(limit=1, include=["embeddings"])
    embeddings = found.get("embeddings")
    if embeddings is not None and len(embeddings):
        collection.query(query_embeddings=[embeddings[0]], n_results=1, include=[])


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
    except BaseException as exc:  # chromadb raises many types for an unreachable server
        if not _failure(exc):
            raise
        where = url or str(folder)
        raise VectorStoreUnavailable(f"cannot open Chroma at {where}: {exc}") from exc


def _failure(exc: BaseException) -> bool:
    """Whether Chroma failed (any Exception), as opposed to the process being interrupted.
    Chroma's Rust core reports some failures (out of descriptors) as a pyo3 panic, which
    derives from BaseException and cannot be imported to be caught by type."""
    return isinstance(exc, Exception) or type(exc).__name__ == "PanicException"


def _discard(folder: Path) -> None:
    """Delete a local Chroma folder, and Chroma's in-process handle on it (kept per path, so a
    new client would otherwise reuse the damaged one)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(str(folder), None)
    SharedSystemClient._identifier_to_refcount.pop(str(folder), None)
    if system is not None:
        with contextlib.suppress(Exception):
            system.stop()
    shutil.rmtree(folder)


class VectorIndex:
    def __init__(
        self, folder: Path, model: str, url: str | None = None, writer: bool = True
    ) -> None:
        self.model = model
        self.writer = writer
        self.local = not url  # a shared server's collection is never dropped by one replica
        # Why a damaged local store was made anew ("" if it was not): every vector is then
        # written again, from the embedding cache.
        self.rebuilt = ""
        try:
            self._open(folder, url)
        except VectorStoreUnavailable as exc:
            if not self.local or not folder.exists():
                raise
            if passing_failure(exc):
                raise VectorStoreUnavailable(
                    f"{exc}. The store is not known to be damaged, so it is kept: fix the cause "
                    "(open files, disk space, permissions) and restart"
                ) from exc
            log.warning("%s; it only holds vectors, so it is made anew", exc)
            try:
                _discard(folder)
            except OSError as failed:
                raise VectorStoreUnavailable(
                    f"{exc}; deleting it failed ({failed}): delete {folder} and restart"
                ) from failed
            self.rebuilt = str(exc)
            self._open(folder, url)

    def _open(self, folder: Path, url: str | None) -> None:
        self.client = _client(folder, url)
        self.model_changed = False
        try:
            self.collections = {kind: self._collection(name) for kind, name in COLLECTIONS.items()}
            if self.local:
                for collection in self.collections.values():
                    _probe(collection)
        except BaseException as exc:  # a damaged database or HNSW index: Chroma raises many types
            if not _failure(exc):
                raise
            raise VectorStoreUnavailable(f"cannot read Chroma at {folder}: {exc}") from exc

    def _collection(self, name: str) -> Any:
        existing = {
            c.name if hasattr(c, "name") else str(c) for c in self.client.list_collections()
        }
        if name in existing:
            collection = self.client.get_collection(name)
            found = (collection.metadata or {}).get(MODEL_KEY)
            if found == self.model:
                return _sparse_targets_once(collection)
            if not self.writer:
                raise VectorStoreUnavailable(
                    f"the shared Chroma collection {name} holds vectors of {found}, and this "
                    f"replica embeds queries with {self.model}: give it the writer's embedding "
                    "settings"
                )
            self.client.delete_collection(name)  # another model's vectors: never mix them
            self.model_changed = True
        created = self.client.create_collection(
            name,
            metadata={MODEL_KEY: self.model},
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        return _sparse_targets_once(created)

    @property
    def pages(self) -> Any:
        return self.collections["page"]

    @property
    def chunks(self) -> Any:
        return self.collections["chunk"]

    def collection(self, kind: str) -> Any:
        return self.collections[kind]

    def write(self, kind: str, rows: Sequence[VectorRow]) -> None:
        """Store these vectors, then delete every other vector of their items. A vector already
        stored for the same text is kept as it is."""
        if not rows:
            return
        collection = self.collection(kind)
        ids = [vector_id(r.item, r.embed_hash) for r in rows]
        present = set(collection.get(ids=ids, include=[])["ids"])
        new = [(i, r) for i, r in zip(ids, rows, strict=True) if i not in present]
        if new:
            collection.add(
                ids=[i for i, _ in new],
                embeddings=np.stack([r.vector for _, r in new]),
                metadatas=[{**r.metadata, ITEM_KEY: r.item} for _, r in new],
            )
        wanted = set(ids)
        older = [v for v in self._ids_of(kind, [r.item for r in rows]) if v not in wanted]
        if older:
            collection.delete(ids=older)

    def delete_items(self, kind: str, items: Sequence[str]) -> None:
        """Every vector of these pages or chunks."""
        doomed = self._ids_of(kind, items)
        if doomed:
            self.delete(kind, doomed)

    def delete(self, kind: str, vector_ids: Sequence[str]) -> None:
        """By Chroma ID. A collection left empty is made anew (see the module's docstring)."""
        collection = self.collection(kind)
        for start in range(0, len(vector_ids), BATCH):
            collection.delete(ids=list(vector_ids[start : start + BATCH]))
        if vector_ids and self.local and collection.count() == 0:
            self.client.delete_collection(COLLECTIONS[kind])
            self.collections[kind] = self._collection(COLLECTIONS[kind])

    def _ids_of(self, kind: str, items: Iterable[str]) -> list[str]:
        collection = self.collection(kind)
        wanted = list(dict.fromkeys(items))
        found: list[str] = []
        for start in range(0, len(wanted), BATCH):
            part = wanted[start : start + BATCH]
            found += collection.get(where={ITEM_KEY: {"$in": part}}, include=[])["ids"]
        return found

    def vector_ids(self, kind: str) -> set[str]:
        """Every Chroma ID in the collection."""
        collection = self.collection(kind)
        found: set[str] = set()
        offset = 0
        while True:
            batch = collection.get(include=[], limit=BATCH, offset=offset)["ids"]
            found.update(batch)
            if len(batch) < BATCH:
                return found
            offset += len(batch)

    def ids(self, kind: str) -> set[str]:
        """The pages or chunks that have a vector."""
        return {item_of(v) for v in self.vector_ids(kind)}

    def count(self, kind: str) -> int:
        return int(self.collection(kind).count())

    def query(
        self, kind: str, vector: np.ndarray, limit: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """(page key, passage or chunk ID, cosine distance) nearest first, each item once."""
        # No count() first: Chroma answers an empty or small collection with what it has, and
        # the count is another SQLite round trip on every query.
        found = self.collection(kind).query(
            query_embeddings=[vector],
            n_results=limit,
            where=dict(where) if where else None,
            include=["distances"],
        )
        nearest: dict[str, float] = {}
        for stored_id, distance in zip(found["ids"][0], found["distances"][0], strict=True):
            # An item's old and new vector are both stored for a moment while it is replaced.
            nearest.setdefault(item_of(stored_id), distance)
        return list(nearest.items())


def _sparse_targets_once(collection: Any) -> Any:
    """The collection, asking its schema for sparse-embedding targets once, not on every `add`.

    Chroma's client reads the collection's schema back from JSON on each `add` to find metadata
    keys it must embed sparsely (this sidecar has none). The page collection's schema holds a
    key per tag (`tag:<name>`, the filters of the semantic lane): with 1,174 tags at 10,000
    pages that took 40 ms of Python per `add`, holding the interpreter while an edit's batch
    waited. The schema the client holds only changes when the collection object is made again
    (its model replaced), so the answer is kept while that object is the same."""
    ask = getattr(collection, "_get_sparse_embedding_targets", None)
    if ask is None:  # another Chroma: nothing to keep
        return collection
    kept: list[tuple[object, Any]] = []

    def targets() -> Any:
        schema = getattr(getattr(collection, "_model", None), "serialized_schema", None)
        if not kept or kept[0][0] is not schema:
            kept[:] = [(schema, ask())]
        return kept[0][1]

    try:
        collection._get_sparse_embedding_targets = targets
    except (AttributeError, TypeError, ValueError):  # a model class refusing attributes
        return collection
    return collection
