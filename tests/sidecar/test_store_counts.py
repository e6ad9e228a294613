"""The manifest's counts read two indexes of the items table (state_store.py), which holds
only when an item's vector is pending or of its current text: these pin that rule through
every write that touches vectors, and the repair of a store written otherwise."""

from __future__ import annotations

import sqlite3

from groundwiki_sidecar.index.state_store import Item, Store


def _counts_by_scan(path) -> dict[str, tuple[int, int]]:
    """The counts the slow way: every row read, a vector current only for its text."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT kind, COUNT(*), SUM(vector_hash IS NOT NULL AND vector_hash = embed_hash) "
            "FROM items GROUP BY kind"
        ).fetchall()
    return {kind: (total, int(current or 0)) for kind, total, current in rows}


def test_counts_follow_every_write_that_touches_vectors(tmp_path):
    path = tmp_path / "store.sqlite"
    store = Store(path, repair=True)
    with store.transaction() as db:
        Store.put_items(db, [Item(f"page:p{i}", "page", "c", f"e{i}") for i in range(5)])
        Store.put_items(db, [Item("chunk:c1", "chunk", "c", "x")])
    store.mark_embedded([("page:p0", "e0"), ("page:p1", "e1"), ("page:p2", "stale")])
    assert store.vector_counts()["page"] == (5, 2)
    with store.transaction() as db:  # p0's text changed: its vector is pending again
        Store.put_items(
            db, [Item("page:p0", "page", "c2", "e0-new"), Item("page:p1", "page", "c2", "e1")]
        )
        Store.delete_items(db, ["page:p4"])
    store.mark_embedded([("page:p0", "e0")])  # computed from the old text: not recorded
    counts = store.counts()
    assert (counts["page"], counts["page_vectors"], counts["chunk"]) == (4, 1, 1)
    assert store.pending_count_of("page") == 3 and store.pending_count() == 4
    assert _counts_by_scan(path) == {
        kind: store.vector_counts()[kind] for kind in ("page", "chunk")
    }


def test_a_vector_of_another_text_is_pending_once_the_store_is_opened(tmp_path):
    path = tmp_path / "store.sqlite"
    store = Store(path, repair=True)
    with store.transaction() as db:
        Store.put_items(db, [Item("page:a", "page", "c", "e1"), Item("page:b", "page", "c", "e2")])
    store.mark_embedded([("page:a", "e1"), ("page:b", "e2")])
    store.close()
    with sqlite3.connect(path) as db:  # as a store written by another version might hold it
        db.execute("UPDATE items SET vector_hash = 'old' WHERE id = 'page:b'")
    reopened = Store(path, repair=True)
    assert reopened.vector_counts()["page"] == (2, 1)
    assert reopened.pending_count_of("page") == 1
