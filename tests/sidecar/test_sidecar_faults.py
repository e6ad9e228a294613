"""Faults while the sidecar runs: a page that trips the reader, a full disk, a replaced wiki
folder, a kill -9 during the parallel read. Each must show in /status and in every answer's
freshness, never stop the other files, and never leave the index folder unusable.

The full-disk tests mount a small real tmpfs (root only, as in CI, where they fail rather than
skip); elsewhere they skip."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from groundwiki.core.read.page_reader import PARALLEL_FROM
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from helpers.sidecar_helpers import small_wiki, wait_for
from helpers.wikis import page, write_wiki
from test_sidecar_process import BIN, ENV, free_port, get

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

HUGE = "raw-sources/notes.md#L1-L" + "9" * 4301  # past Python's int digit limit


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A real filesystem of `size` at `folder`, which can be filled up."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        why = f"cannot mount a small tmpfs to fill up (needs root): {mounted.stderr.strip()}"
        if os.environ.get("CI"):  # CI runs as root: a skip there would hide a real failure
            pytest.fail(why)
        pytest.skip(why)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Write one file until the filesystem under `folder` is full."""
    filler = folder / f"filler-{uuid.uuid4().hex}"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 512, 1):  # smaller writes fill the last partial block too
            with contextlib.suppress(OSError):
                while True:
                    os.write(descriptor, b"\0" * size)
    finally:
        os.close(descriptor)
    return filler


def lexical_service(root: Path) -> SidecarService:
    service = SidecarService(small_wiki(root), embed=False)
    service.start(watch=False)
    return service


# --- one bad page is a finding, never a stall ---------------------------------------------------


def test_a_page_with_a_huge_line_number_does_not_stop_the_sync(tmp_path):
    service = lexical_service(tmp_path)
    try:
        (tmp_path / "wiki/bad.md").write_text(page(title="Bad", body=f"<!-- from: {HUGE} -->\n"))
        (tmp_path / "wiki/nozzle.md").write_text(page(title="Nozzle", summary="Nozzle flow."))
        service.sync("edit")
        snapshot = service.indexer.snapshot
        assert {"bad", "nozzle"} <= set(snapshot.pages)
        assert [p.rule for p in snapshot.wiki.pages["bad"].problems] == ["invalid-citation"]
        assert service.status().sync["state"] == "ok"
    finally:
        service.stop()


# --- a sync failure is visible --------------------------------------------------------------------


def test_a_full_disk_shows_as_sync_failing_in_status(tmp_path):
    with small_disk(tmp_path / ".groundwiki", "4m") as disk:
        service = lexical_service(tmp_path)
        try:
            fill(disk)
            (tmp_path / "wiki/nozzle.md").write_text(page(title="Nozzle", body="x " * 50_000))
            with pytest.raises(OSError):
                service.sync("edit")
            status = service.status()
            assert status.sync["state"] == "failing" and status.sync["since"] is not None
            assert "No space left on device" in status.sync["error"]
            assert status.lanes["lexical"]["state"] == "stale"
            assert "No space left" in status.lanes["lexical"]["reason"]
        finally:
            service.stop()


def test_every_answer_says_the_sync_is_failing(tmp_path):
    with small_disk(tmp_path / ".groundwiki", "4m") as disk:
        service = lexical_service(tmp_path)
        ops = Operations(service)
        try:
            before = ops.search("flutter", 5)["freshness"]
            assert before["sync"] == "ok"
            fill(disk)
            (tmp_path / "wiki/nozzle.md").write_text(page(title="Nozzle", body="x " * 50_000))
            with pytest.raises(OSError):
                service.sync("edit")
            chunk_id = next(iter(service.indexer.snapshot.chunks))
            answers = {
                "search": ops.search("flutter", 5),
                "chunk search": ops.search_chunks("flutter", 5),
                "pages": ops.pages(["wing"]),
                "chunks": ops.chunks([chunk_id]),
                "links": ops.links("wing"),
                "overview": ops.overview(),
                "verify": ops.verify("The wing flutters.", [chunk_id], ["wing"]),
            }
            for name, answer in answers.items():
                fresh = answer["freshness"]
                assert fresh["sync"] == "failing", name
                assert "No space left" in fresh["error"], name
                assert fresh["generation"] == before["generation"], name
        finally:
            ops.close()
            service.stop()


def test_healthz_and_the_answers_schemas_carry_the_failing_sync(tmp_path):
    from groundwiki_sidecar.api.app import create_app
    from groundwiki_sidecar.api.response_schemas import search_response
    from starlette.testclient import TestClient

    with small_disk(tmp_path / ".groundwiki", "4m") as disk:
        service = lexical_service(tmp_path)
        client = TestClient(create_app(service), base_url="http://127.0.0.1")
        try:
            assert client.get("/healthz").json()["sync"] == "ok"
            fill(disk)
            (tmp_path / "wiki/nozzle.md").write_text(page(title="Nozzle", body="x " * 50_000))
            with pytest.raises(OSError):
                service.sync("edit")
            health = client.get("/healthz").json()
            assert health["ok"] is True and health["sync"] == "failing"
            answer = client.get("/search", params={"q": "flutter"}).json()
            jsonschema.validate(answer, search_response("page"))
            assert answer["freshness"]["sync"] == "failing"
        finally:
            service.stop()


