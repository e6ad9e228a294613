"""Changes the writers' tools make to a wiki's files, planned first and applied all together.

A tool (`rename`, `new`, `cite --page`, `lock --fix-moved`) gathers every file it would write or
move into one `Edits`, which can show itself as a unified diff (`--dry-run`) or be applied. Every
file it reads, writes or moves must lie in the wiki folder (or be the lock file) and be reached
through no symlink (`safe_paths`), checked as it is planned and again before anything is written.
Before anything is written, every precondition is checked for every file: a file changed since it
was read, a destination that exists, a folder that cannot be written, a file git holds in an
unresolved merge. One failed check refuses the whole change, so a refusal leaves the tree as it
was. A write that still fails halfway (the disk fills) puts back the files already written.
"""

from __future__ import annotations

import difflib
import os
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.safe_paths import UnsafeDestination, check_destination, write_atomic


class Refused(GroundwikiError):
    """The change cannot be made safely; nothing was changed."""


@dataclass
class _Change:
    path: Path  # where the file is now
    before: str | None  # its text when read (None: a new file)
    after: str
    moved_from: Path | None = None


@dataclass(frozen=True)
class Planned:
    """One file's planned change: its text before and after, and where it moves from."""

    path: Path  # where the file will be
    before: str | None  # None: a new file
    after: str
    moved_from: Path | None = None


@dataclass
class Edits:
    """Planned changes under one root (the wiki's), shown and checked relative to it. Files are
    read and written only under `folders` or as one of `files` (by default: under `root`),
    never through a symlink; `wiki_edits` makes the wiki's."""

    root: Path
    folders: tuple[Path, ...] = ()
    files: tuple[Path, ...] = ()
    # Files open in an editor, read from its buffers: the language server plans on the text the
    # writer sees, and hands the change to the editor (`planned`) instead of applying it.
    buffers: Mapping[Path, str] = field(default_factory=dict)
    _changes: dict[Path, _Change] = field(default_factory=dict)

    def read(self, path: Path) -> str:
        """A file's text as the plan sees it: planned text if it is already changed."""
        change = self._changes.get(path)
        if change is not None:
            return change.after
        self._confine(path)
        return self._text(path)

    def _text(self, path: Path) -> str:
        buffered = self.buffers.get(path)
        return _read(path) if buffered is None else buffered

    def write(self, path: Path, text: str) -> None:
        """Give a file new text (a new file when it does not exist)."""
        self._confine(path)
        change = self._changes.get(path)
        if change is None:
            before = self._text(path) if path in self.buffers or path.exists() else None
            self._changes[path] = _Change(path, before, text)
        else:
            change.after = text

    def move(self, source: Path, destination: Path) -> None:
        """Move a file, with the text planned for it so far (changes may follow at the new path)."""
        self._confine(destination)
        change = self._changes.pop(source, None)
        if change is None:
            self._confine(source)
            text = self._text(source)
            change = _Change(source, text, text)
        if change.before is None:
            raise ValueError(f"cannot move {source}: it is a file this change creates")
        change.moved_from = change.moved_from or source
        change.path = destination
        self._changes[destination] = change

    def _confine(self, path: Path) -> None:
        """Refuse a file outside the folders this change may touch, or reached through a
        symlink: a page linked out of the wiki would be read, or written, where it leads."""
        spelled = Path(os.path.abspath(path))
        if spelled in self.files:
            # The lock file: checked from the wiki root, where its setting starts.
            base = self.root if spelled.is_relative_to(self.root) else spelled.parent
            check_destination(spelled, base, self._rel(base) + "/", self.root)
            return
        folders = self.folders or (self.root,)
        base = next((f for f in folders if spelled.is_relative_to(f)), folders[0])
        shown = "the wiki folder " + (self._rel(base) + "/" if base != self.root else "")
        check_destination(spelled, base, shown.strip(), self.root)

    def __bool__(self) -> bool:
        return any(c.before != c.after or c.moved_from for c in self._changes.values())

    def _ordered(self) -> Iterator[_Change]:
        yield from sorted(self._changes.values(), key=lambda c: self._rel(c.moved_from or c.path))

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def planned(self) -> list[Planned]:
        """Every file the change writes or moves, in the order of `paths`."""
        return [
            Planned(change.path, change.before, change.after, change.moved_from)
            for change in self._ordered()
            if change.before != change.after or change.moved_from is not None
        ]

    def paths(self) -> list[str]:
        """Every file the change writes, as shown to the user (moves as `old -> new`)."""
        shown = []
        for change in self._ordered():
            if change.moved_from is not None:
                shown.append(f"{self._rel(change.moved_from)} -> {self._rel(change.path)}")
            elif change.before != change.after:
                shown.append(self._rel(change.path))
        return shown

    def diff(self) -> str:
        """The whole change as a unified diff git can apply (`git apply`), renames included."""
        out: list[str] = []
        for change in self._ordered():
            old = self._rel(change.moved_from or change.path)
            new = self._rel(change.path)
            if change.moved_from is not None:
                out.append(f"diff --git a/{old} b/{new}\nrename from {old}\nrename to {new}\n")
            elif change.before == change.after:
                continue
            before = (change.before or "").splitlines(keepends=True)
            after = change.after.splitlines(keepends=True)
            for line in difflib.unified_diff(
                before,
                after,
                "/dev/null" if change.before is None else f"a/{old}",
                f"b/{new}",
            ):
                out.append(
                    line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                )
        return "".join(out)

    def check(self) -> None:
        """Refuse (raising `Refused`, changing nothing) unless every change can be made."""
        problems: list[str] = []
        unmerged = _unmerged(self.root)
        for change in self._ordered():
            source = change.moved_from or change.path
            shown = self._rel(source)
            try:  # again: a link may have been made since the change was planned
                self._confine(source)
                self._confine(change.path)
            except UnsafeDestination as exc:
                problems.append(str(exc).removesuffix(". Nothing was changed"))
                continue
            if change.before is not None:
                try:
                    now = _read(source)
                except OSError as exc:
                    problems.append(f"{shown} cannot be read: {exc.strerror or exc}")
                    continue
                if now != change.before:
                    problems.append(f"{shown} changed while the change was planned; run again")
            elif change.path.exists():
                problems.append(f"{shown} already exists")
            if change.moved_from is not None and change.path.exists():
                problems.append(f"{self._rel(change.path)} already exists")
            if source.resolve() in unmerged:
                problems.append(
                    f"{shown} has an unresolved merge conflict in git; resolve it first"
                )
            folder = _existing_folder(change.path.parent)
            if not os.access(folder, os.W_OK):
                problems.append(f"{self._rel(folder)}/ cannot be written")
            if change.before is not None and not os.access(source, os.W_OK):
                problems.append(f"{shown} is read-only")
        if problems:
            raise Refused("; ".join(problems) + "; nothing was changed")

    def apply(self, *, git: bool = True) -> None:
        """Check, then make every change; moves use `git mv` inside a git work tree (when the
        file is tracked), so history follows the page."""
        self.check()
        done: list[_Change] = []
        try:
            for change in self._ordered():
                if change.moved_from is not None:
                    change.path.parent.mkdir(parents=True, exist_ok=True)
                    if not (git and _git_mv(self.root, change.moved_from, change.path)):
                        os.replace(change.moved_from, change.path)
                done.append(change)
                if change.after != change.before:
                    write_atomic(change.path, change.after)
        except OSError as exc:
            _undo(done, self.root, git)
            raise Refused(
                f"writing failed ({exc.strerror or exc}); the files written so far were put back"
            ) from None


