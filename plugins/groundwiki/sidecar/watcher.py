"""File events from watchdog, debounced into batches for the indexer.

Any event under the pages folder, the raw-sources folder or on the lock file marks the wiki
dirty. The sync thread waits until events have been quiet for the debounce interval (bounded,
so a steady stream of edits still syncs), then runs one sync, which compares every file against
its stamp: a burst of hundreds of events (a `git checkout`) becomes one batch, and an event the
operating system dropped is still caught by the comparison. A periodic sync backs up the
watcher, and if the observer dies the sidecar falls back to polling and says so in its status.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

log = logging.getLogger("groundwiki.sidecar")

MAX_WAIT_S = 2.0  # a batch starts at most this long after its first event
SAFETY_SYNC_S = 60.0  # a full comparison at least this often, events or not
POLL_S = 5.0  # how often to compare when the observer is not running


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or under it (`wiki2/x` is not under `wiki`)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class _Handler(FileSystemEventHandler):
    def __init__(self, wanted: Callable[[str], bool], notify: Callable[[], None]) -> None:
        self.wanted = wanted
        self.notify = notify

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in {"opened", "closed_no_write"}:
            return  # reads do not change the wiki
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        if any(p and self.wanted(p) for p in paths):
            self.notify()


class Watcher:
    """Runs `sync(reason)` after file changes, from its own thread."""

    def __init__(
        self,
        folders: list[Path],
        lock_file: Path,
        ignore: Path,
        sync: Callable[[str], object],
        debounce_s: float = 0.2,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.folders = [f for f in folders if f.is_dir()]
        self.lock_file = lock_file
        self.ignore = str(ignore)
        self.sync = sync
        self.debounce_s = debounce_s
        self.on_change = on_change
        self.pending_events = 0
        self.state = "starting"  # watching | polling (observer failed) | stopped
        self._changed = threading.Event()
        self._stop = threading.Event()
        self._last_event = 0.0
        self._observer: Observer | None = None
        self._thread = threading.Thread(target=self._run, name="groundwiki-sync", daemon=True)

    def _wanted(self, path: str) -> bool:
        if _inside(path, self.ignore):
            return False
        name = path.rsplit("/", 1)[-1]
        if name.endswith(("~", ".swp", ".swx", ".tmp")) or name.startswith(".#"):
            return False  # editor scratch files; their final rename is an event of its own
        if path == str(self.lock_file):
            return True
        return any(_inside(path, str(folder)) for folder in self.folders)

    def _notify(self) -> None:
        if self.on_change is not None:
            self.on_change()
        self.pending_events += 1
        self._last_event = time.monotonic()
        self._changed.set()

    def start(self) -> None:
        observer = Observer()
        handler = _Handler(self._wanted, self._notify)
        try:
            for folder in self.folders:
                observer.schedule(handler, str(folder), recursive=True)
            if self.lock_file.parent.is_dir():
                observer.schedule(handler, str(self.lock_file.parent), recursive=False)
            observer.start()
            self._observer = observer
            self.state = "watching"
        except OSError as exc:  # e.g. inotify watch limit reached
            log.error("file watching failed (%s): polling every %.0f s instead", exc, POLL_S)
            self.state = "polling"
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._changed.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        self._thread.join(timeout=30)
        self.state = "stopped"

    def _run(self) -> None:
        while not self._stop.is_set():
            timeout = POLL_S if self.state == "polling" else SAFETY_SYNC_S
            woke = self._changed.wait(timeout=timeout)
            if self._stop.is_set():
                return
            if woke:
                first = time.monotonic()
                # Quiet for the debounce interval, or the batch has waited long enough.
                while time.monotonic() - self._last_event < self.debounce_s:
                    if time.monotonic() - first > MAX_WAIT_S or self._stop.is_set():
                        break
                    time.sleep(self.debounce_s / 4)
                self._changed.clear()
                events, self.pending_events = self.pending_events, 0
                reason = f"{events} file event{'s' if events != 1 else ''}"
            else:
                reason = "periodic check" if self.state != "polling" else "polling"
            if (
                self._observer is not None
                and not self._observer.is_alive()
                and self.state == "watching"
            ):
                log.error("the file watcher stopped: polling every %.0f s instead", POLL_S)
                self.state = "polling"
            try:
                self.sync(reason)
            except Exception:  # a failed batch must not end the watcher; the next one retries
                log.exception("sync failed (%s); retrying on the next change", reason)
