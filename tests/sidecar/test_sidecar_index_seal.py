"""The index folder may come from a less trusted place than the wiki (a CI cache restored by
prefix, a shared runner, an artifact): what in it a library would unpickle runs no code.

Whoosh unpickles its table of contents and parts of every segment file; the sidecar opens its
Whoosh index only if every file matches the seal (an HMAC under a per-user key kept outside the
checkout) its own last write recorded, and rebuilds it from the files otherwise. Chroma's HNSW
`index_metadata.pickle` is read by Chroma's Rust core, which resolves no Python globals: a
crafted one is refused as damage and the vectors are written again. Real Whoosh and Chroma
files, crafted on disk the way an attacker would."""

from __future__ import annotations

import io
import logging
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from groundwiki_sidecar.base.seal import KEY_DIR_ENV, KEY_FILE, SEAL_FILE
from groundwiki_sidecar.base.settings import Sidecar
from groundwiki_sidecar.index.chroma_index import VectorIndex, VectorRow
from helpers.sidecar_helpers import expected_ids, finds, indexed, restarted
from whoosh import __version__ as whoosh_version
from whoosh.filedb.structfile import StructFile
from whoosh.index import _CURRENT_TOC_VERSION, _FLOAT_SIZE, _INT_SIZE, _LONG_SIZE


@pytest.fixture(autouse=True)
def key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This user's key folder, kept apart from the real ~/.cache."""
    folder = tmp_path / "keys"
    monkeypatch.setenv(KEY_DIR_ENV, str(folder))
    return folder


