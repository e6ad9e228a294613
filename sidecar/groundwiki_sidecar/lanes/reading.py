"""What a lane reads of the sidecar above it, as Protocols: the indexer (its indexes, its store's
counts, its health), the snapshot a query runs on and the viewer's view of it.

The lanes stand at the bottom of the sidecar (the settings validate the `sidecar:` block with
the lane registry), below the indexes they rank: so they name here only the parts they use, and
`index.indexer.Indexer`, `index.views.Snapshot` and `index.views.View` fit these by their
shape, without the lanes importing them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol


class Health(Protocol):
    """The state of a piece of background work (`base.health.Health`)."""

    @property
    def failing(self) -> bool: ...

    def reason(self, others: Collection[str] = ()) -> str: ...


class LexicalRanker(Protocol):
    """BM25F over the Whoosh index (`index.whoosh_index.LexicalIndex`)."""

    def rank(
        self,
        kind: str,
        text: str,
        depth: int,
        *,
        require: Sequence[tuple[str, str]] = (),
        exclude: Sequence[tuple[str, str]] = (),
        report: Callable[[str], None] | None = None,
        scopes: Sequence[str] = (),
        hidden: Sequence[tuple[str, str]] = (),
        weight: Callable[[float, int], None] | None = None,
        skipped: Callable[[str], None] | None = None,
        stopword_idf: float = 0.0,
    ) -> list[tuple[str, float]]: ...


class VectorSearch(Protocol):
    """Nearest neighbours in the vector store (`index.chroma_index.VectorIndex`)."""

    def query(
        self, kind: str, vector: Any, limit: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]: ...


class QueryEmbedder(Protocol):
    """The embedding model, for a query (`embedding.embedders.Embedder`)."""

    def embed_query_bounded(self, text: str) -> tuple[Any, str]: ...


class PendingCounts(Protocol):
    """How many vectors are still to be computed (`index.state_store.Store`)."""

    def pending_count_of(self, kind: str) -> int: ...

    def counts_of(self, ids: Iterable[str]) -> Mapping[str, int]: ...


class VectorSettings(Protocol):
    """The settings that say what is embedded (`base.settings.SidecarSettings`)."""

    @property
    def embed_chunks(self) -> bool: ...

    @property
    def embed_passages(self) -> bool: ...


class SidecarSettingsHolder(Protocol):
    """A sidecar's configuration (`base.settings.Sidecar`)."""

    @property
    def settings(self) -> VectorSettings: ...


class LaneIndexer(Protocol):
    """What a lane reads of the indexer (`index.indexer.Indexer`)."""

    @property
    def sidecar(self) -> SidecarSettingsHolder: ...

    @property
    def snapshot(self) -> object | None:
        """The last batch's snapshot; None until the first sync has finished."""
        ...

    @property
    def ready_kinds(self) -> frozenset[str]:
        """The kinds of records the snapshot holds (the first sync adds them one by one)."""
        ...

    @property
    def sync_health(self) -> Health: ...

    @property
    def embed_health(self) -> Health: ...

    @property
    def lexical(self) -> LexicalRanker: ...

    @property
    def vectors(self) -> VectorSearch | None: ...

    @property
    def embedder(self) -> QueryEmbedder | None: ...

    @property
    def semantic_problem(self) -> str: ...

    @property
    def store(self) -> PendingCounts: ...


class PageFields(Protocol):
    """An indexed page's record (`index.documents.PageRecord`)."""

    @property
    def key(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def tags(self) -> Sequence[str]: ...

    @property
    def scope(self) -> str: ...


class PassageOfPage(Protocol):
    """An indexed passage's record (`index.documents.PassageRecord`)."""

    @property
    def page(self) -> str: ...


class LaneSnapshot(Protocol):
    """The records a query runs on (`index.views.Snapshot`); hashed by identity, one per
    batch, so a lane may cache what it derives from one."""

    @property
    def pages(self) -> Mapping[str, PageFields]: ...

    @property
    def passages(self) -> Mapping[str, PassageOfPage]: ...

    def passages_of(self, key: str) -> Sequence[PassageOfPage]: ...

    def __hash__(self) -> int: ...


class ScopedWiki(Protocol):
    """Whether a compiled wiki has user scopes (`core.wiki.compiled.Wiki`)."""

    @property
    def scoped(self) -> bool: ...


class LaneView(Protocol):
    """One viewer's view of a snapshot (`index.views.View`)."""

    @property
    def wiki(self) -> ScopedWiki: ...

    @property
    def item_ids(self) -> tuple[str, ...]:
        """The store's IDs of the viewer's pages and passages."""
        ...

    def others(self) -> frozenset[str]:
        """The users whose files the viewer must not be told of."""
        ...
