"""Whether this process may fork workers (page reading, Whoosh's parallel writer), and how a
forked worker lets go of what it inherited.

A forked child gets one thread: any lock another thread held at the fork stays held in the
child forever. So workers are forked only while the process runs one Python thread and has not
started a native thread pool (ONNX Runtime's sessions): a second evaluation run in one process
hung in Whoosh's forked writer after the first had embedded texts.

A forked child also inherits every open file, the sidecar's claim on its index folder (an flock)
included. A worker left blocked on a pipe after its parent was killed (kill -9 during the
parallel read) then held the claim forever, and every restart was refused. So a child lets go
of the files registered here at once, and asks the kernel to kill it when its parent dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
from typing import IO

_native_pools: list[str] = []
# Descriptors a forked child must not keep, with the (device, inode) of the file each named
# when registered: a number closed without `release` (an indexer that failed to start) and
# reused for another file (a worker pool's pipe) is then left alone in the child.
_held_in_parent: dict[int, tuple[int, int]] = {}
_hooked = False
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_fork_state = {"from_main": False, "parent": 0}


def note_native_threads(owner: str) -> None:
    """Record that `owner` starts threads Python does not see; forking is off from then on."""
    _native_pools.append(owner)


def spawn_count(items: int, least: int) -> int:
    """Fresh worker processes to share `items` (0: do the work here): one per core, each with
    at least `least // 2` items, and none below `least` items or on one core (a worker's start
    costs what a few hundred items do)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if items < least or cores < 2:
        return 0
    return min(cores, items // (least // 2))


Spawned = tuple["subprocess.Popen[bytes]", IO[bytes]]  # a worker, the file of its errors


def spawn_workers(
    module: str, jobs: list[object], log: logging.Logger, failed: str
) -> list[Spawned | None]:
    """A fresh interpreter running `python -m module` per job, each sent its job pickled on its
    standard input; None for one that could not start, said in `log` as `failed` (a message
    with one %s, the error). All are started before any job is written: a job is written as
    fast as its worker reads it, after its imports, and the workers then import side by side,
    not one after the other."""
    started: list[Spawned | OSError] = []
    for _ in jobs:
        try:
            # A file, not a pipe: a chatty worker never blocks. The caller closes it.
            errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
            command = [sys.executable, "-m", module]
            worker = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
            )
        except OSError as exc:
            started.append(exc)
            continue
        started.append((worker, errors))
    for index, (job, spawned) in enumerate(zip(jobs, started, strict=True)):
        if isinstance(spawned, OSError):
            continue
        worker, errors = spawned
        assert worker.stdin is not None
        try:
            worker.stdin.write(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
            worker.stdin.close()
        except (OSError, pickle.PicklingError) as exc:
            worker.kill()
            worker.wait()
            errors.close()
            started[index] = OSError(str(exc))
    for spawned in started:
        if isinstance(spawned, OSError):
            log.warning(failed, spawned)
    return [None if isinstance(spawned, OSError) else spawned for spawned in started]


def can_fork() -> bool:
    return (
        threading.active_count() == 1
        and not _native_pools
        and "fork" in multiprocessing.get_all_start_methods()
    )


def not_for_children(descriptor: int) -> None:
    """Forked children of this process drop `descriptor` at once, and die with this process:
    a lock held through it then ends with this process, whatever its children do."""
    global _hooked
    _held_in_parent[descriptor] = _identity(descriptor) or (-1, -1)
    if not _hooked and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_in_child)
        _hooked = True


def release(descriptor: int) -> None:
    _held_in_parent.pop(descriptor, None)


def _identity(descriptor: int) -> tuple[int, int] | None:
    try:
        found = os.fstat(descriptor)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def die_with_parent() -> None:
    """For a forked worker: be killed when the process that forked it dies (Linux), so no worker
    outlives a killed parent. A pool's initializer; a no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    # The parent as it was at the fork, not `getppid()` now: a parent killed between the fork
    # and this call has already handed the child to init, and would go unnoticed.
    parent = _fork_state["parent"]
    if parent in (0, os.getpid()):  # not called in a forked child after all
        parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _before_fork() -> None:
    _fork_state["from_main"] = threading.current_thread() is threading.main_thread()
    _fork_state["parent"] = os.getpid()


if hasattr(os, "register_at_fork"):  # cheap, and what `die_with_parent` compares with
    os.register_at_fork(before=_before_fork)


def _in_child() -> None:
    if _held_in_parent:
        # /dev/null over each descriptor rather than closing it: its number stays taken, so
        # the parent's file object, copied into the child, never closes someone else's file.
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            for descriptor, identity in _held_in_parent.items():
                if _identity(descriptor) == identity:
                    with contextlib.suppress(OSError):
                        os.dup2(null, descriptor)
        finally:
            os.close(null)
    # The kernel signals on the death of the forking *thread*: only a fork from the main thread
    # (page reading, Whoosh's writer) is tied to the life of the whole process.
    if _fork_state["from_main"]:
        die_with_parent()
