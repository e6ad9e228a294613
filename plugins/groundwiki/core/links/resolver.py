"""Link resolution as Obsidian does it, then groundwiki's aliases and titles.

A wikilink or ref names a page by its file name anywhere in the wiki (case-insensitive, `.md`
optional), by a path (`Folder/Note`: from the wiki's root, relative with `./` or `../`, or the
end of a path), or by its key. When a name fits pages in several folders, Obsidian picks one:
the note at that path from the root, else the one in the linking page's own folder, else the
one with the shortest path; the others are kept as candidates for lint to name (a name that is
the path of a note at the root is that note, and fits no other). Only then are aliases and titles tried, so a
vault's links land where Obsidian sends them.

A Markdown link to a `.md` file (`[a](Note.md)`) is first a path relative to the linking page,
as MkDocs reads it; when no page is there, it is a file name or path as above, as Obsidian reads
the links it writes (shortest path, path from the root), but never an alias or a title.

A name that is no page may be an attachment: any other file under the wiki folder or under
raw-sources (`![[diagram.png]]`), found by name or path the same way. In a scoped wiki
(scopes.py) a view finds only the files it may see, as it finds only the pages it may: the
shared view the files outside `user/`, a user's view their own under `user/<id>/` first, then
the shared ones.

Every lookup is a dictionary hit, so resolving all links is linear in the size of the wiki.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable
from typing import Literal

from groundwiki.core.model.records import Attachment, Link, Page, Resolution
from groundwiki.core.model.scopes import file_owner

PAGE_SUFFIX = ".md"


def normalise(name: str) -> str:
    """A name as Obsidian compares it: case and spacing ignored, Unicode composed (macOS
    writes file names decomposed)."""
    return " ".join(unicodedata.normalize("NFC", name).strip().split()).casefold()


def _strip_page_suffix(name: str) -> str:
    return name[: -len(PAGE_SUFFIX)] if name.casefold().endswith(PAGE_SUFFIX) else name


def _folder(path: str) -> str:
    return posixpath.dirname(path)


def _preferred(paths: list[str], from_path: str | None) -> list[str]:
    """Candidates in the order Obsidian picks them (observed on Obsidian 1.13 through
    `getFirstLinkpathDest`): a note in the linking note's own folder (not an ancestor's), then
    the shortest path, then by path, a stable choice on every machine. The exact path from the
    root, which wins over all of these, is looked up before."""
    if len(paths) < 2:  # nearly every name: nothing to choose
        return list(paths)
    here = _folder(from_path) if from_path is not None else None
    return sorted(paths, key=lambda p: (_folder(p) != here, len(p), p))


class _Names:
    """Files by name and by path, each lower-cased, for one kind of target."""

    def __init__(self) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.by_path: dict[str, str] = {}
        # A name many files share, as ordered from one folder: asked by every link to it.
        self._ordered: dict[tuple[str, str | None], list[str]] = {}

    def add(self, path: str, name: str) -> None:
        self.by_name.setdefault(normalise(name), []).append(path)
        self.by_path.setdefault(normalise(path), path)

    def find(self, target: str, from_path: str | None) -> list[str]:
        """Every file the target fits, preferred first."""
        wanted = normalise(target.lstrip("/"))
        if not wanted:
            return []
        if "/" not in wanted:
            # `[[Note]]` is the root's Note.md when there is one: a path from the root, which
            # Obsidian follows without looking further, so no other Note.md makes it ambiguous.
            exact = self.by_path.get(wanted)
            return [exact] if exact else self._by_name(wanted, from_path)
        if target.startswith(("./", "../")) and from_path is not None:
            joined = posixpath.normpath(posixpath.join(_folder(from_path), target))
            relative = self.by_path.get(normalise(joined))
            return [relative] if relative else []
        exact = self.by_path.get(wanted)
        if exact is not None:
            return [exact]
        # The end of a path: `People/Ann` for `01 - Community/People/Ann`.
        name = wanted.rsplit("/", 1)[1]
        tail = "/" + wanted
        fits = [p for p in self.by_name.get(name, []) if normalise("/" + p).endswith(tail)]
        return _preferred(fits, from_path)

    def _by_name(self, wanted: str, from_path: str | None) -> list[str]:
        paths = self.by_name.get(wanted, [])
        if len(paths) < 2:
            return list(paths)
        here = _folder(from_path) if from_path is not None else None
        ordered = self._ordered.get((wanted, here))
        if ordered is None:
            ordered = self._ordered[(wanted, here)] = _preferred(paths, from_path)
        return list(ordered)


class Resolver:
    """`scoped`: the pages are a scoped wiki's shared ones, so the files under `user/` are kept
    apart (`user_files`) for the users' views."""

    def __init__(
        self,
        pages: Iterable[Page],
        attachments: Iterable[str] = (),
        raw_files: Iterable[str] = (),
        *,
        scoped: bool = False,
    ) -> None:
        self.by_key: dict[str, str] = {}
        self.by_alias: dict[str, str] = {}
        self.by_title: dict[str, str] = {}
        self.by_path: dict[str, str] = {}
        self.routes = _Names()  # pages by file name and by path without `.md`
        self.key_of: dict[str, str] = {}  # page route -> key
        pages = sorted(pages, key=lambda p: p.rel_path)
        # First writer wins on every collision; lint reports the collisions themselves.
        for page in pages:
            self.by_key.setdefault(normalise(page.key), page.key)
            self.by_path.setdefault(page.doc_path, page.key)
            route = _strip_page_suffix(page.doc_path)
            if route not in self.key_of:
                self.key_of[route] = page.key
                self.routes.add(route, posixpath.basename(route))
        for page in pages:
            for alias in page.aliases:
                self.by_alias.setdefault(normalise(alias), page.key)
            self.by_title.setdefault(normalise(page.title), page.key)
        self.files: dict[Literal["docs", "raw"], _Names] = {"docs": _Names(), "raw": _Names()}
        # Each user's own files, by user ID: only that user's view finds them.
        self.user_files: dict[str, _Names] = {}
        for path in attachments:
            owner = file_owner(path) if scoped else None
            if owner is None:
                self.files["docs"].add(path, posixpath.basename(path))
            elif owner:  # "" is a file directly under user/: no one's, so in no view
                self.user_files.setdefault(owner, _Names()).add(path, posixpath.basename(path))
        for path in raw_files:
            self.files["raw"].add(path, posixpath.basename(path))

    def resolve_name(self, name: str, from_doc_path: str | None = None) -> Resolution | None:
        target = _strip_page_suffix(name.strip())
        if not target:
            return None
        found = self._by_route(target, from_doc_path)
        if found is not None:
            return found
        wanted = normalise(target)
        if wanted in self.by_key:
            return Resolution(self.by_key[wanted], "key")
        if wanted in self.by_alias:
            return Resolution(self.by_alias[wanted], "alias")
        if wanted in self.by_title:
            return Resolution(self.by_title[wanted], "title")
        return None

    def _by_route(self, target: str, from_doc_path: str | None) -> Resolution | None:
        """The page a file name or path (without `.md`) names, as Obsidian picks it."""
        routes = self.routes.find(target, from_doc_path)
        if not routes:
            return None
        keys = tuple(self.key_of[route] for route in routes)
        via: Literal["key", "name"] = "key" if normalise(keys[0]) == normalise(target) else "name"
        return Resolution(keys[0], via, keys[1:])

    def resolve(self, link: Link, from_doc_path: str) -> Resolution | None:
        if link.kind == "wikilink" and not link.target and link.anchor:
            own = self.by_path.get(from_doc_path)  # [[#Heading]]: a heading of this page
            return Resolution(own, "key") if own else None
        if link.kind != "link":
            return self.resolve_name(link.target, from_doc_path)
        target = link.target
        if target.startswith("/"):
            path = posixpath.normpath(target.lstrip("/"))
        else:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(from_doc_path), target))
        key = self.by_path.get(path)
        if key:
            return Resolution(key, "path")  # where MkDocs finds it too
        # Obsidian also writes the path from the vault's root or the shortest path that names
        # the note, and reads every Markdown link that way: a file name or path, never an alias
        # or a title, so only the files' names and paths are tried.
        if not target.casefold().endswith(PAGE_SUFFIX):
            return None
        return self._by_route(_strip_page_suffix(target.strip()), from_doc_path)

    def attachment(self, link: Link, from_doc_path: str) -> Attachment | None:
        """The file that is not a page a wikilink or embed names, under the wiki folder first,
        then under raw-sources."""
        if link.kind != "wikilink" or not link.target:
            return None
        for where in ("docs", "raw"):
            found = self.files[where].find(link.target, from_doc_path if where == "docs" else None)
            if found:
                return Attachment(found[0], where)
        return None


class ScopedResolver(Resolver):
    """Links as one user sees them: resolved among the user's own pages and files first, then
    as the shared scope resolves them (`shared`). A shared key the user has a page of leads to
    the user's page in their view: the view's `pages` holds it under that key."""

    def __init__(self, own: Iterable[Page], shared: Resolver, user: str) -> None:
        super().__init__(own)
        self.shared = shared
        self.own_files = shared.user_files.get(user)

    def resolve_name(self, name: str, from_doc_path: str | None = None) -> Resolution | None:
        found = super().resolve_name(name, from_doc_path)
        return found if found is not None else self.shared.resolve_name(name, from_doc_path)

    def resolve(self, link: Link, from_doc_path: str) -> Resolution | None:
        found = super().resolve(link, from_doc_path)
        return found if found is not None else self.shared.resolve(link, from_doc_path)

    def attachment(self, link: Link, from_doc_path: str) -> Attachment | None:
        if self.own_files is not None and link.kind == "wikilink" and link.target:
            found = self.own_files.find(link.target, from_doc_path)
            if found:
                return Attachment(found[0], "docs")
        return self.shared.attachment(link, from_doc_path)
