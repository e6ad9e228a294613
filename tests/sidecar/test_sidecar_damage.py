"""A damaged index folder: each damaged part is rebuilt from the files on its own at start-up,
or refused with one line naming what to delete. Real Whoosh, SQLite and Chroma files, damaged
on disk as a crash, a full disk or a stray command leaves them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from groundwiki_sidecar.base.settings import Sidecar
from groundwiki_sidecar.index.state_store import Store, StoreDamaged
from helpers.sidecar_helpers import expected_ids, finds, indexed, restarted


def segments(sidecar: Sidecar) -> list[Path]:
    found = sorted((sidecar.index_dir / "whoosh/pages").glob("*.seg"))
    assert found, "the fixture has a Whoosh segment"
    return found


def zero_header(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"\0" * 100)


def test_a_deleted_whoosh_segment_is_rebuilt_from_the_files(tmp_path):
    sidecar = indexed(tmp_path)
    segments(sidecar)[0].unlink()
    service = restarted(sidecar)
    try:
        assert finds(service, "flutter", "wing", ("lexical",))
        assert service.indexer.lexical.ids()[0] == expected_ids(sidecar)[0]
    finally:
        service.stop()


def test_a_truncated_whoosh_segment_is_rebuilt_from_the_files(tmp_path):
    sidecar = indexed(tmp_path)
    segment = segments(sidecar)[0]
    os.truncate(segment, segment.stat().st_size // 2)
    service = restarted(sidecar)
    try:
        assert finds(service, "flutter", "wing", ("lexical",))
        assert service.indexer.lexical.ids()[1] == expected_ids(sidecar)[1]
    finally:
        service.stop()


def test_a_store_with_its_header_overwritten_is_rebuilt(tmp_path):
    sidecar = indexed(tmp_path)
    zero_header(sidecar.index_dir / "store.sqlite")
    service = restarted(sidecar)
    try:
        assert (service.status().pages, service.status().chunks) == (
            3,
            len(expected_ids(sidecar)[1]),
        )
        assert finds(service, "flutter", "wing", ("lexical",))
    finally:
        service.stop()


def test_a_store_cut_to_half_is_detected_and_rebuilt(tmp_path):
    sidecar = indexed(tmp_path, embed=True)  # vectors make the file several pages long
    store = sidecar.index_dir / "store.sqlite"
    os.truncate(store, store.stat().st_size // 2)
    service = restarted(sidecar)
    try:
        assert service.status().pages == 3
        assert finds(service, "flutter", "wing", ("lexical",))
    finally:
        service.stop()


def test_a_damaged_store_is_refused_in_one_line_by_a_reader_not_holding_the_folder(tmp_path):
    sidecar = indexed(tmp_path)
    store = sidecar.index_dir / "store.sqlite"
    zero_header(store)
    with pytest.raises(StoreDamaged) as raised:
        Store(store)
    message = str(raised.value)
    assert "\n" not in message and str(store) in message and "delete it" in message


# For a child process: at most `limit` descriptors, all but `free` taken, so opening files fails.
LEAVE_FREE_DESCRIPTORS = """
import os, resource
def leave_free(limit, free):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    held = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    for _ in range(free):
        os.close(held.pop())
"""


# Run in a child: it leaves exactly one file descriptor free, so SQLite opens the store itself
# but not its -wal file, as a sidecar out of descriptors (EMFILE) would.
OUT_OF_DESCRIPTORS = (
    """
import sys
from pathlib import Path
from groundwiki_sidecar.index.state_store import Store
"""
    + LEAVE_FREE_DESCRIPTORS
    + """
leave_free(64, 1)
try:
    Store(Path(sys.argv[1]), repair=True)
except Exception as exc:  # StoreUnreadable: one line, the file left as it is
    print(exc)
    sys.exit(3)
"""
)


def test_a_healthy_store_is_kept_when_it_cannot_be_opened_for_want_of_descriptors(tmp_path):
    path = tmp_path / "store.sqlite"
    store = Store(path)
    with store.transaction() as db:
        Store.set_meta(db, "model", "kept")
    store.close()
    child = [sys.executable, "-c", OUT_OF_DESCRIPTORS, str(path)]
    ran = subprocess.run(child, capture_output=True, text=True, check=False)
    assert ran.returncode == 3, ran.stderr
    assert Store(path).get_meta("model") == "kept"
    assert "left as it is" in ran.stdout


def test_deleted_chroma_hnsw_files_are_rebuilt(tmp_path):
    sidecar = indexed(tmp_path, embed=True)
    # Chroma persists an HNSW index only past a few vectors; `indexed` writes enough.
    hnsw = [p for p in (sidecar.index_dir / "chroma").glob("*/*") if p.suffix == ".bin"]
    assert hnsw, "Chroma wrote no HNSW files: the test wiki no longer damages what it means to"
    for path in hnsw:
        path.unlink()
    service = restarted(sidecar, embed=True)
    try:
        assert service.wait_embedded(120)
        assert finds(service, "why do wings flutter", "wing", ("semantic",))
    finally:
        service.stop()


def test_a_damaged_chroma_database_is_rebuilt(tmp_path):
    sidecar = indexed(tmp_path, embed=True)
    database = sidecar.index_dir / "chroma/chroma.sqlite3"
    zero_header(database)
    service = restarted(sidecar, embed=True)
    try:
        assert service.indexer.vectors is not None, service.indexer.semantic_problem
        assert service.wait_embedded(120)
        assert finds(service, "why do wings flutter", "wing", ("semantic",))
        assert service.status().lanes["semantic"]["state"] == "ok"
    finally:
        service.stop()


def test_a_garbage_compile_cache_is_ignored(tmp_path):
    sidecar = indexed(tmp_path)
    (sidecar.index_dir / "compile-cache.json").write_bytes(os.urandom(4096))
    service = restarted(sidecar)
    try:
        assert finds(service, "flutter", "wing", ("lexical",))
    finally:
        service.stop()


# Run in a child that imports Chroma once (seconds of CPU) and then, for each number of free
# descriptors read from its input, forks a process that has never opened Chroma, leaves that many
# descriptors free and opens the store: each attempt starts as fresh as a process of its own.
CHROMA_OUT_OF_DESCRIPTORS = (
    """
