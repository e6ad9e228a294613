"""`mkdocs serve` notices a save through the system's file events instead of polling.

MkDocs 1.6's server polls: twice a second it walks every file it watches and stats each one.
At 10,000 pages and 2,000 raw sources a walk takes a few tenths of a second of the interpreter,
so the watcher held the interpreter a quarter of the time a rebuild ran beside it, and a save
waited up to half a second plus a walk to be noticed. Where the system has file events
(inotify, FSEvents, ReadDirectoryChangesW) the server gets watchdog's native observer instead,
with the same paths and the same callbacks; where they cannot be had (no inotify instances left,
a file system without events) it keeps polling, as MkDocs does.
"""

from __future__ import annotations

import logging
import threading
from inspect import signature
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.groundwiki")


class ChangeLog:
    """The paths the file events named since the last build took them, so that the compile
    looks at those alone instead of walking and stating every file (about a second at 10,000
    pages). Unknown (None) until events are recorded, after a folder was created or moved in
    (its files get no events of their own), and whenever the server polls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[Path] | None = None

    def start(self) -> None:
        """From now on every change is recorded (the build before this walked the folders)."""
        with self._lock:
            self._paths = set()

    def record(self, paths: list[str], walk: bool) -> None:
        with self._lock:
            if walk:
                self._paths = None
            elif self._paths is not None:
                self._paths.update(Path(p) for p in paths if p)

    def take(self) -> frozenset[Path] | None:
        """What changed since the last `take`, or None when a walk must tell; recording goes on
        (a walk now finds whatever the unknown changes were)."""
        with self._lock:
            found, self._paths = self._paths, set()
        return None if found is None else frozenset(found)


def use_file_events(server: Any, changes: ChangeLog | None = None) -> bool:
    """Swap the server's polling observer for a native one; whether it was swapped. `changes`
    records the paths each event names."""
    try:
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver
    except ImportError:
        return False
    watched = getattr(server, "_watched_paths", None)
    refs = getattr(server, "_watch_refs", None)
    if not isinstance(watched, dict) or not isinstance(refs, dict):
        return False  # another MkDocs than 1.6: leave its watcher alone
    schedule = getattr(Observer, "schedule", None)
    if (
        Observer is PollingObserver
        or schedule is None
        or "event_filter" not in signature(schedule).parameters
    ):
        return False  # no native events, or a watchdog before 4.0 that cannot filter them
    if not _events_work(Observer, list(watched)):
        return False
    server.observer = _WritesOnly(Observer, changes)()
    paths = dict(watched)
    watched.clear()
    refs.clear()
    for path, count in paths.items():
        for _ in range(count):
            server.watch(path)
    return True


def _WritesOnly(observer_class: Any, changes: ChangeLog | None = None) -> Any:
    """The observer, passing on only what changes a file: native observers also report files
    opened and closed, which every build does, and MkDocs rebuilds on any event."""
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
        FileSystemEventHandler,
    )

    writes = [
        FileCreatedEvent,
        FileModifiedEvent,
        FileDeletedEvent,
        FileMovedEvent,
        FileClosedEvent,  # closed after writing
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
    ]

    class Recording(FileSystemEventHandler):
        """Records what an event names, then hands it to MkDocs' handler."""

        def __init__(self, handler: Any) -> None:
            self.handler = handler

        def dispatch(self, event: Any) -> None:
            if changes is not None:
                paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
                walk = event.is_directory and event.event_type in {"created", "moved"}
                changes.record(paths, walk)
            self.handler.dispatch(event)

    class WritesOnly(observer_class):
        def schedule(self, handler: Any, path: Any, **options: Any) -> Any:
            options.setdefault("event_filter", writes)
            return super().schedule(Recording(handler), path, **options)

    return WritesOnly


def _events_work(observer_class: Any, paths: list[str]) -> bool:
    """Whether a native observer can watch these paths here (it may run out of inotify
    watches or instances): tried once, then stopped."""
    import watchdog.events

    trial = observer_class()
    try:
        for path in paths:
            trial.schedule(watchdog.events.FileSystemEventHandler(), path, recursive=True)
        trial.start()
    except OSError as exc:
        log.info(f"groundwiki: no file events here ({exc}); mkdocs serve keeps polling")
        return False
    finally:
        if trial.is_alive():
            trial.stop()
            trial.join()
    return True
