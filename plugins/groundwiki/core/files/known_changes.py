"""A folder's listing brought up to date from the paths a file watcher saw change, without
walking the folder again.

A long-running process (the sidecar) is told which paths changed; walking 10,000 page files and
stating each one to find the one that did cost more than the rest of an edit's sync. Each
changed path is looked at on its own instead (one lstat), and classified as the walk would
(`file_cache.walk`): hidden names and files that are not regular are never listed. What a path
alone cannot tell (a folder created or moved in, a symlink) is answered with None: the caller
walks, as it would without the watcher.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection
from pathlib import Path

from groundwiki.core.files.file_cache import utf8_name

# What a walk of the pages folder found: page files, those that are symlinks, the others' paths.
Scan = tuple[tuple[Path, ...], frozenset[Path], tuple[str, ...]]


def below(path: Path, folder: Path) -> str | None:
    """`path` from `folder` with forward slashes, or None when it is not under it (or is it)."""
    text, root = str(path), str(folder).rstrip(os.sep) + os.sep
    if not text.startswith(root) or text == root:
        return None
    return text[len(root) :].replace(os.sep, "/")


def _listable(relative: str) -> bool | None:
    """Whether a walk could list this path by its name alone: False for a hidden name, None
    for a name that is not UTF-8 (the walk warns about those: let it)."""
    parts = relative.split("/")
    if any(part.startswith(".") for part in parts):
        return False
    if not all(utf8_name(part) for part in parts):
        return None
    return True


def updated_scan(
    scan: Scan,
    changed: Collection[Path],
    folder: Path,
    suffix: str,
    excluded: Callable[[str], bool] | None = None,
) -> Scan | None:
    """`scan` (files ending with `suffix`, the links among them, the other files' relative
    paths) after the changes to `changed`, or None when only a walk can tell. A path
    `excluded` says is no file of the folder (MkDocs' exclude_docs) is never listed."""
    paths, linked, others = set(scan[0]), set(scan[1]), set(scan[2])
    listing = False  # whether a file came or went
    for path in changed:
        relative = below(path, folder)
        if relative is None:
            continue
        listable = _listable(relative)
        if listable is None:
            return None
        if not listable or (excluded is not None and excluded(relative)):
            continue
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            # Gone, and whatever was listed under it (a deleted folder) with it.
            inside = str(path) + os.sep
            kept = {p for p in paths if p != path and not str(p).startswith(inside)}
            kept_others = {o for o in others if o != relative and not o.startswith(relative + "/")}
            listing |= len(kept) != len(paths) or len(kept_others) != len(others)
            paths, others, linked = kept, kept_others, linked & kept
            continue
        except OSError:
            return None
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
                return None  # a folder's contents, or where a link leads: only a walk knows
            continue  # a fifo or a socket: never listed
        linked.discard(path)  # a link replaced by a file
        if relative.endswith(suffix):
            listing |= path not in paths
            paths.add(path)
        else:
            listing |= relative not in others
            others.add(relative)
    if not listing:
        return (scan[0], frozenset(linked), scan[2])
    # The walk's order: by the path from the folder, which on POSIX is the order of the whole
    # path (one common prefix).
    return (tuple(sorted(paths, key=str)), frozenset(linked), tuple(sorted(others)))


def changed_below(changed: Collection[Path], folder: Path) -> list[tuple[str, Path]]:
    """The changed paths under `folder` that a walk could list: (relative path, path)."""
    found = []
    for path in changed:
        relative = below(path, folder)
        if relative is not None and _listable(relative) is not False:
            found.append((relative, path))
    return sorted(found)
