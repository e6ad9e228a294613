"""The lock file: the sha256 of exactly what each page cites, committed beside the wiki.

One line per (page, citation), tab-separated and sorted, so a review shows which citations an
edit touched. Pointer chunks are recorded too (`chunk:<id>`), so consumers can tell when the
chunk behind a pointer changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

HEADER = (
    "# groundwiki lock: sha256 of what each page cites. Written by `groundwiki lock`; commit it.\n"
    "# page\tcitation\tsha256\n"
)


class LockError(Exception):
    """A lock file that cannot be read; the message names the line."""


@dataclass(frozen=True)
class LockEntry:
    page: str
    citation: str  # `raw-sources/path#L1-L9`, `raw-sources/path`, or `chunk:<id>`
    sha256: str


@dataclass(frozen=True)
class Lock:
    entries: Mapping[tuple[str, str], str]
    exists: bool

    def get(self, page: str, citation: str) -> str | None:
        return self.entries.get((page, citation))


def read_lock(path: Path) -> Lock:
    if not path.is_file():
        return Lock({}, exists=False)
    entries: dict[tuple[str, str], str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or len(fields[2]) != 64:
            raise LockError(
                f"{path.name}:{number}: expected 'page<TAB>citation<TAB>sha256'; "
                "regenerate the file with `groundwiki lock`"
            )
        entries[(fields[0], fields[1])] = fields[2]
    return Lock(entries, exists=True)


def render_lock(entries: Iterable[LockEntry]) -> str:
    rows = sorted({(e.page, e.citation, e.sha256) for e in entries})
    return HEADER + "".join(f"{page}\t{citation}\t{digest}\n" for page, citation, digest in rows)


@dataclass(frozen=True)
class LockChange:
    added: int
    changed: int
    removed: int
    written: bool


def write_lock(path: Path, entries: Iterable[LockEntry]) -> LockChange:
    entries = list(entries)
    old = read_lock(path).entries if path.is_file() else {}
    new = {(e.page, e.citation): e.sha256 for e in entries}
    added = sum(1 for k in new if k not in old)
    changed = sum(1 for k, v in new.items() if k in old and old[k] != v)
    removed = sum(1 for k in old if k not in new)
    text = render_lock(entries)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return LockChange(0, 0, 0, written=False)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # atomic: a reader sees the old lock or the new one
    return LockChange(added, changed, removed, written=True)
