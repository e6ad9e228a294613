"""Where the writer tools may write, and how a file is written there.

A writer (`new`, `rename`, `cite --page`, `lock`) writes inside the wiki folder (and the lock
file beside it), and never through a symlink: a page linked to a file outside the wiki
(`wiki/secret.md -> ~/.ssh/config`) or a folder linked out of it (`wiki/ops -> /srv/ops`) would
have the tool read a file it must not publish, or write where the wiki does not reach. Each part
of a destination's path below its folder is checked with `lstat`, so no link is followed, and a
part that does not exist yet is a folder the writer will make.

Files are written beside their destination and renamed over it, so a reader never sees half a
file; a new file gets the mode the user's umask allows (0666 without it), a replaced one keeps
its mode.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from groundwiki.core.config.errors import GroundwikiError


class UnsafeDestination(GroundwikiError):
    """A writer was asked to read or write a file outside its folder or through a symlink."""


def check_destination(path: Path, folder: Path, shown: str, root: Path) -> None:
    """Raise `UnsafeDestination` unless `path` lies in `folder` (by its spelling: no `..`, no
    symlink followed) and no part of it below `folder` is a symlink. `shown` names the folder in
    the message; `root` is what paths are shown from."""
    spelled = Path(os.path.abspath(path))
    if not spelled.is_relative_to(folder):
        raise UnsafeDestination(
            f"{_rel(spelled, root)} is outside {shown}; groundwiki writes only there. "
            "Nothing was changed"
        )
    current = folder
    for part in spelled.relative_to(folder).parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return  # the rest is made as real folders (or is the new file itself)
        except OSError as exc:
            raise UnsafeDestination(
                f"{_rel(current, root)} cannot be checked ({exc.strerror or exc}); "
                "nothing was changed"
            ) from None
        if stat.S_ISLNK(info.st_mode):
            raise UnsafeDestination(_through_link(current, spelled, root))


def _through_link(link: Path, path: Path, root: Path) -> str:
    target = os.readlink(link)
    shown = _rel(link, root)
    if link == path:
        return (
            f"{shown} is a symlink (to {target}); groundwiki's writer tools read and write no "
            "file through a symlink: edit the file it points to, or replace the link with a "
            "copy of the text. Nothing was changed"
        )
    return (
        f"{shown}/ is a symlink (to {target}), so {_rel(path, root)} would be written through "
        "it; groundwiki writes no file through a symlink: choose a path in a real folder of "
        "the wiki, or replace the link with the folder. Nothing was changed"
    )


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def write_atomic(path: Path, text: str) -> None:
    """Write `text` beside `path` and rename it over `path`: a reader sees the old file or the
    new one. A replaced file keeps its mode; a new one gets 0666 less the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = _create_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _create_beside(path: Path) -> tuple[int, Path]:
    """A new, empty file in `path`'s folder. Opened with mode 0666, so the kernel applies the
    umask (mkstemp's 0600 would make every new page private to its writer); O_EXCL refuses a
    name that exists, a symlink included, so nothing is written through one."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")
