"""Whether this process may fork workers (page reading, Whoosh's parallel writer).

A forked child gets one thread: any lock another thread held at the fork stays held in the
child forever. So workers are forked only while the process runs one Python thread and has not
started a native thread pool (ONNX Runtime's sessions): a second evaluation run in one process
hung in Whoosh's forked writer after the first had embedded texts.
"""

from __future__ import annotations

import multiprocessing
import threading

_native_pools: list[str] = []


def note_native_threads(owner: str) -> None:
    """Record that `owner` starts threads Python does not see; forking is off from then on."""
    _native_pools.append(owner)


def can_fork() -> bool:
    return (
        threading.active_count() == 1
        and not _native_pools
        and "fork" in multiprocessing.get_all_start_methods()
    )