import json, os, sys, traceback
from pathlib import Path
import chromadb
from groundwiki_sidecar.index.chroma_index import VectorIndex, VectorStoreUnavailable
"""
    + LEAVE_FREE_DESCRIPTORS
    + """
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            leave_free(256, int(line))
            try:
                VectorIndex(Path(sys.argv[1]), "model")
                code, said = 0, ""
            except VectorStoreUnavailable as exc:
                code, said = 3, str(exc)
            print(json.dumps({"said": said}), flush=True)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    print(json.dumps({"exit": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}), flush=True)
"""
)


def test_a_healthy_chroma_store_is_kept_when_it_cannot_be_opened_for_want_of_descriptors(
    tmp_path,
):
    import numpy as np
    from groundwiki_sidecar.index.chroma_index import VectorIndex, VectorRow

    folder = tmp_path / "chroma"
    rng = np.random.default_rng(7)
    rows = [VectorRow(f"c{n}", f"h{n}", rng.random(8), {"n": n}) for n in range(200)]
    VectorIndex(folder, "model").write("chunk", rows)
    refused = 0
    errors = tmp_path / "stderr"
    with errors.open("w") as sink:
        child = subprocess.Popen(
            [sys.executable, "-c", CHROMA_OUT_OF_DESCRIPTORS, str(folder)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink, text=True,
        )  # fmt: skip
    watchdog = threading.Timer(300, child.kill)  # a hung attempt ends the child, and the test
    watchdog.start()
    try:
        # Every count from 2 up: Chroma's files fail to open at several points along the way
        # (its socket pair, SQLite, its first read), and from some count on it opens.
        for free in range(2, 30):
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(f"{free}\n")
            child.stdin.flush()
            said, ended = "", None  # None: the child ended (its output stops)
            while line := child.stdout.readline():
                answer = json.loads(line)
                if "exit" in answer:
                    ended = answer["exit"]
                    break
                said = answer["said"]
            assert ended in {0, 3}, (free, ended, errors.read_text()[-2000:])
            if ended == 3:
                refused += 1
                assert "it is kept" in said
            assert len(VectorIndex(folder, "model").ids("chunk")) == 200
    finally:
        watchdog.cancel()
        child.kill()
        child.communicate()
    assert refused, "no descriptor limit made Chroma fail to open: the test checks nothing"


def test_only_damage_and_not_a_passing_failure_makes_an_index_be_rebuilt():
    """Whoosh reports running out of descriptors as an empty index (with the OSError as its
    context), and a full disk or a busy database can look like damage too: those keep the
    index. A missing segment or a cut-short file is damage."""
    import errno as codes

    from groundwiki_sidecar.base.health import passing_failure
    from whoosh.index import EmptyIndexError

    try:
        try:
            raise OSError(codes.EMFILE, "Too many open files")
        except OSError:
            raise EmptyIndexError("no index")  # noqa: B904 - as Whoosh does
    except EmptyIndexError as masked:
        assert passing_failure(masked)
    assert passing_failure(OSError(codes.ENOSPC, "No space left on device"))
    assert passing_failure(RuntimeError("error returned from database: (code: 14) unable to open"))
    assert not passing_failure(FileNotFoundError(codes.ENOENT, "MAIN_1.seg"))
    assert not passing_failure(EOFError("Ran out of input"))
    assert not passing_failure(RuntimeError("(code: 26) file is not a database"))


UNEXPLAINED_FAILURE_OUT_OF_DESCRIPTORS = (
    """
import sys
from groundwiki_sidecar.base.health import passing_failure
unexplained = RuntimeError("Error sending backfill request to compactor: Error purging logs")
before = passing_failure(unexplained)
"""
    + LEAVE_FREE_DESCRIPTORS
    + """
leave_free(256, 5)
print(before, passing_failure(unexplained))
"""
)


def test_a_failure_that_does_not_say_why_is_passing_while_descriptors_run_short():
    """Chroma's Rust core can report a shortage of descriptors as a failed log purge (seen
    in CI): the store must be kept while the process cannot open more files."""
    child = [sys.executable, "-c", UNEXPLAINED_FAILURE_OUT_OF_DESCRIPTORS]
    ran = subprocess.run(child, capture_output=True, text=True, check=True, timeout=60)
    assert ran.stdout.split() == ["False", "True"]
