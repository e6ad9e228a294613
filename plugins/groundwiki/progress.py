"""A progress line on standard error for long compiles; silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from types import TracebackType


class Progress:
    def __init__(self, enabled: bool = True, min_interval: float = 0.1) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.min_interval = min_interval
        self._last = 0.0
        self._shown = False

    def update(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done != total and now - self._last < self.min_interval:
            return
        self._last = now
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r{stage:8} [{bar}] {done}/{total}")
        sys.stderr.flush()
        self._shown = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
