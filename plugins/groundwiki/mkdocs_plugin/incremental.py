"""Rebuilds under `mkdocs serve --dirty` that write what an edit changed, and nothing else.

MkDocs' dirty build re-renders the pages whose file is newer than their HTML; the plugin's
generated pages it re-renders every time, and a page whose backlinks or link titles changed it
never does. Here each page gets the hash of everything its HTML depends on (the core's
`RenderInputs` for wiki pages, the text for generated ones), and MkDocs is told that a page is
modified exactly when its hash changed since the last build of this server. The navigation of
untouched pages keeps their titles from that build; when the navigation itself changes, every
page is built again. Pages that are gone since the last build have their HTML removed, so the
site equals a clean build of the same files.

mkdocs-material's search index is written by difference too (`KeptSearchJson`). Under a dirty
server the search plugin keeps its entries across rebuilds (the entries of the
pages built again replace theirs) and then dumps all of them as one JSON text: about 0.5 s of
every rebuild at 10,000 pages, for an index of which a few entries changed. The plugin never
changes an entry once made, and makes new ones for a page built again, so each entry's JSON is
kept with the entry and the index is those texts joined: the same text `json.dumps` gives. The
plugin's module is handed an object answering for `json`, which does this for the index and
passes every other call to `json`.

MkDocs' `sitemap.xml` is kept the same way (`KeptSitemap`): its template lists each page's
URL and update date, 0.2 s of rendering at 10,000 pages for the text of the last build while
no page came, went or got another URL or date. Only MkDocs' own template is kept, whose
whole input that is; a theme's or a user's may read anything.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mkdocs
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Link, Navigation, Section
from mkdocs.structure.pages import Page as MkDocsPage

from groundwiki.core.render.artifacts import ArtifactTexts


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
    written: dict[str, str] = field(default_factory=dict)  # redirect or artifact -> its text
    sources: dict[str, str] = field(default_factory=dict)  # raw-source page -> hash
    navigation: str | None = None
    navigation_changed: bool = False
    # Every page is built again though the last build's are kept: what every page loads changed
    # (the diagram or math loaders, when the first page with a diagram or formula came or went).
    everything: bool = False
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
        self.everything = False

    def choose(
        self, docs: Iterable[File], inputs: Mapping[str, str], nav_titles: Mapping[str, str]
    ) -> None:
        """Mark each page of `docs` modified when its inputs changed; pages without inputs
        (not the wiki's) keep MkDocs' own judgement. `nav_titles`: what each page's title in
        the navigation is made from (page_inputs.py). The last build finished (`active`), so
        each page it had inputs for has its HTML: not checked on disk, 10,000 stats."""
        self.nav_titles = dict(nav_titles)
        for file in docs:
            found = inputs.get(file.src_uri)
            if found is None:
                continue
            changed = not self.active or self.everything or self.inputs.get(file.src_uri) != found
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
            or self.everything
            or self.sources.get(doc) != found
            or not os.path.isfile(dests[doc])
        ]
        self.sources = dict(inputs)
        return picked

    def remember(self, files: Files, outputs: Mapping[str, str]) -> None:
        # The titles of the pages built: all of them, or (a dirty rebuild) the changed ones.
        built = (
            files.documentation_pages()
            if not self.active
            else [f for src in self.changed if (f := files.get_file_from_path(src)) is not None]
        )
        for file in built:
            if isinstance(file.page, MkDocsPage):
                self.titles[file.src_uri] = file.page.title
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
        # The text itself is kept, not its hash: an artifact an edit did not reach is the same
        # text object (ArtifactTexts), compared at once; hashing it read tens of megabytes.
        before = self.written.get(path)
        if self.active and before is not None and before == text and os.path.isfile(path):
            return False
        self.written[path] = text
        return True


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


# What the search plugin dumps its index with (material/plugins/search/plugin.py).
_INDEX_OPTIONS = {"separators": (",", ":"), "default": str}
_PLUGIN_MODULE = "material.plugins.search.plugin"


class KeptSearchJson:
    def __init__(self) -> None:
        # id of an entry -> the entry (held, so the id stays its own) and its JSON text
        self.texts: dict[int, tuple[object, str]] = {}

    def dumps(self, obj: Any, **options: Any) -> str:
        docs = obj.get("docs") if isinstance(obj, dict) else None
        if (
            options != _INDEX_OPTIONS
            or not isinstance(docs, list)
            or list(obj) != ["config", "docs"]
        ):
            return json.dumps(obj, **options)
        texts: dict[int, tuple[object, str]] = {}
        parts: list[str] = []
        for entry in docs:
            kept = self.texts.get(id(entry))
            if kept is None or kept[0] is not entry:
                kept = (entry, json.dumps(entry, **options))
            texts[id(entry)] = kept
            parts.append(kept[1])
        self.texts = texts  # the entries of this index only: the others are gone for good
        config = json.dumps(obj["config"], **options)
        return f'{{"config":{config},"docs":[{",".join(parts)}]}}'

    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)


def keep_search_json() -> KeptSearchJson | None:
    """Give mkdocs-material's search plugin, when it is installed, a kept JSON writer; returns
    it, or None when there is no such plugin module or it no longer dumps with `json`."""
    try:
        module = importlib.import_module(_PLUGIN_MODULE)
    except ImportError:
        return None
    current = getattr(module, "json", None)
    if isinstance(current, KeptSearchJson):
        return current
    if current is not json:
        return None
    kept = KeptSearchJson()
    module.json = kept  # type: ignore[attr-defined]
    return kept


SITEMAP = "sitemap.xml"
# MkDocs' own sitemap template, which reads the pages' URLs and dates and nothing else.
_MKDOCS_SITEMAP = os.path.join(os.path.dirname(mkdocs.__file__), "templates", SITEMAP)


class KeptSitemap:
    def __init__(self) -> None:
        self.made_from: tuple[object, ...] | None = None  # what `text` was rendered from
        self.text = ""
        self.reused = False  # the last build took `text` (for tests and timings)

    def template(self, template: Any) -> Any:
        """What MkDocs renders the sitemap with: MkDocs' template, answering with the last
        text when made from the same pages; any other template as it is."""
        self.reused = False
        filename = getattr(template, "filename", None)
        if not filename or os.path.normpath(filename) != os.path.normpath(_MKDOCS_SITEMAP):
            return template
        return _KeptRender(template, self)


class _KeptRender:
    def __init__(self, template: Any, kept: KeptSitemap) -> None:
        self.template, self.kept = template, kept

    def render(self, context: Mapping[str, Any]) -> str:
        pages = context.get("pages")
        made_from = None if pages is None else tuple(_sitemap_entries(pages))
        kept = self.kept
        kept.reused = made_from is not None and made_from == kept.made_from
        if kept.reused:
            return kept.text
        text: str = self.template.render(context)
        kept.made_from, kept.text = made_from, text
        return text


def _sitemap_entries(pages: Iterable[Any]) -> Iterable[object]:
    """What the sitemap template reads of each page file: the whole of it."""
    for file in pages:
        page = getattr(file, "page", None)
        if page is None:
            yield None
        else:
            yield (page.is_link, page.canonical_url, page.abs_url, page.update_date)
