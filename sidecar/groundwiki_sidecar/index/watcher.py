"""File events from watchdog, debounced into batches for the indexer.

Any event under the pages folder, the raw-sources folder or on the lock file marks the wiki
dirty. The sync thread waits until events have been quiet for the debounce interval (bounded,
so a steady stream of edits still syncs), then runs one sync, which compares every file against
its stamp: a burst of hundreds of events (a `git checkout`) becomes one batch, and an event the
operating system dropped is still caught by the comparison. A periodic sync backs up the
watcher, and if the observer dies the sidecar falls back to polling and says so in its status.

A watched folder replaced whole (`rm -rf wiki && mv wiki.new wiki`, as some editors and a `git
checkout` of a folder do) takes its inotify watch with it. So each folder's parent is watched
too, which sees the new folder arrive, and before every batch each folder's identity (device,
inode) is compared with the one being watched: a new folder gets a new watch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

log = logging.getLogger("groundwiki_sidecar")

MAX_WAIT_S = 2.0  # a batch starts at most this long after its first event
SAFETY_SYNC_S = 60.0  # a full comparison at least this often, events or not
POLL_S = 5.0  # how often to compare when the observer is not running

Identity = tuple[int, int]  # (device, inode) of a watched folder


def _identity(folder: Path) -> Identity | None:
    try:
        found = os.stat(folder)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if os.path.isdir(folder) else None


def _live(observer: BaseObserver, watch: ObservedWatch) -> bool:
    """Whether the watch still reports: watchdog stops a watch when its folder is deleted. The
    identity alone misses `rm -rf wiki && mkdir wiki`, which on ext4 gets the same inode back."""
    emitters = getattr(observer, "_emitter_for_watch", None)  # no public accessor
    if emitters is None:
        return True
    emitter = emitters.get(watch)
    return emitter is not None and emitter.is_alive()


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or under it (`wiki2/x` is not under `wiki`)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class _Handler(FileSystemEventHandler):
    def __init__(self, wanted: Callable[[str], bool], notify: Callable[[list[str], bool], None]):
        self.wanted = wanted
        self.notify = notify

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in {"opened", "closed_no_write"}:
            return  # reads do not change the wiki
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        wanted = [p for p in paths if p and self.wanted(p)]
        if not wanted:
            return
        if event.is_directory and event.event_type == "modified":
            wanted = []  # a file in it came or went: that file's own event says which
        # A folder created or moved in brings files no event names: only a walk finds them.
        self.notify(wanted, event.is_directory and event.event_type in {"created", "moved"})


class Watcher:
    """Runs `sync(reason)` after file changes, from its own thread."""

    def __init__(
        self,
        folders: list[Path],
        lock_file: Path,
        ignore: Path,
        sync: Callable[..., object],  # sync(reason, changes=paths or None)
        debounce_s: float = 0.1,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.folders = list(folders)  # one missing now is watched once it appears
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
        # The paths events named since the last batch, handed to it so that it looks at those
        # alone; None when a batch must compare every file (the first after the watch starts,
        # a folder moved in, a failed batch).
        self._paths: set[Path] | None = None
        self._paths_lock = threading.Lock()
        self._observer: BaseObserver | None = None
        self._handler = _Handler(self._wanted, self._notify)
        self._watches: dict[Path, tuple[ObservedWatch, Identity]] = {}
        # Held while watches are changed: `stop` waits for a re-arm under way, so none adds a
        # watch after the observer has dropped them all (its thread would outlive the stop).
        self._arming = threading.Lock()
        self.rearmed = 0  # folders replaced while watched, and watched again
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

    def _notify(self, paths: list[str], walk: bool) -> None:
        with self._paths_lock:
            if walk:
                self._paths = None
            elif self._paths is not None:
                self._paths.update(Path(p) for p in paths)
        if self.on_change is not None:
            self.on_change()
        self.pending_events += 1
        self._last_event = time.monotonic()
        self._changed.set()

    def start(self, full_sync_follows: bool = False) -> None:
        """Watch from now on. `full_sync_follows`: the caller compares every file after this
        (the first sync), so every change since is an event, and the first batch too may be
        handed only the paths the events named; otherwise it compares every file."""
        if full_sync_follows:
            with self._paths_lock:
                self._paths = set()
        observer = Observer()
        handler = self._handler
        parents = {self.lock_file.parent, *(folder.parent for folder in self.folders)}
        try:
            for parent in sorted(parents):
                if parent.is_dir():  # sees a watched folder created or moved into place
                    observer.schedule(handler, str(parent), recursive=False)
            for folder in self.folders:
                self._watch(observer, folder)
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
        with self._arming:  # a re-arm under way ends first; later ones see `_stop`
            pass
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        self._thread.join(timeout=30)
        self.state = "stopped"

    def _watch(self, observer: BaseObserver, folder: Path) -> None:
        identity = _identity(folder)
        if identity is not None:
            watch = observer.schedule(self._handler, str(folder), recursive=True)
            self._watches[folder] = (watch, identity)

    def rearm(self) -> int:
        """Watch again each folder replaced (or created) since it was watched; returns how many.
        The old watch ended with its folder's inode."""
        with self._arming:
            if self._stop.is_set():
                return 0
            return self._rearm()

    def _rearm(self) -> int:
        observer = self._observer
        if observer is None:
            return 0
        renewed = 0
        for folder in self.folders:
            held = self._watches.get(folder)
            now = _identity(folder)
            if now == (held[1] if held else None) and (held is None or _live(observer, held[0])):
                continue
            if held is not None:
                self._watches.pop(folder)
                # Its emitter may have stopped already, with the folder.
                with contextlib.suppress(KeyError, OSError):
                    observer.unschedule(held[0])
            if now is not None:
                try:
                    self._watch(observer, folder)
                except OSError as exc:
                    log.error("cannot watch %s again (%s): polling instead", folder, exc)
                    self.state = "polling"
                    return renewed
                log.warning("%s was replaced: watching the new folder", folder)
                self.rearmed += 1
                renewed += 1
        return renewed

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
                with self._paths_lock:
                    self._changed.clear()
                    events, self.pending_events = self.pending_events, 0
                    known, self._paths = self._paths, set()
                reason = f"{events} file event{'s' if events != 1 else ''}"
            else:
                reason = "periodic check" if self.state != "polling" else "polling"
                with self._paths_lock:
                    known, self._paths = None, set()  # compares every file
            if (
                self._observer is not None
                and not self._observer.is_alive()
                and self.state == "watching"
            ):
                log.error("the file watcher stopped: polling every %.0f s instead", POLL_S)
                self.state = "polling"
            rearmed = self.rearmed
            if self.state == "watching":
                try:
                    self.rearm()  # before the sync, so that nothing after it is missed
                except Exception:  # never a reason to skip the sync itself
                    log.exception("cannot watch a replaced folder again: polling instead")
                    self.state = "polling"
            if self.state != "watching" or self.rearmed != rearmed:
                known = None  # events may have been lost: compare every file
            try:
                self.sync(reason, changes=None if known is None else frozenset(known))
            except Exception:  # a failed batch must not end the watcher; the next one retries
                log.exception("sync failed (%s); retrying on the next change", reason)
                with self._paths_lock:
                    self._paths = None  # what it was told is not in: the next compares all