class RunsCode:
    """A pickle payload: unpickling it creates `marker` (a folder, so nothing is left open)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.marker),))


def crafted_toc(marker: Path, generation: int) -> bytes:
    """A Whoosh table of contents in the current format whose schema runs code when read."""
    buffer = io.BytesIO()
    stream = StructFile(buffer)
    for size in (_INT_SIZE, _LONG_SIZE, _FLOAT_SIZE):
        stream.write_varint(size)
    stream.write_int(-12345)
    stream.write_int(_CURRENT_TOC_VERSION)
    for number in whoosh_version[:3]:
        stream.write_varint(number)
    stream.write_string(pickle.dumps(RunsCode(marker), 2))
    stream.write_int(generation)
    stream.write_int(0)
    stream.write_pickle([])
    return buffer.getvalue()


def crafted_segment(marker: Path) -> bytes:
    """A Whoosh compound segment file whose directory of parts runs code when read."""
    buffer = io.BytesIO()
    stream = StructFile(buffer)
    stream.write_long(_LONG_SIZE + _INT_SIZE)  # the directory starts right after the header
    stream.write_int(0)
    stream.write_pickle(RunsCode(marker))
    return buffer.getvalue()


def tocs(sidecar: Sidecar) -> list[Path]:
    found = sorted((sidecar.index_dir / "whoosh/pages").glob("_*_*.toc"))
    assert found, "the fixture has a Whoosh table of contents"
    return found


def test_a_crafted_whoosh_table_of_contents_runs_no_code_and_the_index_is_rebuilt(tmp_path):
    sidecar = indexed(tmp_path)
    marker = tmp_path / "ran"
    for toc in tocs(sidecar):
        toc.write_bytes(crafted_toc(marker, int(toc.stem.rsplit("_", 1)[1])))
    service = restarted(sidecar)
    try:
        assert not marker.exists()
        assert service.indexer.lexical_rebuilt
        assert finds(service, "flutter", "wing", ("lexical",))
        assert service.indexer.lexical.ids()[0] == expected_ids(sidecar)[0]
    finally:
        service.stop()


def test_a_crafted_whoosh_segment_file_runs_no_code_and_the_index_is_rebuilt(tmp_path):
    sidecar = indexed(tmp_path)
    marker = tmp_path / "ran"
    segments = sorted((sidecar.index_dir / "whoosh/chunks").glob("*.seg"))
    assert segments, "the fixture has a Whoosh segment"
    for segment in segments:
        segment.write_bytes(crafted_segment(marker))
    service = restarted(sidecar)
    try:
        assert not marker.exists()
        assert service.indexer.lexical.ids()[1] == expected_ids(sidecar)[1]
    finally:
        service.stop()


def test_a_restart_with_an_intact_seal_reuses_the_lexical_index(tmp_path, caplog):
    sidecar = indexed(tmp_path)
    with caplog.at_level(logging.WARNING, logger="groundwiki_sidecar"):
        service = restarted(sidecar)
    try:
        assert service.indexer.lexical_rebuilt == ""
        assert service.last is not None and service.last.changed == 0
        assert "rebuilt" not in caplog.text
        assert finds(service, "flutter", "wing", ("lexical",))
    finally:
        service.stop()


def test_an_index_sealed_with_another_users_key_is_rebuilt(tmp_path, monkeypatch, caplog):
    sidecar = indexed(tmp_path)
    monkeypatch.setenv(KEY_DIR_ENV, str(tmp_path / "another-user"))
    with caplog.at_level(logging.WARNING, logger="groundwiki_sidecar"):
        service = restarted(sidecar)
    try:
        assert service.indexer.lexical_rebuilt
        assert "was not written by this user's sidecar" in caplog.text
        assert finds(service, "flutter", "wing", ("lexical",))
    finally:
        service.stop()


def test_an_index_without_a_seal_is_rebuilt_once_and_then_reused(tmp_path):
    """A first start after upgrading: the index was written before seals existed."""
    sidecar = indexed(tmp_path)
    (sidecar.index_dir / SEAL_FILE).unlink()
    first = restarted(sidecar)
    try:
        assert first.indexer.lexical_rebuilt
    finally:
        first.stop()
    second = restarted(sidecar)
    try:
        assert second.indexer.lexical_rebuilt == ""
    finally:
        second.stop()


def test_the_key_is_created_readable_by_its_user_alone(tmp_path, key_dir):
    indexed(tmp_path)
    key = key_dir / KEY_FILE
    assert len(key.read_bytes()) == 32
    assert key.stat().st_mode & 0o777 == 0o600


def test_a_key_others_can_read_is_not_trusted(tmp_path, key_dir, caplog):
    sidecar = indexed(tmp_path)
    (key_dir / KEY_FILE).chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="groundwiki_sidecar"):
        service = restarted(sidecar)
    try:
        assert service.indexer.lexical_rebuilt
        assert "chmod 600" in caplog.text
    finally:
        service.stop()


def test_a_crafted_chroma_pickle_runs_no_code_and_the_store_is_made_anew(tmp_path):
    """Chroma writes `index_metadata.pickle` only past about a thousand vectors in a collection,
    more than a test wiki embeds in reasonable time: the store is filled directly, then opened
    the way the indexer opens it (whose `rebuilt` makes every vector be written again)."""
    folder = tmp_path / "chroma"
    vectors = VectorIndex(folder, "test-model")
    rows = np.random.default_rng(0).random((1500, 8), dtype=np.float32)
    vectors.write("page", [VectorRow(f"p{i}", "ab" * 8, row, {}) for i, row in enumerate(rows)])
    pickles = list(folder.glob("*/index_metadata.pickle"))
    assert pickles, "Chroma wrote no HNSW metadata: the test no longer reaches the pickle"
    SharedSystemClient.clear_system_cache()  # as a new process: nothing read stays in memory
    marker = tmp_path / "ran"
    for path in pickles:
        path.write_bytes(pickle.dumps(RunsCode(marker), 3))
    reopened = VectorIndex(folder, "test-model")
    assert not marker.exists()
    assert "pickle" in reopened.rebuilt
    assert reopened.count("page") == 0  # made anew: the indexer writes every vector again
