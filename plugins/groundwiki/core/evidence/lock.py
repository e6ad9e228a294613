"""The lock file: the sha256 of exactly what each page cites, committed beside the wiki.

One line per (page, citation), tab-separated and sorted, so a review shows which citations an
edit touched:

    page <TAB> citation <TAB> sha256 of the cited text <TAB> first-line hash

The first-line hash (16 hex digits of the sha256 of the first cited line; `-` for whole-file
citations) lets lint find cited text that moved without hashing every window of the source.
Pointer chunks are recorded too (`chunk:<id>`), so consumers can tell when the chunk behind a
pointer changed.

Reading never raises: a damaged line (a merge conflict, a hand edit) becomes a problem that lint
reports, and `groundwiki lock` can always rewrite the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from groundwiki.core.files.safe_paths import check_destination, write_atomic

HEADER = (
    "# groundwiki lock: sha256 of what each page cites. Written by `groundwiki lock`; commit it.\n"
    "# page\tcitation\tsha256\tfirst-line\n"
)
_HEX = frozenset("0123456789abcdef")
CHUNK = "chunk:"  # a pointer chunk's record: `chunk:<id>` in the citation column


def chunk_citation(chunk_id: str) -> str:
    """The citation column of a pointer chunk's record."""
    return CHUNK + chunk_id


@dataclass(frozen=True)
class LockRecord:
    sha256: str
    first_line: str | None = None  # 16 hex digits, for range citations
    line: int = 0  # where the record stands in the lock file


@dataclass(frozen=True)
class LockEntry:
    page: str
    citation: str  # `raw-sources/path#L1-L9`, `raw-sources/path`, or `chunk:<id>`
    sha256: str
    first_line: str | None = None


@dataclass(frozen=True)
class LockProblem:
    line: int
    message: str


@dataclass(frozen=True)
class Lock:
    records: Mapping[tuple[str, str], LockRecord] = field(default_factory=dict)
    exists: bool = False
    problems: tuple[LockProblem, ...] = ()

    def get(self, page: str, citation: str) -> LockRecord | None:
        return self.records.get((page, citation))

    def chunk_ids(self, page: str | None = None) -> frozenset[str]:
        """The pointer chunks the lock records for one page, or for every page: a chunk ID
        recorded here but gone from the sources now is evidence that changed after locking."""
        return self._chunks_by_page.get(page, frozenset())

    @cached_property
    def _chunks_by_page(self) -> dict[str | None, frozenset[str]]:
        """Per page key, and under None for all pages (read once, asked on every verify)."""
        found: dict[str | None, set[str]] = {None: set()}
        for page, citation in self.records:
            if citation.startswith(CHUNK):
                chunk_id = citation.removeprefix(CHUNK)
                found.setdefault(page, set()).add(chunk_id)
                found[None].add(chunk_id)
        return {page: frozenset(ids) for page, ids in found.items()}

    def pages(self) -> dict[str, int]:
        """Each page key the lock records, with the first line that names it."""
        first: dict[str, int] = {}
        for (page, _), record in self.records.items():
            if page not in first or record.line < first[page]:
                first[page] = record.line
        return first


def _escape(field_text: str) -> str:
    return field_text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _unescape(field_text: str) -> str:
    out: list[str] = []
    chars = iter(field_text)
    for char in chars:
        if char == "\\":
            nxt = next(chars, "")
            out.append({"t": "\t", "n": "\n"}.get(nxt, nxt))
        else:
            out.append(char)
    return "".join(out)


def _is_hex(text: str, length: int) -> bool:
    return len(text) == length and set(text) <= _HEX


def read_lock(path: Path) -> Lock:
    if not path.is_file():
        return Lock()
    records: dict[tuple[str, str], LockRecord] = {}
    problems: list[LockProblem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Lock({}, True, (LockProblem(1, f"cannot read the lock file: {exc}"),))
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (3, 4) or not _is_hex(fields[2], 64):
            problems.append(
                LockProblem(number, "expected 'page<TAB>citation<TAB>sha256<TAB>first-line'")
            )
            continue
        first_line = fields[3] if len(fields) == 4 and _is_hex(fields[3], 16) else None
        key = (_unescape(fields[0]), _unescape(fields[1]))
        records[key] = LockRecord(fields[2], first_line, number)
    return Lock(records, True, tuple(problems))


def render_lock(entries: Iterable[LockEntry]) -> str:
    rows = sorted({(e.page, e.citation, e.sha256, e.first_line or "-") for e in entries})
    return HEADER + "".join(
        f"{_escape(page)}\t{_escape(citation)}\t{digest}\t{first}\n"
        for page, citation, digest, first in rows
    )


@dataclass(frozen=True)
class LockChange:
    added: int
    changed: int
    removed: int
    written: bool


def plan_lock(path: Path, entries: Iterable[LockEntry]) -> tuple[LockChange, str]:
    """What writing the lock would change (`written`: whether the file would differ), and the
    text it would hold."""
    entries = list(entries)
    old = read_lock(path).records
    new = {(e.page, e.citation): e.sha256 for e in entries}
    added = sum(1 for k in new if k not in old)
    changed = sum(1 for k, v in new.items() if k in old and old[k].sha256 != v)
    removed = sum(1 for k in old if k not in new)
    text = render_lock(entries)
    if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
        return LockChange(0, 0, 0, written=False), text
    return LockChange(added, changed, removed, written=True), text


def write_lock(path: Path, entries: Iterable[LockEntry], root: Path | None = None) -> LockChange:
    """Write the lock when it would change. Refused (`UnsafeDestination`) when it, or a folder
    on its way from `root` (the wiki root; by default its own folder), is a symlink: the lock
    would be written where the link leads."""
    base = root if root is not None and path.is_relative_to(root) else path.parent
    check_destination(path, base, f"{base.as_posix()}/", root or path.parent)
    change, text = plan_lock(path, entries)
    if change.written:
        write_atomic(path, text)  # a reader sees the old lock or the new one; its mode is kept
    return change