def test_the_sync_recovers_once_the_disk_has_room(tmp_path):
    with small_disk(tmp_path / ".groundwiki", "4m") as disk:
        service = lexical_service(tmp_path)
        ops = Operations(service)
        try:
            filler = fill(disk)
            (tmp_path / "wiki/nozzle.md").write_text(page(title="Nozzle", body="choked " * 20_000))
            with pytest.raises(OSError):
                service.sync("edit")
            filler.unlink()
            service.sync("retry")
            assert service.status().sync["state"] == "ok"
            answer = ops.search("choked nozzle", 5)
            assert answer["hits"][0]["key"] == "nozzle"
            assert answer["freshness"]["sync"] == "ok"
        finally:
            ops.close()
            service.stop()


def test_a_full_disk_under_chroma_marks_the_semantic_lane_failing(tmp_path):
    sidecar = small_wiki(tmp_path)
    with small_disk(sidecar.index_dir / "chroma", "8m") as disk:
        service = SidecarService(sidecar)
        service.start(watch=False)
        try:
            assert service.wait_embedded(120)
            fill(disk)
            for number in range(40):
                text = page(title=f"Nozzle {number}", summary=f"Nozzle flow {number}.")
                (tmp_path / f"wiki/nozzle{number}.md").write_text(text)
            service.sync("edit")  # Whoosh and the store are on another disk
            wait_for(
                lambda: service.status().lanes["semantic"]["state"] == "failing",
                timeout=120,
                what="the semantic lane to report the full disk",
            )
            status = service.status()
            assert status.embedding["state"] == "failing" and status.embedding["error"]
            assert status.lanes["lexical"]["state"] == "ok"
        finally:
            shutil.rmtree(disk, ignore_errors=True)  # room again, so stopping can save
            service.stop()


def test_status_has_no_sync_error_when_all_is_well(tmp_path):
    service = lexical_service(tmp_path)
    try:
        sync = service.status().sync
        assert sync["state"] == "ok" and sync["error"] == "" and sync["last_ok"]
        assert os.path.exists(service.indexer.cache_file)
    finally:
        service.stop()


# --- a replaced wiki folder is watched again ------------------------------------------------------


def test_a_sync_while_the_wiki_folder_is_missing_keeps_every_page(tmp_path):
    """Between `rm -rf wiki` and `mv wiki.new wiki` the folder is gone: a batch then must not
    read an empty wiki and delete every page from the indexes."""
    from groundwiki.core.config.wiki_config import ConfigError

    service = lexical_service(tmp_path)
    try:
        wiki = tmp_path / "wiki"
        os.rename(wiki, tmp_path / "wiki.away")
        with pytest.raises(ConfigError, match="is missing"):
            service.sync("swap")
        assert set(service.indexer.snapshot.pages) == {"index", "wing", "shock"}
        assert service.indexer.lexical.doc_counts()["pages"] == 3
        assert service.status().sync["state"] == "failing"
        os.rename(tmp_path / "wiki.away", wiki)
        service.sync("back")
        assert service.status().sync["state"] == "ok"
        assert service.indexer.lexical.doc_counts()["pages"] == 3
    finally:
        service.stop()


def test_an_edit_after_the_wiki_folder_was_replaced_is_seen(tmp_path):
    service = SidecarService(small_wiki(tmp_path), embed=False)
    service.start(watch=True)
    try:
        wiki = tmp_path / "wiki"
        shutil.copytree(wiki, tmp_path / "wiki.new")
        (tmp_path / "wiki.new/swapped.md").write_text(page(title="Swapped", summary="New tree."))
        shutil.rmtree(wiki)  # as `rm -rf wiki && mv wiki.new wiki` does
        os.rename(tmp_path / "wiki.new", wiki)
        wait_for(lambda: "swapped" in service.indexer.snapshot.pages, what="the swapped tree")
        wait_for(lambda: service.status().watcher_rearmed >= 1, what="the watch re-armed")
        (wiki / "after.md").write_text(page(title="After", summary="Edited after the swap."))
        # Well under the 60 s safety sync: only a live watch on the new folder sees it this soon.
        wait_for(lambda: "after" in service.indexer.snapshot.pages, timeout=20, what="the edit")
        assert service.status().watcher == "watching"
    finally:
        service.stop()


