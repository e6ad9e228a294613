"""MkDocs' file list made the site's: the files the site must not publish left out (pages of no
one's, other users' pages on a shared site, pages it cannot show, symlinks out of the wiki), and
the pages and assets groundwiki adds (the lint report, graph, A–Z index and tags pages; its
stylesheet and scripts).

Under `mkdocs serve --dirty` MkDocs' list itself is kept across rebuilds while the file events
say no file came or went (`FileListing`). Every build MkDocs walks docs_dir and makes a `File`
for each of its files, then lists the theme's folders (mkdocs-material's hold thousands of icons) and makes one for each static file:
about 0.7 s of a rebuild at 10,000 pages, for the same list as last time. When the server's file
events named every change since the last build (`ChangeLog`), and each named path in docs_dir is
a file that was listed and still is one, or was not listed and still is not there, the list is
the last build's: each `File` is made again from the state MkDocs gave it right after listing
it, before any plugin changed it. Otherwise (a file or folder came or went, a symlink, a change
to a theme folder, another mkdocs.yml, events unknown) MkDocs lists the files itself.

MkDocs offers no event before its listing, so under `serve --dirty` the listing function its
build calls is this module's, which asks MkDocs' own whenever the kept list does not apply.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import mkdocs.commands.build as mkdocs_build
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

from groundwiki.core.config.site_options import GRAPH_NODES, PAGE_BYTES
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.files.file_cache import utf8_name
from groundwiki.core.lint import LintReport
from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import USER_DIR
from groundwiki.core.model.site_paths import (
    ASSETS_DIR,
    GRAPH_PAGE,
    INDEX_PAGE,
    LINT_PAGE,
    TAGS_PAGE,
)
from groundwiki.core.read.symlinks import outside_files
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.render.generated import (
    Listings,
    graph_page,
    lint_pages,
    unpublished_notice,
)
from groundwiki.core.render.needs import MATH, MERMAID
from groundwiki.core.render.templates import Templates
from groundwiki.core.wiki.compiled import Wiki

log = logging.getLogger("mkdocs.plugins.groundwiki")
ASSETS = Path(__file__).parent / "assets"
CSS = f"{ASSETS_DIR}/groundwiki.css"
SCRIPTS = (f"{ASSETS_DIR}/vendor/force-graph.min.js", f"{ASSETS_DIR}/groundwiki.js")
EXPLORER_CSS = f"{ASSETS_DIR}/explorer.css"
EXPLORER_JS = f"{ASSETS_DIR}/explorer.js"
# Diagrams and math from the site's own files (assets/vendor/README.md), when pages use them:
# each loader fetches its library on a page that shows a diagram or a formula.
MERMAID_JS = f"{ASSETS_DIR}/mermaid.js"
MATH_JS = f"{ASSETS_DIR}/math.js"
MERMAID_FILES = f"{ASSETS_DIR}/vendor/mermaid."
KATEX_FILES = f"{ASSETS_DIR}/vendor/katex/"
ARITHMATEX = "pymdownx.arithmatex"
# The generated overview pages may be navigated to; raw-source pages are reached through
# citations, never listed, and so are the parts of a split overview page (linked from it).
NAVIGABLE = frozenset({INDEX_PAGE, TAGS_PAGE, GRAPH_PAGE, LINT_PAGE})


def use_assets(config: MkDocsConfig, graph: bool) -> None:
    """The stylesheet in every page, and the graph's scripts when the site shows graphs."""
    config.extra_css.append(CSS)
    if graph:
        for script in SCRIPTS:
            config.extra_javascript.append(script)


def use_explorer(config: MkDocsConfig, compact: bool) -> None:
    """The folder explorer in every page when the navigation is compact (a full navigation is
    a folder tree already): a stylesheet and a script, which fetch the tree once
    (`groundwiki/explorer.json`); the page itself carries nothing of it."""
    if not compact:
        return
    if EXPLORER_CSS not in config.extra_css:
        config.extra_css.append(EXPLORER_CSS)
    if all(str(script) != EXPLORER_JS for script in config.extra_javascript):
        config.extra_javascript.append(EXPLORER_JS)


