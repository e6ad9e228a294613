"""The audit trail: one JSON line per answered search, hydration, drill-down and verify call,
HTTP and MCP alike, so an answer can be reviewed and replayed afterwards: who asked what, and
what came back from which state of the indexes.

Records go to `.groundwiki/audit/audit.jsonl` (inside the index folder), appended and flushed one
whole line at a time under a lock, so concurrent answers never interleave and sequence numbers
follow the order of the lines. When the file passes `audit_rotate_mb` it is renamed with its
first sequence number (`audit-000000000042.jsonl`) and a new one begins; only the newest
`audit_keep` files are kept. A record that cannot be written (a full disk, a read-only folder)
costs the audit, never the answer: `/status` says `audit: failing` with the error, and the next
record tries again. What a failed write leaves of its line (a full disk takes part of it) is cut
off before the next record, so no later record is glued onto it and lost; `lost` counts the
records that could not be kept, and stays in `/status` after writing works again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from groundwiki_sidecar.base.health import Health

log = logging.getLogger("groundwiki_sidecar")
CURRENT = "audit.jsonl"
ROTATED = "audit-*.jsonl"


class AuditLog:
    def __init__(self, folder: Path, rotate_bytes: int, keep: int) -> None:
        self.folder = folder
        self.rotate_bytes = rotate_bytes
        self.keep = keep
        self.health = Health()
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self._size = 0
        self._first = 0  # the sequence number of the current file's first record
        self.seq = last_sequence(folder)
        self.lost = 0  # records not kept since this log was opened: failed, or torn and cut

    def record(self, entry: dict[str, Any]) -> int | None:
        """Append one record; its sequence number, or None when it could not be written."""
        with self._lock:
            self.seq += 1
            stamped = {"seq": self.seq, "time": _now(), **entry}
            line = json.dumps(stamped, ensure_ascii=False, separators=(",", ":")) + "\n"
            try:
                self._append(line)
            except OSError as exc:
                if not self.health.failing:
                    log.error("cannot write the audit trail in %s: %s", self.folder, exc)
                self.health.failed(exc)
                self.lost += 1
                self._close()  # reopened by the next record, which cuts what this one left
                return None
            self.health.succeeded()
            return self.seq

    def status(self) -> dict[str, Any]:
        """For `/status`: ok or failing (with the error), the last sequence number, and how
        many records were lost since the sidecar started."""
        return {
            "state": self.health.state,
            "error": self.health.error,
            "records": self.seq,
            "lost": self.lost,
        }

    def _append(self, line: str) -> None:
        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # After a failed write here, its record is counted lost already; otherwise the torn
            # line is a record an earlier run lost.
            if _cut_torn_line(self.folder / CURRENT) and not self.health.failing:
                self.lost += 1
                log.warning(
                    "%s ended in part of a record (a write cut short by a full disk or a "
                    "crash); that part is cut off so the next record starts its own line",
                    self.folder / CURRENT,
                )
            self._file = open(self.folder / CURRENT, "a", encoding="utf-8")  # noqa: SIM115
            self._size = self._file.tell()
            if self._size == 0:
                self._first = self.seq
        data = line.encode("utf-8")
        if self._size and self._size + len(data) > self.rotate_bytes:
            self._rotate()
            self._file = open(self.folder / CURRENT, "a", encoding="utf-8")  # noqa: SIM115
            self._size, self._first = 0, self.seq
        self._file.write(line)
        self._file.flush()
        self._size += len(data)

    def _rotate(self) -> None:
        self._close()
        first = self._first or _first_sequence(self.folder / CURRENT)
        (self.folder / CURRENT).rename(self.folder / f"audit-{first:012d}.jsonl")
        for old in sorted(self.folder.glob(ROTATED))[: -max(self.keep - 1, 0) or None]:
            old.unlink(missing_ok=True)

    def _close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # a full disk may refuse the last flush too
                self._file.close()
            self._file = None

    def close(self) -> None:
        with self._lock:
            self._close()


def audit_files(folder: Path) -> list[Path]:
    """Every audit file, oldest records first."""
    found = sorted(folder.glob(ROTATED))
    if (folder / CURRENT).exists():
        found.append(folder / CURRENT)
    return found


def read_records(folder: Path) -> list[dict[str, Any]]:
    """Every record still kept, in order; a line cut short by a crash is skipped."""
    records = []
    for path in audit_files(folder):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def last_sequence(folder: Path) -> int:
    """The newest record's sequence number (0 without any): numbers go on across restarts."""
    for path in reversed(audit_files(folder)):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in reversed(lines):
            try:
                return int(json.loads(line)["seq"])
            except (ValueError, KeyError, TypeError):
                continue
    return 0


def _cut_torn_line(path: Path) -> bool:
    """Truncate the file after its last newline when it ends in part of a line; whether it did.
    The part cannot be parsed, and a record appended onto it could not be either."""
    try:
        with path.open("rb+") as file:
            end = file.seek(0, 2)
            if end == 0:
                return False
            file.seek(end - 1)
            if file.read(1) == b"\n":
                return False
            block = 64 * 1024
            position = end
            while position > 0:  # back to the last newline, a block at a time
                start = max(0, position - block)
                file.seek(start)
                found = file.read(position - start).rfind(b"\n")
                if found >= 0:
                    file.truncate(start + found + 1)
                    return True
                position = start
            file.truncate(0)
            return True
    except FileNotFoundError:
        return False


def _first_sequence(path: Path) -> int:
    try:
        with path.open(encoding="utf-8") as lines:
            return int(json.loads(next(lines))["seq"])
    except (OSError, StopIteration, ValueError, KeyError, TypeError):
        return int(time.time())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
