"""The `groundwiki` and `mkdocs` commands run for a test as processes of their own, forked from the
test's process rather than started as new interpreters.

A forked command has its own working directory, environment, standard streams and exit status,
and nothing it changes comes back to the test; what it saves is the second a new interpreter
spends starting and importing MkDocs and groundwiki, which was most of the time of the tests
that run commands. What a new interpreter adds (the installed script, imports in a clean
process) is tested where it matters by tests that start one: tests/cli/test_help_copies.py runs
the installed script for every command, test_packaging.py and test_ci_snippet.py start their own.

In the child, what the test process set up for itself is put back as a new interpreter has it:
the streams, the root logger (pytest's capture handlers), the warning filters. State that a
command reads once per process (a cached tokenizer) comes from the test process: a test that
changes such a setting through the environment runs its command with `subprocess` instead.

`GROUNDWIKI_TEST_SUBPROCESS=1` runs every command as a new interpreter, as a user starts it.
"""

from __future__ import annotations

import functools
import io
import logging
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from groundwiki.core.files.forking import can_fork

BIN = Path(sys.executable).parent
GROUNDWIKI = str(BIN / "groundwiki")
MKDOCS = str(BIN / "mkdocs")
SUBPROCESS_VARIABLE = "GROUNDWIKI_TEST_SUBPROCESS"
# The warning filters a new interpreter starts with (no -W option, no PYTHONWARNINGS).
_DEFAULT_FILTERS: list[tuple[str, None, type[Warning], str | None, int]] = [
    ("default", None, DeprecationWarning, "__main__", 0),
    ("ignore", None, DeprecationWarning, None, 0),
    ("ignore", None, PendingDeprecationWarning, None, 0),
    ("ignore", None, ImportWarning, None, 0),
    ("ignore", None, ResourceWarning, None, 0),
]

Completed = subprocess.CompletedProcess[str]


def groundwiki(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> Completed:
    """`groundwiki ARGS` in `cwd`: its exit status, stdout and stderr."""
    from groundwiki.cli import main  # imported here, once: every fork has it

    return run([GROUNDWIKI, *args], main, cwd=cwd, env=env, input=input, timeout=timeout)


def mkdocs(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> Completed:
    """`mkdocs ARGS` in `cwd`: its exit status, stdout and stderr."""
    return run([MKDOCS, *args], _mkdocs_main(), cwd=cwd, env=env, timeout=timeout)


@functools.cache
def _mkdocs_main() -> Callable[[list[str]], int | None]:
    """MkDocs' command, with the plugins the tests' sites use imported here, once: every fork
    has them."""
    from mkdocs.__main__ import cli
    from mkdocs.commands import build  # noqa: F401 - imported for the forks
    from mkdocs.plugins import get_plugins

    installed = get_plugins()
    for name in ("groundwiki", "search", "material/search"):
        if name in installed:
            installed[name].load()

    def main(argv: list[str]) -> int | None:
        return cli.main(args=argv, prog_name="mkdocs")

    return main


def run(
    command: Sequence[str],
    main: Callable[[list[str]], int | None],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> Completed:
    """The console script `command[0]`, whose entry point is `main`, run with `command[1:]`:
    forked from this process, or started as a new interpreter when `GROUNDWIKI_TEST_SUBPROCESS`
    is set or when groundwiki itself would not fork here (another thread runs, such as a
    browser driver's, or a native thread pool was started: the child could inherit a lock held
    by a thread it does not have: a browser test's teardown once hung in a run that forked
    beside the browser's driver)."""
    if os.environ.get(SUBPROCESS_VARIABLE) or not can_fork():
        return subprocess.run(
            list(command), cwd=cwd, env=env, input=input, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        stdin.write((input or "").encode())  # no input: an empty stdin
        stdin.seek(0)
        pid = os.fork()
        if pid == 0:  # the command's process: never returns
            _child(command, main, cwd, env, stdin.fileno(), out.fileno(), err.fileno())
        status = _wait(pid, command, timeout)
        return subprocess.CompletedProcess(list(command), status, _read(out), _read(err))


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    text = file.read().decode("utf-8", errors="replace")
    # What `subprocess.run(..., text=True)` gives: universal newlines.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _wait(pid: int, command: Sequence[str], timeout: float) -> int:
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(list(command), timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _child(
    command: Sequence[str],
    main: Callable[[list[str]], int | None],
    cwd: Path | None,
    env: Mapping[str, str] | None,
    stdin: int,
    stdout: int,
    stderr: int,
) -> None:
    status = 1
    try:
        for source, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(source, target)
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        # The test process has used the tokenizer's threads: without this, the tokenizer warns
        # on stderr that it was forked, and then works without them (the same word pieces).
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False), encoding="utf-8")  # noqa: SIM115
        sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8")  # noqa: SIM115
        sys.stderr = io.TextIOWrapper(
            open(2, "wb", closefd=False),  # noqa: SIM115
            encoding="utf-8", errors="backslashreplace", line_buffering=True,
        )  # fmt: skip
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]
        sys.argv = list(command)
        logging.root.handlers.clear()  # pytest's capture handlers: messages go to stderr
        logging.root.setLevel(logging.WARNING)
        _reset_warnings()
        try:
            status = _exit_status(main(list(command[1:])))
        except SystemExit as exit:
            status = _exit_status(exit.code)
        except BaseException:
            traceback.print_exc()
            status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _reset_warnings() -> None:
    """Warnings filtered and shown on stderr as a new interpreter does: pytest records them."""
    warnings.filters[:] = list(_DEFAULT_FILTERS)  # type: ignore[index]
    warnings._filters_mutated()  # type: ignore[attr-defined]
    warnings.showwarning = warnings._showwarning_orig  # type: ignore[attr-defined]

    def show(message: warnings.WarningMessage) -> None:
        sys.stderr.write(warnings._formatwarnmsg(message))  # type: ignore[attr-defined]

    warnings._showwarnmsg_impl = show  # type: ignore[attr-defined]


def _exit_status(code: object) -> int:
    """The exit status `sys.exit(code)` gives."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
