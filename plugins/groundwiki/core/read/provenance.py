"""Provenance citations: `<!-- from: raw-sources/path#L10-L24 -->` and frontmatter `sources:`.

A citation may only point inside the raw-sources folder. The checks here are lexical (no `..`,
no absolute path) and physical (the resolved path, symlinks followed, stays inside the folder).
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from groundwiki.core.model.records import MEMBER_SEPARATOR, Citation, Location, Problem

_FROM = re.compile(r"^\s*from:\s*(?P<spec>\S.*?)\s*$", re.DOTALL)
_RANGE = re.compile(r"^L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")
# No file has a billion lines; longer numbers are refused before `int()`, which raises past
# 4,300 digits.
MAX_LINE_DIGITS = 9
SHOWN_CHARS = 120  # of a citation, in a message: a page can hold a megabyte-long comment


_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def without_comments(text: str) -> str:
    """`text` without its HTML comments (provenance comments among them): a passage as a reader
    sees it, where its citations are given another way (chunk IDs beside it)."""
    return _HTML_COMMENT.sub(" ", text)


def comment_spec(comment_text: str) -> str | None:
    """The citation inside a `from:` comment, or None for any other HTML comment."""
    match = _FROM.match(comment_text)
    return match.group("spec") if match else None


def parse_citation(
    spec: str, at: Location, origin: str, raw_prefix: str, guard: PathGuard
) -> Citation | Problem:
    """Check a written citation such as `raw-sources/notes.md#L3-L9` and make it a `Citation`."""
    raw = spec
    shown = _shown(spec)
    path_part, _, fragment = spec.partition("#")
    path_part = path_part.strip()
    start = end = None
    if fragment:
        match = _RANGE.match(fragment.strip())
        if match is None:
            return Problem(
                "invalid-citation",
                at,
                f"cannot read the line range '#{_shown(fragment)}' in citation '{shown}'",
                "write a range as #L10-L24, or #L10 for a single line",
                shown,
            )
        if any(len(n or "") > MAX_LINE_DIGITS for n in match.group("start", "end")):
            return Problem(
                "invalid-citation",
                at,
                f"a line number in citation '{shown}' has more than {MAX_LINE_DIGITS} digits",
                "cite the lines the evidence is on: #L10-L24",
                shown,
            )
        start = int(match.group("start"))
        end = int(match.group("end") or start)
        if start < 1 or end < start:
            return Problem(
                "invalid-citation",
                at,
                f"line range '#{fragment}' in citation '{shown}' is empty or starts before line 1",
                "write the first line before the last, counting from 1: #L10-L24",
                shown,
            )
    posix = PurePosixPath(path_part.replace("\\", "/"))
    outside = Problem(
        "source-outside-raw",
        at,
        f"citation '{shown}' points outside {raw_prefix}/",
        f"cite a file inside {raw_prefix}/ (copy the evidence there; it is never edited afterwards)",
        shown,
    )
    if posix.is_absolute() or ".." in posix.parts or re.match(r"^[a-zA-Z]:", path_part):
        return outside
    parts = posix.parts
    prefix_parts = PurePosixPath(raw_prefix).parts
    if tuple(parts[: len(prefix_parts)]) != prefix_parts or len(parts) == len(prefix_parts):
        return Problem(
            "invalid-citation",
            at,
            f"citation '{shown}' does not start with '{raw_prefix}/'",
            f"write the path from the wiki root: {raw_prefix}/{_shown(posix.as_posix())}",
            shown,
        )
    relative = PurePosixPath(*parts[len(prefix_parts) :]).as_posix()
    if not guard.stays_inside(relative):
        return outside  # a symlink inside raw-sources that leads out of it
    return Citation(relative, at, start, end, origin, raw)  # type: ignore[arg-type]


def _shown(text: str) -> str:
    """`text` as a message quotes it: whole when short, else its start and its length."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[: SHOWN_CHARS - 40]}... ({len(text):,} characters)"


class PathGuard:
    """Whether cited paths stay inside the raw-sources folder once symlinks are followed.

    One guard serves one compile: pages cite the same few sources thousands of times, and each
    path is resolved once; a new compile (the next `mkdocs serve` build) sees changed links.
    """

    def __init__(self, raw_dir: Path) -> None:
        self.raw_dir = str(raw_dir.resolve())
        self._inside: dict[str, bool] = {}

    def stays_inside(self, relative: str) -> bool:
        inside = self._inside.get(relative)
        if inside is None:
            # An archive's member (`a.zip!/b.md`) is inside where its archive is.
            on_disk = relative.split(MEMBER_SEPARATOR, 1)[0]
            resolved = os.path.realpath(os.path.join(self.raw_dir, on_disk))
            root = self.raw_dir.rstrip(os.sep)
            inside = resolved == root or resolved.startswith(root + os.sep)
            self._inside[relative] = inside
        return inside
