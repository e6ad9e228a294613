"""When Python's cyclic collector walks what a build keeps alive.

A build ends with everything it made moved out of the collector's sight (`gc.freeze`): exiting
does not walk it again, and under `mkdocs serve` a rebuild's own collections do not either. A
full collection walks every object alive, about 2.5 s at 10,000 pages; giving the last build's
objects back at the start of a rebuild (as the plugin first did) made one land inside nearly
every rebuild, the writer waiting on it. Under a server the last build's garbage is collected
instead once the server has been idle for a moment after a build, in a timer thread; a save
during it waits for the rest of it, and a rebuild cancels a collection not started yet.
"""

from __future__ import annotations

import gc
import threading

IDLE_S = 2.0  # after a rebuild, how long the server stays idle before the collection runs


class Collector:
    def __init__(self) -> None:
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def build_starts(self, serving: bool) -> None:
        """A build starts: a collection still waiting for idleness is not needed before it.
        A single build gives the collector back what a previous one froze (there is none)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if not serving:
            gc.unfreeze()

    def build_ends(self, serving: bool) -> None:
        """Everything alive is frozen; under a server, collected again once it is idle."""
        gc.freeze()
        if serving:
            with self._lock:
                self._timer = threading.Timer(IDLE_S, self._collect)
                self._timer.daemon = True
                self._timer.start()

    @staticmethod
    def _collect() -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
