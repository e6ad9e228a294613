"""MkDocs' page objects for the pages a dirty rebuild does not build, copied from the last
build's instead of made anew.

MkDocs makes a `Page` for each of the 10,000 page files in every build, and each one joins URLs
and reads the build date: about 0.8 s of every rebuild under `mkdocs serve`, though a dirty
rebuild renders a handful of them. A page MkDocs neither reads nor renders (incremental.py marks
it unmodified) is, when MkDocs' navigation is made, the object `Page(None, file, config)` made:
its state then depends on the file's URL, the config (the same while mkdocs.yml is) and the
date. That state is kept, and the next build gives the same file a copy of it before MkDocs
would make one. Pages the navigation lists are linked to their neighbours: MkDocs makes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mkdocs.structure.files import File
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import get_build_date


class PageObjects:
    def __init__(self) -> None:
        self.made_with: tuple[str, str] | None = None  # settings and build date of `pristine`
        # src_uri -> the page's URL and its Page's state, as MkDocs made it
        self.pristine: dict[str, tuple[str, dict[str, Any]]] = {}
        self.given: set[str] = set()  # src_uris given a copy this build

    def give(self, docs: Iterable[File], changed: set[str], settings: str) -> None:
        """Before MkDocs makes the navigation: each page file not in `changed` (the pages to
        build) gets a copy of the page MkDocs made for it last time, if nothing it is made from
        changed; `settings`: the hash of the config."""
        made_with = (settings, get_build_date())
        if made_with != self.made_with:
            self.pristine, self.made_with = {}, made_with
        self.given = set()
        for file in docs:
            src_uri = file.src_uri
            kept = self.pristine.get(src_uri)
            if kept is None or src_uri in changed or file.page is not None or kept[0] != file.url:
                continue
            page = Page.__new__(Page)
            page.__dict__.update(kept[1])
            page.file = file
            file.page = page
            self.given.add(src_uri)

    def keep(self, docs: Iterable[File], nav: Navigation) -> None:
        """When MkDocs has made the navigation (before any page is read): the state of each
        page it made anew outside the navigation."""
        listed = {id(page) for page in nav.pages}
        for file in docs:
            page = file.page
            if (
                file.src_uri in self.given
                or type(page) is not Page
                or id(page) in listed
                or page.markdown is not None
            ):
                continue
            state = dict(page.__dict__)
            del state["file"]
            self.pristine[file.src_uri] = (file.url, state)