def use_rendering(config: MkDocsConfig, needs: Collection[str]) -> None:
    """The loaders of mermaid and KaTeX in every page, each when some page needs it
    (`core.render.needs`) and the site loads no copy of its own.

    mkdocs-material draws `<pre class="mermaid">` with the global `mermaid` when a script defined
    it before the page was shown, and fetches it from unpkg.com otherwise: `mermaid.js`, loaded
    after material's script, is that global, and loads the vendored library on a page with a
    diagram. Math is `pymdownx.arithmatex` in generic mode (added unless the site configures
    it), which marks `$...$` and `$$...$$`; `math.js` typesets them with the vendored KaTeX."""
    scripts = [str(script).lower() for script in config.extra_javascript]
    if MERMAID in needs and not any("mermaid" in script for script in scripts):
        config.extra_javascript.append(MERMAID_JS)
    if MATH not in needs or any("katex" in s or "mathjax" in s or s == MATH_JS for s in scripts):
        return
    extensions = config.markdown_extensions
    if ARITHMATEX not in extensions:
        extensions.append(ARITHMATEX)
        config.mdx_configs[ARITHMATEX] = {"generic": True}
    elif not (config.mdx_configs.get(ARITHMATEX) or {}).get("generic"):
        return  # the site's own math: MathJax's script tags, which KaTeX does not read
    config.extra_javascript.append(MATH_JS)


def leave_out(
    files: Files,
    wiki: Wiki,
    pages_by_doc: dict[str, Page],
    scopes: str,
    core: Config,
    listing: FileListing | None = None,
) -> set[str]:
    """Remove what the site must not publish; returns the src_uris of the pages shown as a
    notice instead of their text. `listing`: the server's kept file list, whose last full
    check of the files spares checking again those no event named."""
    # Pages of no one's, directly under user/, and notes their writers keep unpublished.
    refused = {*wiki.refused, *wiki.unpublished}
    for file in [f for f in files if f.src_uri in refused]:
        files.remove(file)
    if wiki.scoped and scopes == "global":
        for file in [f for f in files if f.src_uri.startswith(USER_DIR + "/")]:
            files.remove(file)  # users' own pages and files stay theirs
    return _keep_out(files, pages_by_doc, core, listing or FileListing())


def _keep_out(
    files: Files, pages_by_doc: dict[str, Page], core: Config, listing: FileListing
) -> set[str]:
    """MkDocs publishes every file under docs_dir, symlinks followed: a page the site cannot
    show gets a notice as its text (MkDocs never reads the file), and any other file that
    leads out of the folder or to nothing is left out.

    Checking every file costs a stat each (0.3 s at 10,000 pages). When the list of files is
    the last build's (`FileListing.reused`), a file the last full check found to be a plain
    file in a folder reached without a symlink is one still, unless an event named it. Every
    other file is checked again: a symlink, a file in a symlinked folder (a link's target may
    change or go, unseen by the events), and a file not checked then (a notice, left out)."""
    unpublished: set[str] = set()
    check = listing.check if listing.reused else None
    if check is None:
        unnamed = {f.src_uri for f in files if not utf8_name(f.src_uri)}
    else:
        unnamed = check.unnamed
    for src_uri in unnamed:
        # MkDocs lists the folder itself; the core already left the file out and said so.
        if (file := files.src_uris.get(src_uri)) is not None:
            files.remove(file)
    docs = core.docs_dir  # resolved; MkDocs keeps the path it was given
    ours_dirs = {d for d in {f.src_dir for f in files} if d and os.path.realpath(d) == str(docs)}
    on_disk = [f for f in files if f.abs_src_path and f.src_dir in ours_dirs]
    for file in on_disk:
        ours = pages_by_doc.get(file.src_uri)
        notice = unpublished_notice(ours) if ours is not None else None
        if notice is not None:
            file.content_string = notice
            unpublished.add(file.src_uri)
    checked = [f for f in on_disk if f.src_uri not in unpublished]
    if check is not None:
        cleared, changed = check.cleared, listing.changed
        checked = [f for f in checked if f.src_uri not in cleared or f.src_uri in changed]
    paths = [path for f in checked if (path := f.abs_src_path) is not None]
    gone = outside_files(paths, docs) | {p for p in paths if not os.path.exists(p)}
    if check is None:
        listing.check = _FullCheck(unnamed, _cleared(checked, gone, docs))
    for file in on_disk:
        if file.abs_src_path in gone:
            where = core.rel(docs / file.src_uri)
            log.warning(
                f"groundwiki: {where} leads outside the wiki folder through a symlink, "
                "or to nothing; it is left out of the site (copy the file into the wiki "
                "folder instead of linking to it)"
            )
            files.remove(file)
    return unpublished


