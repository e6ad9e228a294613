"""The members of a .zip of raw sources, each read in memory by its own format's extractor.

A member is a raw source of its own, named `<archive>!/<path in the archive>` (a zip inside a
zip: `bundle.zip!/inner.zip!/notes.md`); its lines are its format's. Folders, hidden members
(`.DS_Store`, `__MACOSX/`) are skipped; nothing is ever written to disk.

An archive is untrusted, so everything is bounded before it is inflated: the whole tree of
archives inflates to at most `MAX_INFLATED` bytes, each zip to at most `MAX_RATIO` times its
size, a zip holds at most `MAX_MEMBERS` members, zips nest `MAX_DEPTH` deep (the archive itself
is depth 1), and LaTeX members, slow to parse, share one `MAX_LATEX_BYTES`. A member that goes
past a bound, is encrypted or damaged is a finding of its own; an archive that is no zip, goes
past a bound as a whole, or names members outside itself (`../x`, `/etc/x`) is a finding on the
archive.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from io import BytesIO
from typing import IO

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.model.records import MEMBER_SEPARATOR
from groundwiki.core.sources.extract import extract_bytes, format_of, is_archive
from groundwiki.core.sources.extracted import Extracted
from groundwiki.core.sources.latex import MAX_LATEX_BYTES
from groundwiki.core.sources.zip_bounds import MAX_INFLATED, MAX_RATIO, Refused, check_inflation

__all__ = ["MAX_DEPTH", "MAX_MEMBERS", "MAX_RATIO", "SEPARATOR", "Member", "read_archive"]

SEPARATOR = MEMBER_SEPARATOR  # between an archive's path and a member's in a source's name
MAX_DEPTH = 2  # archives inside archives read: the archive and the zips it holds
MAX_MEMBERS = 10_000  # members of one zip, folders included
_ENCRYPTED = 0x1  # general purpose flag bit 0
# A member's name must stay inside the archive and fit a citation and the lock file.
_UNSAFE = re.compile(r"^/|^[A-Za-z]:|(^|/)\.\.(/|$)|[\x00-\x1f\x7f]|!/")


@dataclass(frozen=True)
class Member:
    name: str  # its path inside the archive; in a nested archive, joined by SEPARATOR
    extracted: Extracted


@dataclass
class _Budget:
    """What is left to inflate, shared by an archive and the archives inside it."""

    inflated: int = MAX_INFLATED
    latex: int = MAX_LATEX_BYTES
    refused: list[str] = field(default_factory=list)  # member names refused, with why


def read_archive(stream: IO[bytes], size: int) -> tuple[list[Member], Extracted | None]:
    """The members of the zip in `stream` (`size` bytes), and the finding on the archive as a
    whole, None when there is none."""
    budget = _Budget()
    try:
        members = _members(stream, size, 1, budget)
    except Refused as exc:
        return [], _problem(
            f"the archive goes past a safety limit: {exc}",
            "split it into smaller archives, or unpack it into raw-sources",
        )
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        return [], _problem(
            f"cannot read the archive: {excerpt(f'{type(exc).__name__}: {exc}', 200)}",
            "re-create the .zip, or unpack it into raw-sources",
        )
    if budget.refused:
        shown = ", ".join(budget.refused[:5])
        more = f" and {len(budget.refused) - 5:,} more" if len(budget.refused) > 5 else ""
        return members, _problem(
            f"the archive holds members that are not read: {shown}{more}",
            "re-create the archive with plain relative paths inside it",
        )
    return members, None


def _problem(problem: str, hint: str) -> Extracted:
    return Extracted("zip", None, problem=problem, hint=hint)


def _members(
    stream: IO[bytes], size: int, depth: int, budget: _Budget, within: str = ""
) -> list[Member]:
    """The members of one zip; `within` is the path of the inner archive it is, for messages."""
    with zipfile.ZipFile(stream) as archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise Refused(f"it holds {len(infos):,} members (at most {MAX_MEMBERS:,})")
        check_inflation(infos, size, budget.inflated)
        named: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = _readable_name(info, budget, within)
            if name is not None and name not in named:
                named[name] = info
        found: list[Member] = []
        for name, info in sorted(named.items()):
            found += _member(archive, name, info, depth, budget)
        return found


def _readable_name(info: zipfile.ZipInfo, budget: _Budget, within: str) -> str | None:
    """The member's path to name it by, or None for a folder, a hidden file or an unsafe name
    (which is added to the budget's refused names)."""
    if info.is_dir():
        return None
    given = info.filename.replace("\\", "/")  # zips made on Windows may use backslashes
    if _UNSAFE.search(given):
        shown = excerpt(within + given, 80)
        budget.refused.append(f"'{shown}' (a path leading out of the archive)")
        return None
    parts = [part for part in given.split("/") if part not in {"", "."}]
    if not parts or any(part.startswith(".") or part == "__MACOSX" for part in parts):
        return None
    return "/".join(parts)


def _member(
    archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo, depth: int, budget: _Budget
) -> list[Member]:
    fmt = format_of(name)
    if fmt is None:
        return [Member(name, extract_bytes(name, b""))]  # unsupported, said without inflating
    try:
        if info.flag_bits & _ENCRYPTED:
            raise Refused("it is encrypted")
        if is_archive(name) and depth >= MAX_DEPTH:
            raise Refused(f"it is an archive nested deeper than {MAX_DEPTH} levels")
        if fmt == "latex":
            if info.file_size > budget.latex:
                raise Refused(f"the archive's LaTeX goes past {MAX_LATEX_BYTES:,} bytes")
            budget.latex -= info.file_size
        data = _inflate(archive, info, budget)
    except Refused as exc:
        return [Member(name, _refused(fmt, f"the member goes past a safety limit: {exc}"))]
    except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError, EOFError) as exc:
        shown = excerpt(f"{type(exc).__name__}: {exc}", 200)
        return [Member(name, _refused(fmt, f"cannot inflate the member: {shown}"))]
    if not is_archive(name):
        return [Member(name, extract_bytes(name, data))]
    try:
        inner = _members(BytesIO(data), len(data), depth + 1, budget, name + SEPARATOR)
    except Refused as exc:
        return [Member(name, _refused(fmt, f"the inner archive goes past a safety limit: {exc}"))]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        shown = excerpt(f"{type(exc).__name__}: {exc}", 200)
        return [Member(name, _refused(fmt, f"cannot read the inner archive: {shown}"))]
    return [Member(f"{name}{SEPARATOR}{member.name}", member.extracted) for member in inner]


def _refused(fmt: str, problem: str) -> Extracted:
    return Extracted(fmt, None, problem=problem, hint="add the member as a file of its own")


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
    if info.file_size > budget.inflated:
        raise Refused(f"the archive inflates past {MAX_INFLATED:,} bytes")
    with archive.open(info) as stream:
        # zipfile stops at the declared size and then fails the CRC check; reading one byte
        # more is the guard should it ever read on.
        data = stream.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise Refused("it inflates past the size its header declares")
    budget.inflated -= len(data)
    return data
