"""A record's content hash is the hash of its fields as `asdict` gives them: the manifests that
earlier versions wrote keep matching, so an upgrade re-indexes nothing that did not change."""

from __future__ import annotations

from dataclasses import asdict

from groundwiki_sidecar.index.documents import ChunkRecord, PageRecord, PassageRecord, _hash


def test_content_hashes_equal_the_hash_of_asdict() -> None:
    records = [
        PageRecord(
            key="wing", title="Wing é 🙂", summary="S.", tags=("aero", "b"), body="Body\n" * 50,
            kind="concept", usage_mode="always", stale_since=None, archived_since="2026-01-01",
            path="wiki/wing.md", lead="Lead.", scope="user:ada",
        ),
        ChunkRecord(id="c1", source="raw-sources/a.md", start_line=1, end_line=9, text="t",
                    chunk_hash="h"),
        PassageRecord(id="p1", page="wing", path="wiki/wing.md", heading_path=("A", "B"),
                      start_line=3, end_line=7, text="text", passage_hash="h", embed="e"),
    ]  # fmt: skip
    for record in records:
        assert record.content_hash == _hash(asdict(record))