class _FullCheck:
    """What the last check of every file found, for the checks of the builds that keep its
    list of files (`_keep_out`)."""

    def __init__(self, unnamed: set[str], cleared: frozenset[str]) -> None:
        self.unnamed = unnamed  # src_uris that are no UTF-8 text
        self.cleared = cleared  # src_uris not to check again until an event names them


def _cleared(checked: list[File], gone: set[str], docs: Path) -> frozenset[str]:
    """The files checked and kept that lead nowhere but to themselves: no symlink, in a
    folder reached without one."""
    straight: dict[tuple[str, str], bool] = {}  # (src_dir, folder) -> reached without a link
    found: set[str] = set()
    for file in checked:
        path, src_dir = file.abs_src_path, file.src_dir
        if path is None or src_dir is None or path in gone:
            continue
        folder = os.path.dirname(path)
        plain = straight.get((src_dir, folder))
        if plain is None:
            lexical = os.path.normpath(os.path.join(docs, os.path.relpath(folder, src_dir)))
            plain = straight[(src_dir, folder)] = os.path.realpath(folder) == lexical
        if plain and not os.path.islink(path):
            found.add(file.src_uri)
    return frozenset(found)


def generated_pages(
    wiki: Wiki,
    report: LintReport,
    templates: Templates,
    graph: bool,
    listings: Listings,
    derived_summaries: bool = False,
    page_bytes: int = PAGE_BYTES,
    graph_nodes: int = GRAPH_NODES,
) -> dict[str, Rendered]:
    """The pages groundwiki adds, by src_uri: the lint report (what the site may show of it),
    the graph when the site shows graphs, the A–Z index and the tags page (`listings` keeps
    them across the rebuilds of a server; `derived_summaries`: they list derived summaries).
    An overview page heavier than `page_bytes` comes with its parts (generated.py);
    `graph_nodes`: the most-linked nodes the graph draws at first.

    Under `mkdocs serve --dirty` every page here is made again each build (the A–Z and tags
    pages only when a page's listing facts changed, `Listings`), and MkDocs writes again those
    whose text changed (page_inputs.py hashes each): a lint report cut into parts rewrites the
    parts whose findings changed and its summary, not the others."""
    layout = wiki.layout
    report_pages = lint_pages(wiki, report, layout, templates, page_bytes)
    pages = {doc: Rendered(text, {}) for doc, text in report_pages.items()}
    if graph:
        pages[GRAPH_PAGE] = Rendered(graph_page(layout, templates, graph_nodes), {})
    pages.update(listings.of(wiki, layout, templates, derived_summaries, page_bytes))
    return pages


def add_generated(files: Files, config: MkDocsConfig, generated: dict[str, Rendered]) -> None:
    """The generated pages' files (`generated_pages`); a file of the same name in docs_dir
    wins."""
    for src_uri, page in generated.items():
        if files.get_file_from_path(src_uri) is not None:
            log.warning(f"groundwiki: {src_uri} exists in docs_dir; not generating it")
            continue
        inclusion = InclusionLevel.UNDEFINED if src_uri in NAVIGABLE else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, src_uri, content=page.markdown, inclusion=inclusion))


