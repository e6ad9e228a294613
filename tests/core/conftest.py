"""The fast lane: the compiler core in-process, no MkDocs build, no sidecar, no browser. Every
test in this folder is marked `core`.

A guard keeps the lane fast: a test here whose setup and call take more than
`FAST_TEST_LIMIT` seconds (wall time, its module fixtures included when it is the first to use
them) fails, naming itself, its time and the fix: move it to the folder that fits (tests/cli/ for
a subprocess, tests/site/ for a MkDocs build, tests/scale/ for many sizes) or make it faster. On
a slower machine raise the limit for a run: `GROUNDWIKI_FAST_TEST_LIMIT=5 pytest tests/core`
(`inf` turns the guard off).
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FAST_TEST_LIMIT = 2.0  # seconds, setup + call, on the 2-core machine the targets are set on
LIMIT_VARIABLE = "GROUNDWIKI_FAST_TEST_LIMIT"
_SETUP_TIME = pytest.StashKey[float]()


def fast_test_limit() -> float:
    """The guard's limit in seconds: `FAST_TEST_LIMIT`, or the environment's when it sets one."""
    value = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not value:
        return FAST_TEST_LIMIT
    try:
        return float(value)
    except ValueError:
        raise pytest.UsageError(f"{LIMIT_VARIABLE}={value!r} is not a number of seconds") from None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.core)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if HERE not in item.path.parents:
        return report
    if report.when == "setup":
        item.stash[_SETUP_TIME] = report.duration
    elif report.when == "call" and report.passed:
        taken = item.stash.get(_SETUP_TIME, 0.0) + report.duration
        limit = fast_test_limit()
        if taken > limit:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} took {taken:.2f} s (setup {taken - report.duration:.2f} s + call "
                f"{report.duration:.2f} s), over the fast lane's limit of {limit:g} s "
                f"(tests/core/conftest.py FAST_TEST_LIMIT). Move it to the folder that fits "
                f"(tests/cli/ for a subprocess, tests/site/ for a MkDocs build, tests/scale/ for "
                f"many sizes) or make it faster; on a slower machine, raise the limit with "
                f"{LIMIT_VARIABLE}=<seconds>."
            )
    return report
