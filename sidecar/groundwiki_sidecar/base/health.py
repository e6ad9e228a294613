"""Whether the sidecar's background work is succeeding: the sync of files into the indexes, and
the embedding of what changed. A failure is kept with its error and since when, so `/status`
and every answer's `freshness` say that answers come from an older state of the files, instead
of only the log saying so.

In a scoped wiki the state of that work is everyone's (one sync and one embedder serve every
view), but its error text can name one user's file: each viewer is shown it whole only when it
names no file or page of another user (`shown_error`); otherwise a neutral sentence, and the
sidecar's log keeps the text.
"""

from __future__ import annotations

import errno
import os
import re
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

ERROR_CHARS = 300  # an exception's text can carry a value's repr of any size
# What a viewer is shown instead of an error that names another user's file or page.
OUTSIDE_VIEW = "failed on a file outside your view (the sidecar's log names it)"


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

    def to_json(self, others: Collection[str] = ()) -> dict[str, Any]:
        """`others`: the users whose files the viewer must not be told of."""
        with self._lock:
            return {
                "state": self.state,
                "error": shown_error(self.error, others),
                "since": self.since,
                "last_ok": self.last_ok,
            }

    def reason(self, others: Collection[str] = ()) -> str:
        """For a lane's status: what failed and since when."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since or 0))
        return f"failing since {stamp}: {shown_error(self.error, others)}"


def shown_error(error: str, others: Collection[str]) -> str:
    """`error` as a viewer is shown it: whole, unless it names a file or page of one of
    `others` (user IDs), by its path below `user/<id>/` (either slash) or its ID in the indexes
    (`user:<id>/key`, and so `page:user:<id>/key`); then `OUTSIDE_VIEW`."""
    if error and others and _naming(tuple(sorted(others))).search(error):
        return OUTSIDE_VIEW
    return error


@lru_cache(maxsize=64)
def _naming(others: tuple[str, ...]) -> re.Pattern[str]:
    # A user ID ends where a name character stops: `user/bob` is not `user/bob.smith`.
    ids = "|".join(re.escape(user) for user in others)
    return re.compile(rf"user(?:[/:]|\\+)(?:{ids})(?![\w.-])")


def freshness(
    generation: int, synced_at: float, sync: Health, others: Collection[str] = ()
) -> dict[str, Any]:
    """What every query answer carries: which state of the files it was computed from, and
    whether newer edits are failing to reach the indexes (the error as `shown_error` shows it
    to a viewer who must not be told of `others`' files)."""
    data: dict[str, Any] = {"generation": generation, "synced_at": synced_at, "sync": sync.state}
    if sync.failing:
        data["error"] = shown_error(sync.error, others)
        data["since"] = sync.since
    return data


# SQLite's result codes for a passing condition, as Chroma quotes them ("(code: 14) unable to
# open database file"): CANTOPEN, FULL, IOERR, BUSY, LOCKED, NOMEM. A store that fails this way
# is not damaged, and deleting it would throw away an index for a shortage of descriptors.
_PASSING_CODES = ("(code: 14)", "(code: 13)", "(code: 10)", "(code: 5)", "(code: 6)", "(code: 7)")
_PASSING_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.EACCES, errno.EIO, errno.ENOMEM}


def passing_failure(exc: BaseException) -> bool:
    """Whether opening an index failed for a reason outside it (too many open files, a full
    disk, permissions) rather than because its files are damaged: then it must be kept, not
    rebuilt."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _PASSING_ERRNOS:
            return True
        text = str(current)
        if any(code in text for code in _PASSING_CODES) or "Too many open files" in text:
            return True
        current = current.__cause__ or current.__context__
    # Chroma's Rust core does not always say why: short of descriptors it can report a failed
    # log purge, which reads like damage. A process that cannot open a few more files now was
    # failing for want of them, so the store is kept.
    return short_of_descriptors()


def short_of_descriptors(reserve: int = 64) -> bool:
    """Whether this process cannot open `reserve` more files right now."""
    held: list[int] = []
    try:
        for _ in range(reserve):
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        return exc.errno in {errno.EMFILE, errno.ENFILE}
    finally:
        for descriptor in held:
            os.close(descriptor)
    return False