def add_asset_files(files: Files, config: MkDocsConfig) -> None:
    """groundwiki's stylesheets and scripts, the vendored libraries and their licences; mermaid's
    (3.5 MB) and KaTeX's files only when the pages load them (`use_rendering`)."""
    scripts = {str(script) for script in config.extra_javascript}
    for asset in sorted(ASSETS.rglob("*")):
        if not asset.is_file() or asset.suffix not in {".js", ".css", ".txt", ".woff2"}:
            continue
        dest = f"{ASSETS_DIR}/{asset.relative_to(ASSETS).as_posix()}"
        if dest.startswith(MERMAID_FILES) or dest == MERMAID_JS:
            if MERMAID_JS not in scripts:
                continue
        elif (dest.startswith(KATEX_FILES) or dest == MATH_JS) and MATH_JS not in scripts:
            continue
        files.append(File.generated(config, dest, abs_src_path=str(asset)))


State = dict[str, Any]
Lister = Callable[[MkDocsConfig], Files]

# The file list of the server running in this process (a process serves one site).
_serving: FileListing | None = None


class KeptFiles(Files):
    """MkDocs' `Files`, whose theme files come from the kept list when the docs' list did.

    MkDocs and the plugins ask a build's files for its documentation pages about ten times,
    and each answer asked every one of the 10,000 files what it is (0.06 s): here the page
    files are kept until a file is added or removed, and only their inclusion, which plugins
    change in place, is asked again, once per inclusion level."""

    def __init__(self, files: Iterable[File], listing: FileListing) -> None:
        super().__init__(files)
        self._listing = listing
        # the page files, and the mapping and size of the list they were found in
        self._pages: tuple[list[File], object, int] | None = None

    def add_files_from_theme(self, env: Any, config: MkDocsConfig) -> None:
        self._listing.add_theme_files(self, env, config)

    def append(self, file: File) -> None:
        self._pages = None
        super().append(file)

    def remove(self, file: File) -> None:
        self._pages = None
        super().remove(file)

    def documentation_pages(
        self, *, inclusion: Callable[[InclusionLevel], bool] = InclusionLevel.is_included
    ) -> Sequence[File]:
        kept, uris = self._pages, self._src_uris
        if kept is None or kept[1] is not uris or kept[2] != len(uris):
            # Files._files's setter replaces the mapping: then it is another list.
            kept = self._pages = ([f for f in self if f.is_documentation_page()], uris, len(uris))
        verdicts: dict[InclusionLevel, bool] = {}
        found: list[File] = []
        for file in kept[0]:
            level = file.inclusion
            verdict = verdicts.get(level)
            if verdict is None:
                verdict = verdicts[level] = bool(inclusion(level))
            if verdict:
                found.append(file)
        return found


