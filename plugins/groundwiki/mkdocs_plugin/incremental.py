"""Rebuilds under `mkdocs serve --dirty` that write what an edit changed, and nothing else.

MkDocs' dirty build re-renders the pages whose file is newer than their HTML; the plugin's
generated pages it re-renders every time, and a page whose backlinks or link titles changed it
never does. Here each page gets the hash of everything its HTML depends on (the core's
`RenderInputs` for wiki pages, the text for generated ones), and MkDocs is told that a page is
modified exactly when its hash changed since the last build of this server. The navigation of
untouched pages keeps their titles from that build; when the navigation itself changes, every
page is built again. Pages that are gone since the last build have their HTML removed, so the
site equals a clean build of the same files.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Link, Navigation, Section
from mkdocs.structure.pages import Page as MkDocsPage

from groundwiki.core.model.records import Page
from groundwiki.core.render.artifacts import ArtifactTexts
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.render.inputs import RenderInputs
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.mkdocs_plugin.compiled_site import CompiledSite
from groundwiki.mkdocs_plugin.navigation import title_lines


def exact_dirty_builds() -> None:
    """MkDocs warns that a dirty build leaves navigation and links inaccurate; with the plugin
    choosing the pages to build, it does not (and under --strict the warning alone would fail
    every build)."""
    logging.getLogger("mkdocs.commands.build").addFilter(_without_dirty_warning)


def _without_dirty_warning(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("A 'dirty' build is being performed")


def text_hash(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass
class Incremental:
    """What the last build of this server wrote, and what it was made from."""

    active: bool = False  # a dirty build with a previous build to compare with
    inputs: dict[str, str] = field(default_factory=dict)  # src_uri -> hash, last build
    titles: dict[str, str | None] = field(default_factory=dict)  # src_uri -> title, last build
    # The files the last build left in site_dir, each with what it is (page, redirect, ...).
    outputs: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # redirect or artifact -> text hash
    sources: dict[str, str] = field(default_factory=dict)  # raw-source page -> hash
    navigation: str | None = None
    navigation_changed: bool = False
    settings: str | None = None
    finished: bool = False  # the last build got to its end (else its inputs were never built)
    changed: set[str] = field(default_factory=set)  # this build's pages to render
    # src_uri -> what the page's title in the navigation is made from, this build
    nav_titles: dict[str, str] = field(default_factory=dict)
    # The graph's and the knowledge index's items as JSON, kept across the server's builds.
    artifacts: ArtifactTexts = field(default_factory=ArtifactTexts)

    def begin(self, dirty: bool, settings: str) -> None:
        """A new build; `settings` is the hash of what every page depends on (the config)."""
        if not dirty or settings != self.settings:
            self.inputs, self.titles, self.outputs, self.written = {}, {}, {}, {}
            self.sources, self.navigation = {}, None
        self.settings = settings
        self.active = dirty and bool(self.inputs) and self.finished
        self.finished = False
        self.changed = set()
        self.navigation_changed = False

    def choose(
        self, files: Files, inputs: Mapping[str, str], nav_titles: Mapping[str, str]
    ) -> None:
        """Mark each page of `files` modified when its inputs changed or its HTML is missing;
        pages without inputs (not the wiki's) keep MkDocs' own judgement. `nav_titles`: what
        each page's title in the navigation is made from (`page_inputs`)."""
        self.nav_titles = dict(nav_titles)
        for file in files.documentation_pages():
            found = inputs.get(file.src_uri)
            if found is None:
                continue
            changed = (
                not self.active
                or self.inputs.get(file.src_uri) != found
                or not os.path.isfile(file.abs_dest_path)
            )
            if changed:
                self.changed.add(file.src_uri)
            _set_modified(file, changed)
        self.inputs = dict(inputs)

    def check_navigation(self, nav: Navigation, files: Files) -> None:
        """A navigation that lists other pages or titles than the last one is in every page:
        then every page is built. Otherwise the pages not built keep their last titles."""
        shape = text_hash(*_navigation_lines(nav.items, self.nav_titles))
        if self.active and shape != self.navigation:
            self.navigation_changed = True
            for file in files.documentation_pages():
                _set_modified(file, True)
                self.changed.add(file.src_uri)
        self.navigation = shape
        for page in nav.pages:
            if page.file.src_uri not in self.changed and page.title is None:
                title = self.titles.get(page.file.src_uri)
                if title is not None:
                    page.title = title

    def pick(self, inputs: Mapping[str, str], dests: Mapping[str, str]) -> list[str]:
        """The raw-source pages to build: those whose inputs changed, or all of them when the
        navigation (in every page) did."""
        picked = [
            doc
            for doc, found in inputs.items()
            if not self.active
            or self.navigation_changed
            or self.sources.get(doc) != found
            or not os.path.isfile(dests[doc])
        ]
        self.sources = dict(inputs)
        return picked

    def remember(self, files: Files, outputs: Mapping[str, str]) -> None:
        for file in files.documentation_pages():
            page = file.page
            if isinstance(page, MkDocsPage) and (file.src_uri in self.changed or not self.active):
                self.titles[file.src_uri] = page.title
        self.outputs = dict(outputs)
        self.finished = True

    def remove_stale(self, expected: Mapping[str, str], site_dir: str) -> list[str]:
        """Delete what the last build wrote and this one will not write as the same kind of
        file (a page that became a redirect goes too); returns what was removed."""
        if not self.active:
            return []
        removed: list[str] = []
        stale = [path for path, kind in self.outputs.items() if expected.get(path) != kind]
        for path in sorted(stale):
            try:
                os.remove(path)
            except OSError:
                continue
            removed.append(path)
            self.written.pop(path, None)
            _remove_empty_parents(Path(path).parent, Path(site_dir))
        return removed

    def needs_write(self, path: str, text: str) -> bool:
        """Whether a redirect or artifact must be written: not when this server wrote the same
        text there last time and the file is still there."""
        digest = text_hash(text)
        if self.active and self.written.get(path) == digest and os.path.isfile(path):
            return False
        self.written[path] = digest
        return True


def page_inputs(
    files: Files,
    site: CompiledSite,
    generated: Mapping[str, Rendered],
    unpublished: set[str],
    home_links: Mapping[str, str],
    inputs_of: Callable[[Wiki, Page], RenderInputs],
) -> tuple[dict[str, str], dict[str, str]]:
    """What each page's HTML is made from, and what its title in the navigation is made from,
    by src_uri: a generated page's text and slots, a notice's text, another file's path and
    time, a wiki page's render inputs (`inputs_of` the view it is rendered in) and the links a
    home page ends with."""
    inputs: dict[str, str] = {}
    titles: dict[str, str] = {}
    for file in files.documentation_pages():
        src_uri = file.src_uri
        ours = site.pages_by_doc.get(src_uri)
        if src_uri in generated:
            page = generated[src_uri]
            inputs[src_uri] = text_hash(
                page.markdown,
                repr(sorted(page.slots.items())),
                repr(sorted(page.late_slots.items())),
            )
            titles[src_uri] = text_hash(*title_lines(page.markdown))
        elif src_uri in unpublished or ours is None:
            content = file.content_string if src_uri in unpublished else ""
            inputs[src_uri] = text_hash(
                "notice" if ours else "other", content, str(file.abs_src_path)
            )
            if ours is None and file.abs_src_path:
                inputs[src_uri] += str(os.stat(file.abs_src_path).st_mtime_ns)
            titles[src_uri] = inputs[src_uri]
        else:
            home = home_links.get(src_uri, "")
            view = inputs_of(site.view_of(ours), ours)
            inputs[src_uri] = view.of(ours, site.backlinks_of(ours), home)
            titles[src_uri] = text_hash(ours.title)
    return inputs, titles


def _set_modified(file: File, changed: bool) -> None:
    # MkDocs asks each File; an instance attribute answers for this build only (the Files are
    # made again for the next one).
    file.is_modified = (lambda: True) if changed else (lambda: False)  # type: ignore[method-assign]


def _navigation_lines(items: Iterable[object], inputs: Mapping[str, str]) -> Iterable[str]:
    for item in items:
        if isinstance(item, Section):
            yield f"section {item.title}"
            yield from _navigation_lines(item.children, inputs)
            yield "end"
        elif isinstance(item, Link):
            yield f"link {item.title} {item.url}"
        elif isinstance(item, MkDocsPage):
            # A title from the nav is fixed; otherwise it comes from the page's own text.
            title = item.title if item.title is not None else inputs.get(item.file.src_uri, "")
            yield f"page {item.file.src_uri} {title}"


def _remove_empty_parents(folder: Path, site: Path) -> None:
    while folder != site and site in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
