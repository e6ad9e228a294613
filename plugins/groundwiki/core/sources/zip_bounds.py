"""The bounds on anything groundwiki inflates from a zip: an office document (a zip of XML) or a
.zip of raw sources. Both are checked from the zip's directory, before a byte is inflated: a zip
bomb is refused in the time it takes to read its list of members."""

from __future__ import annotations

from collections.abc import Iterable
from zipfile import ZipInfo

MAX_INFLATED = 100 * 1024 * 1024  # bytes a container may inflate to, all members together
MAX_RATIO = 200  # inflated / compressed size of a container


class Refused(Exception):
    """A bound the file goes past; the message says which."""


def check_inflation(members: Iterable[ZipInfo], size: int, limit: int = MAX_INFLATED) -> None:
    """Refuse a zip of `size` bytes whose members declare more than `limit` bytes together, or
    more than `MAX_RATIO` times its size (a member that inflates past what it declares is
    stopped there by zipfile, which reads no further than the declared size)."""
    inflated = sum(member.file_size for member in members)
    if inflated > limit:
        raise Refused(f"it inflates to {inflated:,} bytes (at most {limit:,})")
    if inflated > MAX_RATIO * max(size, 1):
        raise Refused(
            f"it inflates {inflated // max(size, 1):,} times its size (at most {MAX_RATIO})"
        )
