"""The sidecar's own state in one SQLite file: the manifest, chunk texts and cached embeddings.

- `items`: one row per indexed page, passage or chunk with the hash of what the lexical index holds for
  it (`content_hash`), the hash of the text it is embedded from (`embed_hash`) and the
  `embed_hash` whose vector is in Chroma (`vector_hash`, NULL while the vector is pending).
  `vector_hash` is NULL or equal to `embed_hash` (a new `embed_hash` clears it, and a vector is
  recorded only for the current one), so the counts read two small indexes, not the table.
  Reconciling against the files compares hashes, so nothing unchanged is indexed twice.
- `chunks`: each raw-source chunk's text, kept once here (not as Chroma documents, which would
  triple Chroma's insert cost; not as Whoosh stored fields, which are slower to read back).
- `vectors`: embeddings by (model identity, text hash), so a text is never embedded twice,
  across restarts too.
- `meta`: the model identity, the index generation, the last sync time and the layout of the
  manifest tables (`STORE_VERSION`). A store of an older layout has its manifest made anew (the
  next sync lists every item again, and finds their vectors already in Chroma); the embedding
  cache is kept, so nothing is embedded twice.

Writes happen in transactions and the file is in WAL mode, so readers always see a committed
state, and a process killed mid-write leaves the last committed state behind.

Everything here can be derived again from the files (embeddings at a cost), so a damaged file
(a torn page, a header overwritten, a file cut short: `PRAGMA quick_check` at opening) is never
served from: the indexer, which holds the index folder, has it made anew; any other reader is
told which file to delete.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from groundwiki_sidecar.base.settings import IndexUnusable

log = logging.getLogger("groundwiki_sidecar")

STORE_VERSION = "2"  # 2: passages in the manifest
KINDS = ("page", "passage", "chunk")
_KIND_ORDER = "CASE kind " + " ".join(f"WHEN '{k}' THEN {n}" for n, k in enumerate(KINDS)) + " END"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('page', 'passage', 'chunk')),
    content_hash TEXT NOT NULL,
    embed_hash TEXT NOT NULL,
    vector_hash TEXT
);
CREATE INDEX IF NOT EXISTS items_pending ON items (kind) WHERE vector_hash IS NULL;
CREATE INDEX IF NOT EXISTS items_kind ON items (kind);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
);
"""


class StoreDamaged(IndexUnusable):
    """The store file fails SQLite's integrity check; the message says which file to delete."""


class StoreUnreadable(IndexUnusable):
    """The store could not be checked for a reason that says nothing about its contents (no
    file descriptors left, a full disk, an I/O error, a lock): it is left as it is."""


# The only answers that say the file itself is damaged: SQLITE_CORRUPT and SQLITE_NOTADB.
# Everything else (SQLITE_CANTOPEN on EMFILE, SQLITE_IOERR, SQLITE_FULL, SQLITE_BUSY) can pass,
# and deleting a healthy store for it would throw away every cached embedding.
_DAMAGE_CODES = {11, 26}


def _open_checked(path: Path, repair: bool) -> sqlite3.Connection:
    problem = ""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        found = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
        if found != ["ok"]:
            problem = "; ".join(str(line) for line in found[:3])
    except sqlite3.DatabaseError as exc:  # "file is not a database", "disk image is malformed"
        if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in _DAMAGE_CODES:
            db.close()
            raise StoreUnreadable(
                f"cannot read {path} ({exc}); it was left as it is: fix the cause (free disk "
                "space, raise the open-file limit, stop the process holding it) and start again"
            ) from exc
        problem = str(exc)
    if not problem:
        return db
    db.close()
    if not repair:
        raise StoreDamaged(
            f"{path} is damaged ({problem}): delete it (with any {path.name}-wal and "
            f"{path.name}-shm beside it) and start the sidecar, which rebuilds it from the files"
        )
    log.warning("%s is damaged (%s): rebuilding it from the files", path, problem)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None)


@dataclass(frozen=True)
class Item:
    id: str
    kind: str  # page | passage | chunk
    content_hash: str
    embed_hash: str


@dataclass(frozen=True)
class StoredChunk:
    id: str
    source: str
    start_line: int
    end_line: int
    content_hash: str
    text: str


