"""Link resolution, Obsidian-style: exact key, then alias, then case-insensitive title.

Every lookup is a dictionary hit, so resolving all links is linear in the size of the wiki.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from .model import Link, Page, Resolution


def normalise(name: str) -> str:
    return " ".join(name.strip().split()).casefold()


class Resolver:
    def __init__(self, pages: Iterable[Page]) -> None:
        self.by_key: dict[str, str] = {}
        self.by_alias: dict[str, str] = {}
        self.by_title: dict[str, str] = {}
        self.by_path: dict[str, str] = {}
        pages = sorted(pages, key=lambda p: p.rel_path)
        # First writer wins on every collision; lint reports the collisions themselves.
        for page in pages:
            self.by_key.setdefault(normalise(page.key), page.key)
            self.by_path.setdefault(page.doc_path, page.key)
        for page in pages:
            for alias in page.aliases:
                self.by_alias.setdefault(normalise(alias), page.key)
            self.by_title.setdefault(normalise(page.title), page.key)

    def resolve_name(self, name: str) -> Resolution | None:
        wanted = normalise(name)
        if wanted in self.by_key:
            return Resolution(self.by_key[wanted], "key")
        if wanted in self.by_alias:
            return Resolution(self.by_alias[wanted], "alias")
        if wanted in self.by_title:
            return Resolution(self.by_title[wanted], "title")
        return None

    def resolve(self, link: Link, from_doc_path: str) -> Resolution | None:
        if link.kind == "wikilink" and not link.target and link.anchor:
            own = self.by_path.get(from_doc_path)  # [[#Heading]]: a heading of this page
            return Resolution(own, "key") if own else None
        if link.kind != "link":
            return self.resolve_name(link.target)
        target = link.target
        if target.startswith("/"):
            path = posixpath.normpath(target.lstrip("/"))
        else:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(from_doc_path), target))
        key = self.by_path.get(path)
        return Resolution(key, "path") if key else None
