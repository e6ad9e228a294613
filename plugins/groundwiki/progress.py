"""A progress line on standard error for long work: a bar on a terminal, with the pace and the
time left once a stage has run a few seconds; elsewhere (a CI log, a service's journal) a plain
line every half minute, and only for stages that last that long."""

from __future__ import annotations

import sys
import time
from types import TracebackType

PACE_AFTER_S = 2.0  # a rate over less time than this says more about start-up than speed
LOG_EVERY_S = 30.0


def duration(seconds: float) -> str:
    """A wait as people say it: 40 s, 3 min, 2 h 05 min."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


class Progress:
    def __init__(self, enabled: bool = True, min_interval: float = 0.1) -> None:
        self.terminal = sys.stderr.isatty()
        self.enabled = enabled
        self.min_interval = min_interval
        self._last = 0.0
        self._shown = False
        self._stage = ""
        self._started = 0.0
        self._logged = 0.0

    def update(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if stage != self._stage:
            self._stage, self._started, self._logged = stage, now, now
        pace = self.pace(done, total, now)
        if not self.terminal:
            if now - self._logged >= LOG_EVERY_S:
                self._logged = now
                sys.stderr.write(f"{stage}: {done}/{total}{pace}\n")
                sys.stderr.flush()
            return
        if done != total and now - self._last < self.min_interval:
            return
        self._last = now
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r{stage:8} [{bar}] {done}/{total}{pace}\033[K")
        sys.stderr.flush()
        self._shown = True

    def pace(self, done: int, total: int, now: float) -> str:
        """`, 52.1/s, about 3 min left` once the stage has run PACE_AFTER_S."""
        elapsed = now - self._started
        if elapsed < PACE_AFTER_S or done <= 0:
            return ""
        rate = done / elapsed
        left = f", about {duration((total - done) / rate)} left" if total > done else ""
        return f", {rate:.1f}/s{left}"

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
