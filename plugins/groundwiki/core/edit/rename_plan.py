"""What a rename plan says (`RenamePlan`), the links it leaves as written (`LeftLink`), and
`RenameRefused`, raised with nothing planned when the rename cannot be made as asked."""

from __future__ import annotations

from dataclasses import dataclass

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.model.scopes import GLOBAL
from groundwiki.core.wiki.compiled import ResolvedLink

PAGE_SUFFIX = ".md"


class RenameRefused(GroundwikiError):
    """The rename cannot be made as asked; nothing was changed."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}. Nothing was changed")


@dataclass(frozen=True)
class LeftLink:
    """A link that reached the page and is left as written (it still reaches it by the alias)."""

    path: str
    line: int
    written: str
    reason: str


@dataclass(frozen=True)
class RenamePlan:
    old_path: str  # the page file, from the wiki root
    new_path: str
    old_key: str
    new_key: str
    links: int  # links rewritten
    linking_files: int  # files whose links were rewritten (the page itself included)
    alias: str | None  # the old name added to the page's aliases
    lock_rows: int  # lock records moved to the new key
    left: tuple[LeftLink, ...]
    lock_from: str = ""  # the page's name in the lock before (its key, scoped) and after
    lock_to: str = ""
    old_scope: str = GLOBAL
    new_scope: str = GLOBAL
    seen_by: str | None = None  # who sees the page after a move across scopes
    lost: tuple[LeftLink, ...] = ()  # links that reach the page, or from it, and no longer will


def left_link(item: ResolvedLink, reason: str) -> LeftLink:
    return LeftLink(
        item.page.rel_path, item.link.at.line, item.link.raw or item.link.target, reason
    )
