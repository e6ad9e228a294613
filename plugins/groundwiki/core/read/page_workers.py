"""Page files read in spawned worker processes, for a process that may not fork.

A process running threads (the sidecar serves HTTP while its first sync reads the wiki) must not
fork (core/files/forking.py), so it read every page in one process: 40 s of a 6,571-note vault's
first sync on two cores, before any page was searchable. A worker started afresh inherits no
lock: it is a new interpreter (`page_worker.py`) sent the config and its share of the paths,
and it sends how many it has read as it goes, then the pages, pickled, over its pipe. Only this
process's own children speak that pickle, never a file. A worker that fails has its share read here instead, with a warning:
nothing is lost, it is only slower.
"""

from __future__ import annotations

import logging
import os
import pickle
import selectors
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import IO

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.forking import spawn_count as spawned
from groundwiki.core.files.forking import spawn_workers
from groundwiki.core.model.records import Page
from groundwiki.core.read.page_worker import FRAME, PROGRESS
from groundwiki.core.read.pages import read_page
from groundwiki.core.read.provenance import PathGuard

log = logging.getLogger("groundwiki")
# A worker costs about half a second to start (an interpreter and the reader's imports), and a
# page 3-6 ms to read: a share smaller than this is read faster here.
SPAWN_FROM = 1000

Progress = Callable[[int, int], None]


def spawn_count(count: int) -> int:
    """Workers to read `count` pages (0: read them here)."""
    return spawned(count, SPAWN_FROM)


def read_spawned(
    paths: list[Path], config: Config, guard: PathGuard, progress: Progress | None, workers: int
) -> list[Page]:
    """`paths` read in order by `workers` workers, while this process only listens: reading a
    share here competed with the threads beside it (the sidecar's server, its model loading),
    and the vault's first sync read in 20.5 s that way, 18.5 s with the workers alone."""
    size = -(-len(paths) // workers)
    shares = [paths[i : i + size] for i in range(0, len(paths), size)]
    started = spawn_workers(
        "groundwiki.core.read.page_worker",
        [(config, share) for share in shares],
        log,
        "cannot start a page reader (%s): reading its pages here",
    )
    answers = _listen([w for w in started if w is not None], progress, len(paths))
    pages: list[Page] = []
    for share, worker in zip(shares, started, strict=True):
        answer = answers.get(id(worker)) if worker is not None else None
        pages += _collect(worker, answer, share, config, guard)
    if progress:
        progress(len(pages), len(paths))
    return pages


Worker = tuple[subprocess.Popen[bytes], IO[bytes]]  # the process, the file of its errors


def _listen(workers: list[Worker], progress: Progress | None, total: int) -> dict[int, bytes]:
    """Every worker's answer (the bytes after its last progress frame), read as they come, and
    the pages read so far told to `progress` meanwhile."""
    buffers = {id(w): bytearray() for w in workers}
    done = {id(w): 0 for w in workers}
    answers: dict[int, bytes] = {}
    with selectors.DefaultSelector() as selector:
        for worker in workers:
            assert worker[0].stdout is not None
            selector.register(worker[0].stdout, selectors.EVENT_READ, worker)
        while selector.get_map():
            for key, _ in selector.select():
                worker = key.data
                data = os.read(key.fd, 1 << 20)
                buffer = buffers[id(worker)]
                if not data:
                    selector.unregister(key.fileobj)
                    answers[id(worker)] = bytes(buffer)
                    continue
                buffer += data
                told = False
                while id(worker) not in answers and len(buffer) >= FRAME.size:
                    mark, count = FRAME.unpack_from(buffer)
                    if mark != PROGRESS:
                        break  # the answer has begun: kept whole until the end
                    del buffer[: FRAME.size]
                    done[id(worker)] = count
                    told = True
                if told and progress:
                    progress(sum(done.values()), total)
    return answers


def _collect(
    worker: Worker | None, answer: bytes | None, share: list[Path], config: Config, guard: PathGuard
) -> list[Page]:
    if worker is not None:
        process, error_file = worker
        process.wait()
        error_file.seek(0)
        errors = error_file.read()
        error_file.close()
        if process.returncode == 0 and answer is not None:
            try:
                pages: list[Page] = pickle.loads(answer[FRAME.size :])
            except Exception as exc:  # a truncated answer: read the share here
                log.warning("a page reader's answer was unreadable (%s): reading here", exc)
            else:
                if len(pages) == len(share):
                    return pages
        else:
            tail = errors.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            log.warning(
                "a page reader failed (exit %s: %s): reading its %d pages here",
                process.returncode,
                tail[0],
                len(share),
            )
    return [read_page(path, config, guard) for path in share]
