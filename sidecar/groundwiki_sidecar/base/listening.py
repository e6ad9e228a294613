"""Where a running sidecar listens, recorded in its index folder.

`groundwiki serve --port N` may listen elsewhere than `sidecar.port` in mkdocs.yml, so `serve`
writes `listening.json` (pid, host, port) once it holds the index folder and removes it when
it stops. `status` and `query` read it to reach that sidecar. A sidecar killed with `kill -9`
leaves the file behind; its pid is then gone and the record is ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from groundwiki_sidecar.base.settings import host_name

RECORD = "listening.json"


def base_url(host: str, port: int) -> str:
    """Where this machine reaches a sidecar bound to `host`. A wildcard bind (0.0.0.0, ::) is
    reached on loopback: its own address is no name the sidecar answers to."""
    return f"http://{host_name(host) or '127.0.0.1'}:{port}"


@dataclass(frozen=True)
class Listening:
    pid: int
    host: str
    port: int

    @property
    def url(self) -> str:
        return base_url(self.host, self.port)


def record(index_dir: Path, host: str, port: int) -> Path:
    """Write this process's address; replaced whole, so a reader never sees half a record."""
    path = index_dir / RECORD
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(asdict(Listening(os.getpid(), host, port))), encoding="utf-8")
    os.replace(partial, path)
    return path


def forget(index_dir: Path) -> None:
    """Remove the record if this process wrote it."""
    found = _read(index_dir / RECORD)
    if found is not None and found.pid == os.getpid():
        (index_dir / RECORD).unlink(missing_ok=True)


def running(index_dir: Path) -> Listening | None:
    """The record of a sidecar that is still alive, or None."""
    found = _read(index_dir / RECORD)
    return found if found is not None and _alive(found.pid) else None


def _read(path: Path) -> Listening | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = Listening(int(data["pid"]), str(data["host"]), int(data["port"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None  # none, or not one this version wrote: the configured port applies
    return found if found.pid > 0 and 0 < found.port < 65536 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, run by another user
        return True
    return True
