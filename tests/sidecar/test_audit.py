"""The audit trail: one complete JSON line per answered search, hydration, drill-down and verify
call, in order under concurrent clients, rotated and pruned, and never a reason to fail an
answer. Over the real app (Starlette routes, Whoosh on disk) and the operations themselves."""

from __future__ import annotations

import json
import os
import re
import threading

import pytest
from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.audit import AuditLog, audit_files, read_records
from groundwiki_sidecar.api.service import SidecarService
from helpers.sidecar_helpers import small_wiki
from starlette.testclient import TestClient

pytestmark = pytest.mark.sidecar

FIELDS = {"seq", "time", "user", "op", "args", "returned", "generation", "model", "policy"}


@pytest.fixture
def served(tmp_path):
    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    service.start(watch=False)
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    yield service, client
    service.stop()


def records(service: SidecarService) -> list[dict]:
    return read_records(service.audit.folder)


def test_each_audited_operation_writes_one_complete_record(served):
    service, client = served
    client.get("/search", params={"q": "wing flutter"})
    client.post("/search", json={"query": "wing flutter", "explain": True})
    client.get("/chunks/search", params={"q": "flutter"})
    client.post("/chunks/search", json={"query": "flutter"})
    client.post("/pages", json={"ids": ["wing"]})
    chunk = client.get("/search", params={"q": "wing"}).json()["hits"][0]["pointers"][0]
    client.post("/chunks", json={"ids": [chunk["chunk_id"]]})
    client.post("/verify", json={"answer": "Flutter grows with speed.", "pages": ["wing"]})
    client.get("/context", params={"q": "wing flutter", "budget": "300"})
    # Not audited: status, liveness, links, overview, cite.
    for path in ("/status", "/healthz", "/pages/wing/links", "/overview"):
        assert client.get(path).status_code == 200
    found = records(service)
    audited = {op.name for op in catalog.operations() if op.audited}
    assert [r["op"] for r in found] == [
        "search", "search_by_body", "search_chunks", "search_chunks_by_body", "pages",
        "search", "chunks", "verify", "context",
    ]  # fmt: skip
    assert {r["op"] for r in found} == audited
    for record in found:
        assert record.keys() >= FIELDS, record
        assert record["user"] == "global" and record["generation"] >= 1 and record["policy"]
    first = found[0]
    assert first["args"]["query"] == "wing flutter" and first["returned"][0] == "wing"
    assert first["lanes"][0]["lexical"] == 1  # each hit's rank in each lane
    assert found[4]["returned"] == ["wing"] and found[6]["returned"] == [chunk["chunk_id"]]
    assert [r["seq"] for r in found] == list(range(1, len(found) + 1))


def test_recording_does_not_change_the_answer(served):
    _, client = served
    plain = client.get("/search", params={"q": "wing flutter"}).json()
    assert "explain" not in plain["hits"][0]  # the record's ranks are not shown unasked
    explained = client.get("/search", params={"q": "wing flutter", "explain": "true"}).json()
    assert "explain" in explained["hits"][0]


