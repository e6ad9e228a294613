"""How fast vectors are being computed, for `/status`, `groundwiki index` and the benchmarks.

A sliding window of the last minute's model calls: fast enough to show a change (an edit
burst, a server slowing down) and long enough not to jump with each batch's text lengths.
"""

from __future__ import annotations

import threading
import time
from collections import deque

WINDOW_S = 60.0


class RateMeter:
    def __init__(self, window_s: float = WINDOW_S) -> None:
        self.window_s = window_s
        self._calls: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()
        self.total = 0

    def add(self, texts: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._calls.append((now, texts))
            self.total += texts
            self._trim(now)

    def rate(self, now: float | None = None) -> float | None:
        """Texts per second over the window; None before two calls or after a quiet window
        (no work is not a speed)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._trim(now)
            if len(self._calls) < 2:
                return None
            first = self._calls[0][0]
            # The first call's texts were computed before its time stamp: not in the span.
            texts = sum(n for _, n in self._calls) - self._calls[0][1]
            span = max(now, self._calls[-1][0]) - first
            return texts / span if span > 0 else None

    def eta_s(self, pending: int, now: float | None = None) -> float | None:
        """Seconds until `pending` texts are embedded at the current rate (None: unknown)."""
        if pending == 0:
            return 0.0
        rate = self.rate(now)
        return pending / rate if rate else None

    def _trim(self, now: float) -> None:
        while self._calls and now - self._calls[0][0] > self.window_s:
            self._calls.popleft()