def test_an_edit_after_the_wiki_folder_was_deleted_and_made_again_is_seen(tmp_path):
    service = SidecarService(small_wiki(tmp_path), embed=False)
    service.start(watch=True)
    try:
        wiki = tmp_path / "wiki"
        # As `rm -rf wiki && mkdir wiki && cp ...` does. On ext4 the new folder gets the old
        # one's inode back, so it looks like the folder already watched.
        shutil.rmtree(wiki)
        wiki.mkdir()
        (wiki / "again.md").write_text(page(title="Again", summary="Made again."))
        wait_for(lambda: "again" in service.indexer.snapshot.pages, what="the new folder")
        wait_for(lambda: service.status().watcher_rearmed >= 1, what="the watch re-armed")
        (wiki / "after.md").write_text(page(title="After", summary="Edited after."))
        # Well under the 60 s safety sync: only a live watch on the new folder sees it this soon.
        wait_for(lambda: "after" in service.indexer.snapshot.pages, timeout=20, what="the edit")
    finally:
        service.stop()


# --- kill -9 during the parallel page read ----------------------------------------------------------


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def _serve(root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(root / "mkdocs.yml"), "serve"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip


@pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists()
    or len(os.sched_getaffinity(0)) < 2,
    reason="needs two cores (to fork page readers) and /proc/<pid>/task/<tid>/children",
)
def test_a_restart_after_kill_9_during_the_parallel_read_is_not_refused(tmp_path):
    # Enough pages to be read by a forked worker, and big enough that the worker's answer
    # fills its pipe: it then blocks writing to a parent that is gone.
    body = "# Page\n\n" + "Pressure rises across the shock wave. " * 120 + "\n"
    pages = {f"p{n:04}.md": page(title=f"Page {n}", body=body) for n in range(PARALLEL_FROM * 2)}
    port = free_port()
    write_wiki(tmp_path, pages, {"n.md": "one\n"}, {"sidecar": {"port": port}})
    # `index` syncs in its one thread, so it forks readers (`serve` syncs beside its open port,
    # in one process); the claim it holds is the same.
    first = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(tmp_path / "mkdocs.yml"), "index"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip
    try:
        wait_for(lambda: bool(_children(first.pid)), timeout=60, what="a forked page reader")
        workers = _children(first.pid)
    finally:  # killed mid-read, the point of the test; and never left behind when it fails
        first.kill()
        first.wait(timeout=30)
    second = _serve(tmp_path)
    try:

        def healthy() -> bool:
            assert second.poll() is None, second.stdout.read()  # refused: "in use by pid ..."
            with contextlib.suppress(OSError):
                return get(f"http://127.0.0.1:{port}/healthz")[1]["ok"]
            return False

        wait_for(healthy, timeout=120, what="the restarted sidecar")
    finally:
        second.kill()
        second.wait(timeout=30)
        for worker in workers:  # on the code before the fix they outlive their parent
            with contextlib.suppress(OSError):
                os.kill(worker, signal.SIGKILL)


# A page reader forked just before its parent was killed: the parent is gone by the time the
# worker asks the kernel to tie its life to it. It must notice and exit, not live on as init's.
LATE_WORKER = """
import os, time
from groundwiki.core.files.forking import die_with_parent
parent = os.getpid()
readable, writable = os.pipe()
if os.fork() == 0:
    os.close(writable)
    os.read(readable, 1)  # end of file: the parent is exiting
    die_with_parent()
    # The parent's files close before the kernel hands its children to another process and
    # sends the death signal, so wait for the hand-over: a worker still alive after it has
    # outlived its parent.
    while os.getppid() == parent:
        time.sleep(0.01)
    print("outlived its parent", flush=True)
os._exit(0)
"""


def test_a_worker_whose_parent_died_before_it_asked_to_die_with_it_exits():
    # The worker holds stdout, so this returns once the worker has ended too.
    ran = subprocess.run([sys.executable, "-c", LATE_WORKER], capture_output=True, text=True)
    assert ran.stdout == "", ran.stdout


# The index folder's claim registered, then closed without `release` (an indexer that failed
# after claiming the folder), and its number reused for a pipe: a forked child must keep the
# pipe, not have it replaced with /dev/null.
REUSED_NUMBER = """
import os, sys
from groundwiki.core.files.forking import not_for_children
claim = open(sys.argv[1], "a+")
not_for_children(claim.fileno())
number = claim.fileno()
readable, writable = os.pipe()
claim.close()
os.dup2(writable, number)  # the number now names the pipe
if os.fork() == 0:
    try:
        os.write(number, b"kept")
    finally:
        os._exit(0)
os.close(writable)
os.close(number)
print(os.read(readable, 16).decode())
"""


def test_a_forked_child_keeps_a_pipe_that_reuses_a_released_claims_number(tmp_path):
    child = [sys.executable, "-c", REUSED_NUMBER, str(tmp_path / "sidecar.lock")]
    ran = subprocess.run(child, capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "kept"
