"""A large batch of new documents written as several Whoosh segments, in spawned processes.

Whoosh indexes in Python, one core per writer. Where the sidecar may fork (no threads yet),
Whoosh's own multiprocessing writer splits a large batch across forked children. The sidecar's
first sync runs beside its HTTP server, so it may not fork (core/files/forking.py), and wrote the
vault's 6,571 pages on one core. Here the batch is cut in shares, and each share goes to a fresh
interpreter (`segment_worker.py`) that analyses it and writes it as a segment of the same index,
without the index's lock (the writer here holds it). The commit lists those segments beside the
index's others, as Whoosh's multiprocessing writer does, through the commit's public merge hook.
This process only waits: a share written here would wait for the workers before Whoosh sorts
and writes its postings, at commit. A worker that fails has its share written here instead,
with a warning: nothing is lost, it is only slower.
"""

from __future__ import annotations

import logging
import pickle
import subprocess
from typing import IO, Any

from groundwiki.core.files.forking import spawn_count as spawned
from groundwiki.core.files.forking import spawn_workers

from groundwiki_sidecar.index.terms import analysed

log = logging.getLogger("groundwiki_sidecar")
# A worker costs about 0.3 s to start (an interpreter, Whoosh's imports) and a page about 1.5 ms
# to write: a share smaller than this is written faster here.
SPAWN_FROM = 1000

Worker = tuple[subprocess.Popen[bytes], IO[bytes]]  # the process, the file of its errors


def spawn_count(count: int) -> int:
    """Workers to write a batch of `count` new documents (0: write it here)."""
    return spawned(count, SPAWN_FROM)


def write_spread(
    writer: Any, docs: list[dict[str, Any]], text_fields: tuple[str, ...], workers: int
) -> Any:
    """`docs` (new, unanalysed) added to `writer`'s index by `workers` workers, as segments of
    their own. Returns the merge function to commit with (`writer.commit(mergetype=...)`),
    which lists the workers' segments."""
    size = -(-len(docs) // workers)
    shares = [docs[i : i + size] for i in range(0, len(docs), size)]
    folder = writer.storage.folder
    started = spawn_workers(
        "groundwiki_sidecar.index.segment_worker",
        [(folder, writer.indexname, share, text_fields) for share in shares],
        log,
        "cannot start a lexical index writer (%s): writing its share here",
    )
    segments: list[Any] = []
    for share, worker in zip(shares, started, strict=True):
        segment = _collect(worker, len(share))
        if segment is None:
            analysed(writer.schema, share, text_fields)
            for doc in share:
                writer.add_document(**doc)
        else:
            segments.append(segment)

    def with_workers(_: Any, existing: list[Any]) -> list[Any]:
        # The index's segments as they are (no merge: a large batch), then the workers'.
        return [*existing, *segments]

    return with_workers


def _collect(worker: Worker | None, count: int) -> Any | None:
    """The segment a worker wrote, or None when it failed (said in the log)."""
    if worker is None:
        return None
    process, error_file = worker
    assert process.stdout is not None
    output = process.stdout.read()
    process.wait()
    error_file.seek(0)
    errors = error_file.read()
    error_file.close()
    if process.returncode == 0:
        try:
            segment = pickle.loads(output)
        except Exception as exc:  # a truncated answer: the share is written here
            log.warning("a lexical index writer's answer was unreadable (%s)", exc)
        else:
            if segment.doc_count_all() == count:
                return segment
            log.warning("a lexical index writer wrote %d of %d", segment.doc_count_all(), count)
        return None
    tail = errors.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    log.warning(
        "a lexical index writer failed (exit %s: %s): writing its %d documents here",
        process.returncode,
        tail[0],
        count,
    )
    return None
