"""The folder explorer's tree, written once per site to `groundwiki/explorer.json` and read by
the browser (`explorer.js`), so a page carries one script tag, not a navigation of every page.

A folder holds its folders, then its pages; folders sort by name, pages by title, each without
regard to case. A page's `url` is relative to the site root (the layout's, so it follows
`use_directory_urls` and the moved home pages). Only the shared scope's pages are listed, and
of them only those the site publishes: the file is the same for every reader, so a user's own
page never appears in it, whatever the site's `scopes`. Its shape is published as
`schemas/explorer.schema.json`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import GLOBAL
from groundwiki.core.render.artifacts import dumps
from groundwiki.core.render.generated import UNPUBLISHED
from groundwiki.core.wiki.compiled import Wiki

VERSION = 1


def explorer_tree(wiki: Wiki, published: Collection[str] | None = None) -> dict[str, Any]:
    """The shared pages of `wiki` by folder; `published`: the doc paths the site publishes
    (None: every page of the shared view)."""
    shared = wiki if wiki.base is None else wiki.base
    root = _Folder("", "")
    layout = shared.layout
    for page in shared.all_pages:
        if page.scope != GLOBAL or (published is not None and page.doc_path not in published):
            continue
        *folders, _ = page.doc_path.split("/")
        here = root
        for name in folders:
            here = here.child(name)
        here.pages.append({"title": _title(page), "url": layout.url(page.doc_path)})
    return {"version": VERSION, **root.to_json()}


def explorer_json(wiki: Wiki, published: Collection[str] | None = None) -> str:
    """The artifact's text (compact JSON, as the other artifacts)."""
    return dumps(explorer_tree(wiki, published))


class ExplorerText:
    """`explorer_json`, kept across the rebuilds of a server: the last text while the shared
    pages are the same objects (a compile keeps the pages a change did not reach), the layout
    and the published pages the same. At 6,571 pages making it again takes 50 ms."""

    def __init__(self) -> None:
        self._made: tuple[list[Page], object, frozenset[str] | None, str] | None = None

    def text(self, wiki: Wiki, published: Collection[str] | None = None) -> str:
        shared = wiki if wiki.base is None else wiki.base
        pages, layout = shared.all_pages, shared.layout
        shown = frozenset(published) if published is not None else None
        made = self._made
        if (
            made is not None
            and made[1] == layout
            and made[2] == shown
            and len(made[0]) == len(pages)
            and all(a is b for a, b in zip(made[0], pages, strict=True))
        ):
            return made[3]
        text = explorer_json(shared, shown)
        self._made = (list(pages), layout, shown, text)
        return text


def _title(page: Page) -> str:
    # A page the site cannot show is published as a notice titled with its key.
    if any(problem.rule in UNPUBLISHED for problem in page.problems):
        return page.key
    return page.title


class _Folder:
    __slots__ = ("folders", "name", "pages", "path")

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path  # below the site root, without a trailing slash; "" for the root
        self.folders: dict[str, _Folder] = {}
        self.pages: list[dict[str, str]] = []

    def child(self, name: str) -> _Folder:
        found = self.folders.get(name)
        if found is None:
            path = f"{self.path}/{name}" if self.path else name
            found = self.folders[name] = _Folder(name, path)
        return found

    def to_json(self) -> dict[str, Any]:
        """Its folders (each with its name and path) and its pages, sorted."""
        folders = sorted(self.folders.values(), key=lambda f: (f.name.casefold(), f.name))
        pages = sorted(self.pages, key=lambda p: (p["title"].casefold(), p["title"], p["url"]))
        return {
            "folders": [{"name": f.name, "path": f.path, **f.to_json()} for f in folders],
            "pages": pages,
        }