def test_eight_concurrent_clients_give_complete_ordered_records(served):
    service, client = served
    asked = []

    def work(n: int) -> None:
        for i in range(10):
            if i % 2:
                response = client.get("/search", params={"q": f"wing {n} {i}"})
            else:
                response = client.post("/pages", json={"ids": ["wing", "shock"]})
            assert response.status_code == 200
            asked.append(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = (service.audit.folder / "audit.jsonl").read_text().splitlines()
    parsed = [json.loads(line) for line in lines]  # every line whole
    assert len(parsed) == len(asked) == 80
    assert [r["seq"] for r in parsed] == list(range(1, 81))
    assert [r["time"] for r in parsed] == sorted(r["time"] for r in parsed)


def test_a_read_only_audit_folder_fails_the_audit_not_the_answers(served):
    service, client = served
    if os.geteuid() == 0:  # root writes anyway: make the file a folder instead
        folder = service.audit.folder
        client.get("/search", params={"q": "wing"})
        service.audit.close()
        (folder / "audit.jsonl").unlink()
        (folder / "audit.jsonl").mkdir()
    else:
        service.audit.folder.mkdir(parents=True, exist_ok=True)
        service.audit.folder.chmod(0o500)
    assert client.get("/search", params={"q": "wing"}).status_code == 200
    status = client.get("/status").json()["audit"]
    assert status["state"] == "failing" and status["error"]
    if os.geteuid() == 0:
        (service.audit.folder / "audit.jsonl").rmdir()
    else:
        service.audit.folder.chmod(0o700)
    assert client.post("/pages", json={"ids": ["wing"]}).status_code == 200
    assert client.get("/status").json()["audit"]["state"] == "ok"  # recovered


def test_audit_off_writes_nothing(tmp_path):
    sidecar = small_wiki(tmp_path, {"audit": False})
    service = SidecarService(sidecar, embed=False)
    service.start(watch=False)
    try:
        client = TestClient(create_app(service), base_url="http://127.0.0.1")
        assert client.get("/search", params={"q": "wing"}).status_code == 200
        assert client.get("/status").json()["audit"]["state"] == "off"
        assert not (sidecar.index_dir / "audit").exists()
    finally:
        service.stop()


def test_rotation_keeps_the_newest_files_and_numbers_go_on_after_a_restart(tmp_path):
    log = AuditLog(tmp_path, rotate_bytes=400, keep=3)
    for n in range(40):
        assert log.record({"op": "search", "args": {"query": f"q{n}"}}) == n + 1
    log.close()
    files = audit_files(tmp_path)
    assert len(files) == 3 and files[-1].name == "audit.jsonl"
    kept = read_records(tmp_path)
    assert [r["seq"] for r in kept] == list(range(kept[0]["seq"], 41))
    again = AuditLog(tmp_path, rotate_bytes=400, keep=3)
    assert again.record({"op": "pages"}) == 41
    again.close()


def test_the_audit_command_prints_filters_and_replays_records(tmp_path):
    from helpers.scoped import scoped_copy
    from test_identity import get, groundwiki, set_sidecar, start, stop

    scoped_copy(tmp_path)
    set_sidecar(tmp_path)
    process, base = start(tmp_path, "--user", "alice")
    try:
        for _ in range(600):  # a replay equals the record only once every vector is in
            found = get(f"{base}/status")[1]
            if not found["warming"] and found["embedding_pending"] == 0:
                break
            threading.Event().wait(0.1)
        hits = get(f"{base}/search?q=tangerine+canary")[1]["hits"]
        assert hits and hits[0]["key"] == "deploy"
        get(f"{base}/search?q=quince+dashboard")
        listed = groundwiki(tmp_path, "audit", "--user", "alice", "--op", "search")
        assert listed.returncode == 0 and "tangerine" in listed.stdout
        assert "2 of 2 records" in listed.stderr
        exported = groundwiki(tmp_path, "audit", "--json", "--since", "2000-01-01")
        assert [json.loads(line)["seq"] for line in exported.stdout.splitlines()] == [1, 2]
        same = groundwiki(tmp_path, "audit", "replay", "1")
        assert same.returncode == 0 and "unchanged" in same.stdout, same.stderr
        (tmp_path / "wiki/user/alice/deploy.md").unlink()  # her deploy page goes away
        for _ in range(100):
            top = get(f"{base}/search?q=tangerine+canary")[1]["hits"]
            if not top or top[0]["key"] != "deploy":
                break
            threading.Event().wait(0.1)
        changed = groundwiki(tmp_path, "audit", "replay", "1")
        assert changed.returncode == 1 and re.search(r"generation \d+ -> \d+", changed.stdout)
        assert "deploy: 1 -> " in changed.stdout or "- deploy" in changed.stdout
    finally:
        stop(process)
    process, _ = start(tmp_path)  # now answering in the shared scope
    try:
        refused = groundwiki(tmp_path, "audit", "replay", "1")
        assert refused.returncode == 2 and "answered for alice" in refused.stderr
    finally:
        stop(process)


def test_a_line_torn_by_a_full_disk_is_cut_and_the_next_record_kept(tmp_path):
    log = AuditLog(tmp_path, rotate_bytes=1_000_000, keep=3)
    log.record({"op": "search"})
    log.close()
    with (tmp_path / "audit.jsonl").open("a") as file:
        file.write('{"seq":2,"time":"2026-11-24T10:0')  # what a full disk leaves of a record
    again = AuditLog(tmp_path, rotate_bytes=1_000_000, keep=3)
    assert again.record({"op": "pages"}) is not None
    again.close()
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert [json.loads(line)["op"] for line in lines] == ["search", "pages"]  # every line whole


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs: a disk that really fills (root only)."""
    import subprocess

    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_after_a_full_disk_every_later_record_is_whole_and_the_loss_is_reported(small_disk):
    folder = small_disk / "audit"
    folder.mkdir()
    log = AuditLog(folder, rotate_bytes=1_000_000, keep=3)
    filler = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk, then give back three pages: room for a few records
        while True:
            os.write(filler, b"x" * 4096)
    except OSError:
        os.ftruncate(filler, os.fstat(filler).st_size - 3 * 4096)
    finally:
        os.close(filler)
    entry = {"op": "search", "args": {"query": "q" * 300}}
    written = []
    while (seq := log.record(entry)) is not None:
        written.append(seq)
    assert log.status()["state"] == "failing"
    assert not (folder / "audit.jsonl").read_bytes().endswith(b"\n")  # a torn record
    (small_disk / "filler").unlink()  # room again
    after = log.record(entry)
    log.close()
    assert after is not None
    lines = (folder / "audit.jsonl").read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [*written, after]  # every line whole
    status = log.status()
    assert status["state"] == "ok" and status["lost"] == 1  # said, though writing works again