class FileListing:
    def __init__(self) -> None:
        self.docs: list[State] | None = None  # each docs_dir File's state, as listed
        self.theme: list[State] | None = None  # each theme File's state, as added
        self.made_with: tuple[object, ...] | None = None  # what `docs` and `theme` depend on
        self.listed: set[str] = set()  # the src_uris of `docs`
        self.folders: set[str] = set()  # every folder holding one of them, as a src_uri
        self.now: tuple[object, ...] | None = None  # what this build's list depends on
        self.reuse = False  # this build takes the kept list
        self.reused = False  # the last build took the kept list (for tests and timings)
        self.changed: frozenset[str] = frozenset()  # what the events named in docs_dir, as src_uris
        self.check: _FullCheck | None = None  # the last full check of the files (_keep_out)

    def install(self) -> None:
        """From now on MkDocs' builds in this process list their files through this object."""
        global _serving
        _serving = self
        if not getattr(mkdocs_build.get_files, "_groundwiki", False):
            mkdocs_build.get_files = _listed_files(mkdocs_build.get_files)  # type: ignore[assignment]

    def plan(self, config: MkDocsConfig, settings: str, changed: Collection[Path] | None) -> None:
        """Before MkDocs lists the files of this build: whether the last list still holds.
        `settings`: the hash of mkdocs.yml; `changed`: what the file events named since the
        last build, None when they cannot tell."""
        theme_dirs = tuple(str(d) for d in config.theme.dirs)
        self.now = (settings, config.docs_dir, config.site_dir, config.use_directory_urls)
        self.now += theme_dirs
        self.reuse = (
            changed is not None
            and self.docs is not None
            and self.theme is not None
            and self.now == self.made_with
            and all(self._same_listing(str(path), config.docs_dir, theme_dirs) for path in changed)
        )
        docs_dir = config.docs_dir
        self.changed = frozenset(
            Path(os.path.relpath(path, docs_dir)).as_posix()
            for path in changed or ()
            if _inside(str(path), docs_dir)
        )

    def _same_listing(self, path: str, docs_dir: str, theme_dirs: tuple[str, ...]) -> bool:
        """Whether a change at `path` leaves the list of files as it was."""
        for folder in theme_dirs:  # watched with --watch-theme: a theme file may have come
            if _inside(path, folder):
                return False
        if not _inside(path, docs_dir):
            return True  # raw sources, the lock, mkdocs.yml (its text is in `settings`)
        src_uri = Path(os.path.relpath(path, docs_dir)).as_posix()
        if src_uri == "." or os.path.islink(path):
            return False
        if src_uri in self.listed:
            return os.path.isfile(path)  # edited, or replaced by a file of the same name
        # Neither a listed file nor a folder of them: a file that came and went (an editor's
        # swap file, a file renamed over a page) leaves the list alone.
        return src_uri not in self.folders and not os.path.lexists(path)

    def files(self, config: MkDocsConfig, mkdocs_lists: Lister) -> Files:
        """This build's files: the kept list made again, or MkDocs' own list, kept."""
        # Once: another build in this process (no server's) must not take it.
        reuse, self.reuse = self.reuse, False
        if reuse and self.docs is not None:
            self.reused = True
            return KeptFiles([_made(state) for state in self.docs], self)
        self.reused = False
        self.check = None  # the next check of the files looks at every one
        found = list(mkdocs_lists(config))
        self.docs = [dict(file.__dict__) for file in found]
        self.listed = {file.src_uri for file in found}
        self.folders = {folder for uri in self.listed for folder in _folders(uri)}
        self.theme = None
        self.made_with = self.now
        return KeptFiles(found, self)

    def add_theme_files(self, files: Files, env: Any, config: MkDocsConfig) -> None:
        if self.reused and self.theme is not None:
            for state in self.theme:
                if files.get_file_from_path(state["src_uri"]) is None:
                    files.append(_made(state))
            return
        before = set(files.src_uris)
        Files.add_files_from_theme(files, env, config)
        self.theme = [dict(f.__dict__) for f in files if f.src_uri not in before]


def _listed_files(mkdocs_lists: Lister) -> Lister:
    def get_files(config: MkDocsConfig) -> Files:
        if _serving is None:
            return mkdocs_lists(config)
        return _serving.files(config, mkdocs_lists)

    get_files._groundwiki = True  # type: ignore[attr-defined]
    return get_files


def _made(state: State) -> File:
    file = File.__new__(File)
    file.__dict__.update(state)
    return file


def _inside(path: str, folder: str) -> bool:
    folder = folder.rstrip(os.sep)
    return path == folder or path.startswith(folder + os.sep)


def _folders(src_uri: str) -> Iterable[str]:
    parts = src_uri.split("/")[:-1]
    for end in range(1, len(parts) + 1):
        yield "/".join(parts[:end])
