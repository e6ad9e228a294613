"""What an earlier compile read, reused while the file has not changed.

A long-running process (the sidecar, `mkdocs serve`) recompiles after every edit; with this
cache a recompile parses only the files that changed, so the cost of an edit does not grow with
the size of the wiki. A file counts as unchanged while its size, modification time (ns) and inode
are the same; an editor's save-by-rename gives a new inode.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger("groundwiki")
Stamp = tuple[int, int, int]
T = TypeVar("T")


def walk(
    root: Path,
    *,
    suffix: str = "",
    links: bool = False,
    linked: set[Path] | None = None,
    others: list[str] | None = None,
) -> list[Path]:
    """Files under `root` whose name ends with `suffix`, hidden files and folders left out,
    sorted by their path from `root` with forward slashes. With `links`, symlinks are listed
    whatever they point at (a folder, nothing), so reading them can say what is wrong; folder
    links are never followed. `linked`, when given, receives the listed files that are symlinks:
    those may lead out of `root`. `others`, when given, receives the paths from `root` of the
    regular files whose name does not end with `suffix` (a wiki's attachments). os.scandir, not pathlib: a long-running process lists the tree
    on every change, and a directory entry says what it is without another system call."""
    found: list[tuple[str, Path]] = []
    pending = [(str(root), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable or gone meanwhile: as os.walk, list what can be listed
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            if not utf8_name(name):
                _warn_name(entry.path)
                continue
            try:
                is_link = entry.is_symlink()
                if is_link and entry.is_dir():
                    if links:
                        found.append((prefix + name, Path(entry.path)))
                    continue
                if not is_link and entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, f"{prefix}{name}/"))
                    continue
                if not name.endswith(suffix) or not (links or entry.is_file()):
                    if others is not None and not is_link and entry.is_file():
                        others.append(prefix + name)
                    continue
            except OSError:
                continue
            path = Path(entry.path)
            found.append((prefix + name, path))
            if is_link and linked is not None:
                linked.add(path)
    found.sort(key=lambda item: item[0])
    return [path for _, path in found]


def utf8_name(name: str) -> bool:
    """Whether a file name is UTF-8 text. Other bytes reach Python as lone surrogates, which no
    hash, page or JSON file can hold: such a file is left out of the wiki, with a warning."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_warned: set[str] = set()  # a long-running process lists the tree on every change


def _warn_name(path: str) -> None:
    if path not in _warned:
        _warned.add(path)
        shown = os.fsencode(path).decode("utf-8", "replace")
        log.warning(
            "%s is left out of the wiki: its name is not UTF-8 text (rename it with UTF-8 "
            "characters)",
            shown,
        )


def stamp(path: Path) -> Stamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


@dataclass
class StampedCache(Generic[T]):
    entries: dict[Path, tuple[Stamp, T]] = field(default_factory=dict)

    def get(self, path: Path) -> T | None:
        entry = self.entries.get(path)
        if entry is None or entry[0] != stamp(path):
            return None
        return entry[1]

    def put(self, path: Path, value: T, at: Stamp | None) -> None:
        if at is not None:
            self.entries[path] = (at, value)

    def keep_only(self, paths: set[Path]) -> None:
        """Forget files that no longer exist, so a long run does not hold every deleted page.

        The entries are keyed by the objects given: every walk of a folder makes new path
        objects, and a lookup by the same object is an identity check where an equal one
        compares the paths' parts (an editor's keystroke looks up every page file)."""
        entries = self.entries
        self.entries = {path: entry for path in paths if (entry := entries.get(path)) is not None}
