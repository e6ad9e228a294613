"""The fast lane's guard (tests/core/conftest.py): a test that costs more CPU than the limit fails,
naming itself, its time and the fix; one that only waits passes (a shared machine slows the wall
clock, not the work); the limit is raised for a slower machine through the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

GUARD = Path(__file__).with_name("conftest.py")
TESTS = """
import time

def test_slow():
    started = time.process_time()
    while time.process_time() - started < 0.3:
        pass

def test_quick():
    pass

def test_waiting():
    time.sleep(0.3)
"""
# The inner session imports its conftest under a name of its own, not this folder's `conftest`.
OPTIONS = ("core", "-p", "no:cacheprovider", "-p", "no:xdist", "--import-mode=importlib")


@pytest.fixture
def lane(pytester: pytest.Pytester) -> pytest.Pytester:
    """A folder like tests/core: the guard's conftest, a busy test, a quick one and one that waits."""
    folder = pytester.mkdir("core")
    (folder / "conftest.py").write_text(GUARD.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "test_lane.py").write_text(TESTS, encoding="utf-8")
    return pytester


def run(lane: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, limit: str) -> pytest.RunResult:
    # The limit is set for the inner session only: this test is under the guard too.
    with monkeypatch.context() as patched:
        patched.setenv("GROUNDWIKI_FAST_TEST_LIMIT", limit)
        return lane.runpytest_inprocess(*OPTIONS)


def test_a_test_over_the_limit_fails_naming_itself_its_time_and_the_fix(lane, monkeypatch):
    result = run(lane, monkeypatch, "0.1")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*core/test_lane.py::test_slow cost 0.* s of CPU*over the fast lane's limit of 0.1 s*"
         "Move it to the folder that fits*"]
    )  # fmt: skip


def test_the_environment_raises_the_limit(lane, monkeypatch):
    run(lane, monkeypatch, "30").assert_outcomes(passed=3)


def test_a_limit_that_is_not_a_number_is_refused(lane, monkeypatch):
    result = run(lane, monkeypatch, "fast")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*GROUNDWIKI_FAST_TEST_LIMIT='fast' is not a number of seconds"])
