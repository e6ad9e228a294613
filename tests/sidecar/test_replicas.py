"""Replicas: two sidecars, each with its own checkout, Whoosh and store, sharing one real Chroma
server (`chroma run`). One writes the vectors; the other (`vector_writer: false`) only reads
them: it never embeds a page or chunk and never deletes a vector."""

from __future__ import annotations

import shutil

from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from helpers.sidecar_helpers import small_wiki, wait_for
from helpers.wikis import page
from test_sidecar_process import chroma_server  # noqa: F401 - the fixture


def test_a_reader_replica_takes_the_writers_vectors_and_deletes_none(tmp_path, chroma_server):  # noqa: F811
    writer_root, reader_root = tmp_path / "writer", tmp_path / "reader"
    small_wiki(writer_root, {"chroma_url": chroma_server})
    shutil.copytree(writer_root, reader_root)
    config = reader_root / "mkdocs.yml"
    config.write_text(
        config.read_text().replace("sidecar:", "sidecar:\n      vector_writer: false", 1)
    )
    writer = SidecarService(load_sidecar(writer_root / "mkdocs.yml"))
    reader = SidecarService(load_sidecar(config))
    try:
        writer.start(watch=False)
        assert writer.wait_embedded(120)
        reader.start(watch=False)
        assert reader.wait_embedded(60)
        status = reader.status()
        assert status.page_vectors == status.pages and status.chunk_vectors == status.chunks
        assert reader.indexer.embedder.calls == 0  # nothing embedded but queries
        assert status.lanes["semantic"]["state"] == "ok"
        hits = reader.indexer.vectors.query(
            "page", reader.indexer.embedder.embed_query("flutter"), 3
        )
        assert hits and hits[0][0] == "wing"

        # The same new page in both checkouts: the writer embeds it, the reader takes it.
        new = page(title="Nozzles", summary="Nozzles choke at sonic speed.", body="# Nozzles\n")
        for root in (writer_root, reader_root):
            (root / "wiki/nozzle.md").write_text(new)
        writer.sync("edit")
        reader.sync("edit")
        assert writer.wait_embedded(60)
        wait_for(lambda: reader.status().page_vectors == reader.status().pages, 30, "adoption")
        assert reader.indexer.embedder.calls == 0

        # A page deleted in the reader's checkout only: the writer's vector stays.
        (reader_root / "wiki/shock.md").unlink()
        reader.sync("edit")
        assert "shock" in writer.indexer.vectors.ids("page")
    finally:
        reader.stop()
        writer.stop()


def test_a_reader_without_a_shared_server_says_what_is_missing(tmp_path):
    sidecar = small_wiki(tmp_path, {"vector_writer": False})
    service = SidecarService(sidecar)
    try:
        service.start(watch=False)
        lane = service.status().lanes["semantic"]
        assert lane["state"] == "unavailable"
        assert "set chroma_url" in lane["reason"]
    finally:
        service.stop()
