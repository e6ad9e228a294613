"""When Python's cyclic collector walks what a long-running compile keeps alive.

Work that ends (a site build, a sidecar batch) leaves everything it made moved out of the
collector's sight (`gc.freeze`): exiting does not walk it again, and the next build's or batch's
own collections do not either. A full collection walks every object alive, about 2.5 s at
10,000 pages; giving the last build's objects back at the start of a rebuild (as the plugin
first did) made one land inside nearly every rebuild, the writer waiting on it, and in the
sidecar one landed inside about one edit's batch in twenty. The garbage of what was frozen is
collected instead once the process has been idle for a moment, in a timer thread; work that
starts during it waits for the rest of it, and work that starts first cancels it. Where work
never pauses that long, the collection runs anyway once `every_s` has passed since the last,
so frozen garbage does not grow without bound.
"""

from __future__ import annotations

import gc
import threading
import time

IDLE_S = 2.0  # after a build, how long a server stays idle before the collection runs


class Collector:
    def __init__(self, idle_s: float = IDLE_S, every_s: float | None = None) -> None:
        self.idle_s = idle_s
        self.every_s = every_s
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._collected = time.monotonic()
        self._stopped = False

    def build_starts(self, serving: bool) -> None:
        """Work starts: a collection still waiting for idleness is not needed before it. A
        single build gives the collector back what a previous one froze (there is none)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if not serving:
            gc.unfreeze()

    def build_ends(self, serving: bool) -> None:
        """Everything alive is frozen; in a long-running process, collected again once it is
        idle (or soon, when the last collection is `every_s` old). Nothing once stopped."""
        delay = self.idle_s
        if self.every_s is not None and time.monotonic() - self._collected > self.every_s:
            delay = min(delay, IDLE_S)
        with self._lock:
            if self._stopped:
                return
            gc.freeze()
            if not serving:
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(delay, self._collect)
            self._timer.daemon = True
            self._timer.start()

    def _collect(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._collected = time.monotonic()

    def stop(self) -> None:
        """The process stops this work (a sidecar service stopped within a longer process):
        no collection waits any more, and what was frozen is the collector's again; work that
        still ends after this (a last batch) freezes nothing."""
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        gc.unfreeze()
