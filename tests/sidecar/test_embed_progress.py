"""How far the embedding is, told honestly: the pace and time left in `/status`, on
`groundwiki index`'s output, and the share of texts with vectors in every answer."""

from __future__ import annotations

import subprocess

import pytest
from groundwiki.progress import Progress, duration
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.embed_rate import RateMeter
from groundwiki_sidecar.base.settings import load_sidecar
from helpers.sidecar_helpers import small_wiki, wait_for
from test_remote_embedder import remote_wiki, stand_in  # noqa: F401 - the fixture
from test_sidecar_process import BIN, ENV


def test_the_rate_is_the_last_minutes_texts_over_its_span():
    meter = RateMeter(window_s=60)
    assert meter.rate(now=0) is None  # nothing embedded is not a speed
    meter.add(8, now=100.0)
    assert meter.rate(now=100.0) is None  # one call: no span yet
    meter.add(8, now=101.0)
    meter.add(8, now=102.0)
    assert meter.rate(now=102.0) == pytest.approx(8.0)  # 16 texts after the first call, in 2 s
    assert meter.eta_s(80, now=102.0) == pytest.approx(10.0)
    assert meter.eta_s(0, now=102.0) == 0.0
    assert meter.rate(now=200.0) is None  # a quiet minute: no pace to show
    assert meter.total == 24


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (40, 89, 180, 5340, 7500)] == [
        "40 s",
        "89 s",
        "3 min",
        "89 min",
        "2 h 05 min",
    ]
    progress = Progress(enabled=True)
    progress._started = 0.0
    assert progress.pace(10, 100, now=1.0) == ""  # too early to say
    assert progress.pace(50, 350, now=10.0) == ", 5.0/s, about 60 s left"


def test_status_gives_the_pace_and_the_time_left_while_vectors_are_computed(
    tmp_path,
    stand_in,  # noqa: F811
):
    config = remote_wiki(tmp_path, stand_in, pages=30, remote_batch=1, remote_concurrency=1)
    stand_in.steer(delay_s=0.05)
    service = SidecarService(load_sidecar(config))
    try:
        service.start(watch=False)

        def paced() -> bool:
            status = service.status()
            return status.embedding_pending > 0 and bool(status.embedding_texts_per_s)

        wait_for(paced, 60, "a pace while vectors are pending")
        status = service.status()
        assert 0 < status.embedding_texts_per_s < 1000
        assert status.embedding_eta_s is not None and status.embedding_eta_s > 0
        # Every answer says how much has vectors, and the share only grows to 1.
        ops = Operations(service)
        share = ops.search("topic", 5)["freshness"]["vectors"]
        assert 0 <= share["pages"] <= 1 and share["chunks"] < 1
        assert service.wait_embedded(120)
        done = ops.search("topic", 5)["freshness"]["vectors"]
        assert done == {"chunks": 1.0, "pages": 1.0, "passages": 1.0}
        assert service.status().embedding_eta_s == 0
    finally:
        service.stop()


def test_answers_say_no_vectors_when_there_is_no_model(tmp_path):
    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    try:
        service.start(watch=False)
        shares = Operations(service).search("flutter", 3)["freshness"]["vectors"]
        assert shares == {"chunks": 0.0, "pages": 0.0, "passages": 0.0}
    finally:
        service.stop()


def test_groundwiki_index_reports_the_pace_it_embedded_at(tmp_path):
    small_wiki(tmp_path)
    ran = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(tmp_path / "mkdocs.yml"), "index"],
        capture_output=True, text=True, env=ENV, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert " texts embedded (" in ran.stderr and " texts/s)" in ran.stderr