class Store:
    def __init__(self, path: Path, embedded: tuple[str, ...] = KINDS, repair: bool = False) -> None:
        """`repair`: a damaged file is deleted and made anew (only for the process that holds
        the index folder); otherwise `StoreDamaged` is raised."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # The kinds that get vectors: only their missing vectors count as pending.
        self._kinds_embedded = tuple(kind for kind in embedded if kind in KINDS)
        self._kinds = "(" + ", ".join(f"'{kind}'" for kind in self._kinds_embedded) + ")"
        self._lock = threading.RLock()  # one connection, shared by the sidecar's threads
        self._writes = 0  # committed transactions: what cached counts are checked against
        self._view_counts: dict[int, tuple[int, dict[str, int]]] = {}
        self._pending_counts: dict[str, tuple[int, int]] = {}
        self._vector_counts: tuple[int, dict[str, tuple[int, int]]] | None = None
        # Items an edit changed, embedded before the backlog (`pending`): in memory only, since
        # after a restart no writer is waiting for one of them.
        self._urgent: dict[str, None] = {}
        self._db = _open_checked(path, repair)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        if repair:  # only the process that holds the index folder changes its layout
            self._upgrade()
        self._db.executescript(SCHEMA)
        if repair and self.get_meta("store_version") != STORE_VERSION:
            with self.transaction() as db:
                Store.set_meta(db, "store_version", STORE_VERSION)
        if repair:
            with self.transaction() as db:
                # A vector of another text than the item's (none is written so now): pending,
                # as the counts read it.
                db.execute(
                    "UPDATE items SET vector_hash = NULL "
                    "WHERE vector_hash IS NOT NULL AND vector_hash != embed_hash"
                )

    def _upgrade(self) -> None:
        """A manifest of an older layout (its CHECK admits fewer kinds) is dropped whole: the
        next sync lists every item again. Vectors and their cache stay."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        if "items" not in tables:
            return
        found = self._db.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone()
        if found is not None and found[0] == STORE_VERSION:
            return
        log.warning("%s has an older layout: its manifest is made anew", self.path)
        with self.transaction() as db:
            db.execute("DROP TABLE items")
            db.execute("DROP TABLE IF EXISTS chunks")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                # A COMMIT that failed (a full disk) leaves the transaction open: rolled back
                # here, or every later BEGIN would fail after the disk has room again.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._writes += 1

    # --- meta ------------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @staticmethod
    def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        return int(self.get_meta("generation") or 0)

    # --- the manifest ----------------------------------------------------------------------------

    def items(self) -> dict[str, Item]:
        with self._lock:
            rows = self._db.execute("SELECT id, kind, content_hash, embed_hash FROM items")
            return {row[0]: Item(*row) for row in rows}

    def counts(self) -> dict[str, int]:
        totals, pending = self._tallies()
        counts = {kind: 0 for kind in KINDS} | {f"{kind}_vectors": 0 for kind in KINDS}
        for kind, total in totals.items():
            counts[kind] = total
            counts[f"{kind}_vectors"] = total - pending.get(kind, 0)
        return counts

    def _tallies(self) -> tuple[dict[str, int], dict[str, int]]:
        """Items per kind, and those whose vector is pending: two indexes read, not the table
        (it holds every passage and chunk too)."""
        with self._lock:
            totals = self._db.execute("SELECT kind, COUNT(*) FROM items GROUP BY kind")
            found_totals = {kind: int(n) for kind, n in totals.fetchall()}
            pending = self._db.execute(
                "SELECT kind, COUNT(*) FROM items WHERE vector_hash IS NULL GROUP BY kind"
            )
            return found_totals, {kind: int(n) for kind, n in pending.fetchall()}

    def counts_of(self, ids: Iterable[str]) -> dict[str, int]:
        """`counts()` over these item IDs only (one viewer's items in a scoped wiki), counted
        once per write and set of IDs."""
        wanted = tuple(ids)
        key = hash(wanted)
        with self._lock:
            known = self._view_counts.get(key)
            if known is not None and known[0] == self._writes:
                return dict(known[1])
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id TEXT PRIMARY KEY)")
            self._db.execute("DELETE FROM wanted")
            self._db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((i,) for i in wanted))
            rows = self._db.execute(
                "SELECT kind, COUNT(*), COUNT(vector_hash), "
                "SUM(vector_hash IS NULL OR vector_hash != embed_hash) "
                "FROM items JOIN wanted USING (id) GROUP BY kind"
            ).fetchall()
            self._db.execute("DELETE FROM wanted")
        counts = {kind: 0 for kind in KINDS} | {f"{kind}_vectors": 0 for kind in KINDS}
        counts |= {f"{kind}_pending": 0 for kind in KINDS}
        for kind, total, embedded, pending in rows:
            counts[kind] = total
            counts[f"{kind}_vectors"] = embedded
            counts[f"{kind}_pending"] = int(pending or 0)
        if len(self._view_counts) > 64:
            self._view_counts.clear()
        self._view_counts[key] = (self._writes, counts)
        return dict(counts)

    def hurry(self, ids: Iterable[str]) -> None:
        """Embed these (an edit's items) before anything else pending."""
        with self._lock:
            self._urgent.update(
                (i, None) for i in ids if i.partition(":")[0] in self._kinds_embedded
            )

    def has_urgent(self) -> bool:
        """Whether an edit's items may be waiting (some may be embedded already: `pending`
        tells)."""
        return bool(self._urgent)

    def pending(self, limit: int) -> list[tuple[str, str, str]]:
        """Items whose vector is missing or stale: (id, kind, embed_hash), pages first, then
        passages, then chunks: a page's own vector is what page search needs most. Items an
        edit changed (`hurry`) come alone first, still pending, so that a first sync's backlog
        of thousands does not keep an edited page out of semantic search for minutes."""
        with self._lock:
            urgent = self._still_urgent(limit)
            if urgent:
                return urgent
            return self._db.execute(
                "SELECT id, kind, embed_hash FROM items "
                f"WHERE (vector_hash IS NULL OR vector_hash != embed_hash) AND kind IN {self._kinds} "
                f"ORDER BY {_KIND_ORDER}, id LIMIT ?",
                (limit,),
            ).fetchall()

    def _still_urgent(self, limit: int) -> list[tuple[str, str, str]]:
        found: list[tuple[str, str, str]] = []
        while self._urgent and not found:
            ids = list(self._urgent)[:500]
            marks = ", ".join("?" * len(ids))
            rows = self._db.execute(
                f"SELECT id, kind, embed_hash FROM items WHERE id IN ({marks}) "
                "AND (vector_hash IS NULL OR vector_hash != embed_hash)",
                ids,
            ).fetchall()
            pending = {row[0] for row in rows}
            for item_id in ids:
                if item_id not in pending:
                    del self._urgent[item_id]  # embedded, or gone
            order = {item_id: n for n, item_id in enumerate(ids)}
            found = sorted(rows, key=lambda row: (KINDS.index(row[1]), order[row[0]]))
        return found[:limit]

    def pending_count(self) -> int:
        with self._lock:
            row = self._db.execute(
                f"SELECT COUNT(*) FROM items WHERE vector_hash IS NULL AND kind IN {self._kinds}"
            ).fetchone()
        return int(row[0])

    def pending_count_of(self, kind: str) -> int:
        """Counted once per write, not per query: every search asks (the semantic lane is
        warming while vectors are pending), and the count scans the items table."""
        with self._lock:
            known = self._pending_counts.get(kind)
            if known is not None and known[0] == self._writes:
                return known[1]
            row = self._db.execute(
                "SELECT COUNT(*) FROM items WHERE kind = ? AND vector_hash IS NULL "
                f"AND kind IN {self._kinds}",
                (kind,),
            ).fetchone()
            self._pending_counts[kind] = (self._writes, int(row[0]))
        return int(row[0])

    def vector_counts(self) -> dict[str, tuple[int, int]]:
        """Per kind (items, items whose vector is current), counted once per write: every
        answer says how much of what it searched has vectors."""
        with self._lock:
            known = self._vector_counts
            if known is not None and known[0] == self._writes:
                return dict(known[1])
            found_totals, found_pending = self._tallies()
            found = {kind: (0, 0) for kind in KINDS}
            for kind, total in found_totals.items():
                current = total - found_pending.get(kind, 0)
                found[kind] = (int(total), current if kind in self._kinds_embedded else 0)
            self._vector_counts = (self._writes, found)
        return dict(found)

    @staticmethod
    def put_items(db: sqlite3.Connection, items: Iterable[Item]) -> None:
        # A changed embed_hash makes the vector stale; an unchanged one keeps it.
        db.executemany(
            "INSERT INTO items (id, kind, content_hash, embed_hash, vector_hash) "
            "VALUES (?, ?, ?, ?, NULL) ON CONFLICT(id) DO UPDATE SET "
            "kind = excluded.kind, content_hash = excluded.content_hash, "
            "vector_hash = CASE WHEN items.embed_hash = excluded.embed_hash "
            "THEN items.vector_hash ELSE NULL END, embed_hash = excluded.embed_hash",
            [(i.id, i.kind, i.content_hash, i.embed_hash) for i in items],
        )

    @staticmethod
    def delete_items(db: sqlite3.Connection, ids: Sequence[str]) -> None:
        db.executemany("DELETE FROM items WHERE id = ?", [(i,) for i in ids])
        db.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in ids])

    def forget_lexical(self) -> None:
        """Mark every item as not in the lexical index (it was rebuilt or lost): the next sync
        writes them all again. Vectors are kept."""
        with self.transaction() as db:
            db.execute("UPDATE items SET content_hash = ''")

    def mark_embedded(self, done: Sequence[tuple[str, str]]) -> None:
        """(id, embed_hash) pairs whose vectors are now in Chroma."""
        with self.transaction() as db:
            db.executemany(
                "UPDATE items SET vector_hash = ? WHERE id = ? AND embed_hash = ? "
                "AND vector_hash IS NULL",
                [(h, i, h) for i, h in done],
            )

    def vector_ids(self) -> set[str]:
        with self._lock:
            rows = self._db.execute("SELECT id FROM items WHERE vector_hash IS NOT NULL")
            return {row[0] for row in rows}

    def forget_vectors(self, ids: Iterable[str] | None = None) -> None:
        """Mark vectors as missing (all of them when no ids are given), to embed again."""
        with self.transaction() as db:
            if ids is None:
                db.execute("UPDATE items SET vector_hash = NULL")
            else:
                db.executemany(
                    "UPDATE items SET vector_hash = NULL WHERE id = ?", [(i,) for i in ids]
                )

    # --- chunk texts -----------------------------------------------------------------------------

    @staticmethod
    def put_chunks(db: sqlite3.Connection, chunks: Iterable[StoredChunk]) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO chunks (id, source, start_line, end_line, content_hash, text) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(c.id, c.source, c.start_line, c.end_line, c.content_hash, c.text) for c in chunks],
        )

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", part)
                found.update(dict(rows.fetchall()))
        return found

    # --- the embedding cache ---------------------------------------------------------------------

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(text_hashes), 500):
                part = list(text_hashes[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT text_hash, vector FROM vectors WHERE model = ? AND text_hash IN ({marks})",
                    [model, *part],
                )
                for text_hash, blob in rows:
                    found[text_hash] = np.frombuffer(blob, dtype=np.float32)
        return found

    def cache_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors (model, text_hash, vector) VALUES (?, ?, ?)",
                [(model, h, v.astype(np.float32).tobytes()) for h, v in vectors.items()],
            )

    # --- vector bookkeeping ----------------------------------------------------------------------

    def embed_states(self, ids: Sequence[str]) -> dict[str, str]:
        """The current `embed_hash` of each of these items that still exists: what the vector
        writer checks, under its lock, right before it writes to Chroma."""
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT id, embed_hash FROM items WHERE id IN ({marks})", part
                )
                found.update(dict(rows.fetchall()))
        return found

    def embedded(self, ids: Sequence[str]) -> set[str]:
        """The items among these whose vector is that of their current text."""
        with self._lock:
            marks = ",".join("?" * len(ids))
            rows = self._db.execute(
                f"SELECT id FROM items WHERE id IN ({marks}) AND vector_hash = embed_hash",
                list(ids),
            )
            return {row[0] for row in rows}

    def vector_states(self) -> dict[str, tuple[str, str | None]]:
        """Every item's (embed_hash, vector_hash): how start-up reconciles Chroma."""
        with self._lock:
            rows = self._db.execute("SELECT id, embed_hash, vector_hash FROM items")
            return {row[0]: (row[1], row[2]) for row in rows}
