"""One process keeps an index folder: two writers would fight over Whoosh's lock and Chroma's
files. The claim is an flock on `sidecar.lock`, so it ends with the process, kill -9 included:
forked workers (the parallel page read, Whoosh's writer) drop it at once and die with the
process, so none outlives a killed sidecar holding it.

Cheap to take (no index library is imported): `groundwiki serve` takes it before its port
opens, so a second sidecar on the same folder is refused at once, not after a minute of start.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from groundwiki.core.files.forking import not_for_children, release

from groundwiki_sidecar.base.settings import IndexBusy

LOCK_FILE = "sidecar.lock"


class IndexClaim:
    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle

    @classmethod
    def take(cls, folder: Path) -> IndexClaim:
        """The claim on `folder` (made if missing), or IndexBusy naming who holds it."""
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / LOCK_FILE, "a+")  # noqa: SIM115 - held for the claim's life
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise IndexBusy(
                f"{folder} is in use by {holder}; stop it, or use that sidecar (its HTTP API "
                "and its MCP endpoint at /mcp/)"
            ) from None
        not_for_children(handle.fileno())
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        return cls(handle)

    def release(self) -> None:
        if self._handle.closed:
            return
        release(self._handle.fileno())
        self._handle.close()  # the flock ends with the descriptor
