"""How far a sidecar's start has come: what `/healthz`, `/status` and the log say while the port
is open and the indexes are still being built.

A sidecar answers within a second or two of its start, whatever the size of the wiki: the
libraries and the model load, and the first sync runs, behind an open port. Until the page
index is in, every search says the sidecar is starting (`503 not_ready`) with the stage it is
at; the log says each stage as it begins and how far it is every LOG_EVERY_S, on a terminal or
not (a service's journal, a CI log, an MCP client's stderr).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

log = logging.getLogger("groundwiki_sidecar")
LOG_EVERY_S = 10.0
# What each progress stage of a start is doing, as the log and /status say it.
STAGES = {
    "loading": "loading the search libraries and the embedding model",
    "pages": "reading the page files",
    "sources": "reading the raw sources",
    "index": "writing the lexical index",
    "passages": "cutting pages into passages",
    "chunks": "cutting raw sources into chunks",
    "vectors": "computing the page vectors (passages and chunks follow)",
}


class Startup:
    """Thread-safe: the start's thread writes it, request handlers read it."""

    def __init__(self, quiet: bool = False) -> None:
        """`quiet`: no progress lines in the log (`-q`); /status still says how far it is."""
        self.quiet = quiet
        self._lock = threading.Lock()
        self.started = time.time()
        self._clock = time.monotonic()
        self.stage = "loading"
        self.done = 0
        self.total = 0
        self.ready = False  # the service runs (its snapshot may still be partial)
        self.failed = ""  # why the start failed: the process then stops
        self._logged = 0.0
        if not quiet:
            log.info("starting: %s", STAGES["loading"])

    def update(self, stage: str, done: int, total: int) -> None:
        """A progress callback (stage, done, total), as the compile and the indexer call it."""
        now = time.monotonic()
        with self._lock:
            changed = stage != self.stage
            self.stage, self.done, self.total = stage, done, total
            due = changed or now - self._logged >= LOG_EVERY_S or (done == total and total)
            if due:
                self._logged = now
        if due and not self.quiet:
            what = STAGES.get(stage, stage)
            log.info("starting: %s, %d of %d (%.0f s)", what, done, total, now - self._clock)

    def running(self) -> None:
        with self._lock:
            self.ready = True

    def fail(self, reason: str) -> None:
        with self._lock:
            self.failed = reason

    def to_json(self) -> dict[str, Any]:
        """The stage and a percentage, never counts of files: in a scoped wiki those would
        tell a user how many pages the others have."""
        with self._lock:
            share = self.done / self.total if self.total else 0.0
            return {
                "stage": self.stage,
                "doing": STAGES.get(self.stage, self.stage),
                "percent": round(100 * min(share, 1.0), 1),
                "since": self.started,
                "seconds": round(time.monotonic() - self._clock, 1),
            }
