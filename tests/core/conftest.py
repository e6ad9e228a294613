"""The fast lane: the compiler core in-process, no MkDocs build, no sidecar, no browser. Every
test in this folder is marked `core`.

A guard keeps the lane fast: a test here whose setup and call cost more than `FAST_TEST_LIMIT`
seconds fails, naming itself, its time and the fix: move it to the folder that fits (tests/cli/
for a subprocess, tests/site/ for a MkDocs build, tests/scale/ for many sizes) or make it faster.
The cost is CPU time (this process's and the child processes' it waited for), not wall time: the
machine is shared (xdist's other worker, other jobs), and a test that takes 1 s alone takes 3 s of
wall time beside them, while its CPU time stays put. Its module fixtures count for the first test
that uses them. On a slower machine raise the limit for a run:
`GROUNDWIKI_FAST_TEST_LIMIT=5 pytest tests/core` (`inf` turns the guard off).
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FAST_TEST_LIMIT = 2.0  # CPU seconds, setup + call, on the 2-core machine the targets are set on
LIMIT_VARIABLE = "GROUNDWIKI_FAST_TEST_LIMIT"
_STARTED = pytest.StashKey[float]()


def fast_test_limit() -> float:
    """The guard's limit in seconds: `FAST_TEST_LIMIT`, or the environment's when it sets one."""
    value = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not value:
        return FAST_TEST_LIMIT
    try:
        return float(value)
    except ValueError:
        raise pytest.UsageError(f"{LIMIT_VARIABLE}={value!r} is not a number of seconds") from None


def cpu_seconds() -> float:
    """CPU time spent so far by this process and by the children it has waited for."""
    spent = os.times()
    return spent.user + spent.system + spent.children_user + spent.children_system


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.core)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_STARTED] = cpu_seconds()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if HERE not in item.path.parents or report.when != "call" or not report.passed:
        return report
    started = item.stash.get(_STARTED, None)
    if started is None:
        return report
    taken = cpu_seconds() - started
    limit = fast_test_limit()
    if taken > limit:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} cost {taken:.2f} s of CPU (setup and call; {report.duration:.2f} s "
            f"of wall time in the call), over the fast lane's limit of {limit:g} s "
            f"(FAST_TEST_LIMIT in tests/core/conftest.py, or {LIMIT_VARIABLE}). Move it to the "
            f"folder that fits (tests/cli/ for a subprocess, tests/site/ for a MkDocs build, "
            f"tests/scale/ for many sizes) or make it faster; on a slower machine, raise the "
            f"limit for the run: {LIMIT_VARIABLE}=<seconds>."
        )
    return report
