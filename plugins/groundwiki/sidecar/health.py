"""Whether the sidecar's background work is succeeding: the sync of files into the indexes, and
the embedding of what changed. A failure is kept with its error and since when, so `/status`
and every answer's `freshness` say that answers come from an older state of the files, instead
of only the log saying so."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

ERROR_CHARS = 300  # an exception's text can carry a value's repr of any size


def describe(exc: BaseException) -> str:
    """An exception as one bounded line: its type (what to search the log for) and its text."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 20] + "... (cut)"


@dataclass
class Health:
    """One kind of background work: ok, or failing since the first failure in a row."""

    error: str = ""
    since: float | None = None  # when the current run of failures began
    last_ok: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def failing(self) -> bool:
        return self.since is not None

    @property
    def state(self) -> str:
        return "failing" if self.failing else "ok"

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            self.error = describe(exc)
            if self.since is None:
                self.since = time.time()

    def succeeded(self) -> None:
        with self._lock:
            self.error, self.since, self.last_ok = "", None, time.time()

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "state": self.state,
                "error": self.error,
                "since": self.since,
                "last_ok": self.last_ok,
            }

    def reason(self) -> str:
        """For a lane's status: what failed and since when."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since or 0))
        return f"failing since {stamp}: {self.error}"


def freshness(generation: int, synced_at: float, sync: Health) -> dict[str, Any]:
    """What every query answer carries: which state of the files it was computed from, and
    whether newer edits are failing to reach the indexes."""
    data: dict[str, Any] = {"generation": generation, "synced_at": synced_at, "sync": sync.state}
    if sync.failing:
        data["error"] = sync.error
        data["since"] = sync.since
    return data