def wiki_edits(config: Config, buffers: Mapping[Path, str] | None = None) -> Edits:
    """The changes a writer tool makes to a wiki: its pages (in the wiki folder) and its lock
    file, nothing else; `buffers`: the texts of files open in an editor."""
    return Edits(
        config.root, folders=(config.docs_dir,), files=(config.lock_path,), buffers=buffers or {}
    )


def _read(path: Path) -> str:
    """A file's text with its line endings as they are: a change never rewrites CRLF as LF."""
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _existing_folder(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _undo(done: list[_Change], root: Path, git: bool) -> None:
    for change in reversed(done):
        try:
            if change.before is None:
                change.path.unlink(missing_ok=True)
                continue
            if change.moved_from is not None and not (
                git and _git_mv(root, change.path, change.moved_from)
            ):
                os.replace(change.path, change.moved_from)
            write_atomic(change.moved_from or change.path, change.before)
        except OSError:
            continue  # best effort: the error already raised says what failed


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return None  # no git on this machine: plain file operations


def in_git_work_tree(root: Path) -> bool:
    done = _git(root, "rev-parse", "--is-inside-work-tree")
    return done is not None and done.returncode == 0 and done.stdout.strip() == "true"


def _git_mv(root: Path, source: Path, destination: Path) -> bool:
    """Move with git when the file is tracked in a work tree; False leaves it to the caller."""
    if not in_git_work_tree(root):
        return False
    tracked = _git(root, "ls-files", "--error-unmatch", "--", str(source))
    if tracked is None or tracked.returncode != 0:
        return False
    moved = _git(root, "mv", "--", str(source), str(destination))
    return moved is not None and moved.returncode == 0


def _unmerged(root: Path) -> set[Path]:
    """Files git holds in an unresolved merge (both sides' versions in the index)."""
    done = _git(root, "ls-files", "--unmerged", "--full-name")
    if done is None or done.returncode != 0:
        return set()
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        return set()
    base = Path(top.stdout.strip())
    return {
        (base / line.split("\t", 1)[1]).resolve()
        for line in done.stdout.splitlines()
        if "\t" in line
    }
