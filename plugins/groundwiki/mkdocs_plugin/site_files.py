"""MkDocs' file list made the site's: the files the site must not publish left out (pages of no
one's, other users' pages on a shared site, pages it cannot show, symlinks out of the wiki), and
the pages and assets groundwiki adds (the lint report, graph, A–Z index and tags pages; its
stylesheet and scripts)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

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
    lint_page,
    unpublished_notice,
)
from groundwiki.core.render.templates import Templates
from groundwiki.core.wiki.compiled import Wiki

log = logging.getLogger("mkdocs.plugins.groundwiki")
ASSETS = Path(__file__).parent / "assets"
CSS = f"{ASSETS_DIR}/groundwiki.css"
SCRIPTS = (f"{ASSETS_DIR}/vendor/force-graph.min.js", f"{ASSETS_DIR}/groundwiki.js")
# The generated overview pages may be navigated to; raw-source pages are reached through
# citations, never listed.
NAVIGABLE = frozenset({INDEX_PAGE, TAGS_PAGE, GRAPH_PAGE, LINT_PAGE})


def use_assets(config: MkDocsConfig, graph: bool) -> None:
    """The stylesheet in every page, and the graph's scripts when the site shows graphs."""
    config.extra_css.append(CSS)
    if graph:
        for script in SCRIPTS:
            config.extra_javascript.append(script)


def leave_out(
    files: Files, wiki: Wiki, pages_by_doc: dict[str, Page], scopes: str, core: Config
) -> set[str]:
    """Remove what the site must not publish; returns the src_uris of the pages shown as a
    notice instead of their text."""
    refused = set(wiki.refused)  # pages of no one's, directly under user/
    for file in [f for f in files if f.src_uri in refused]:
        files.remove(file)
    if wiki.scoped and scopes == "global":
        for file in [f for f in files if f.src_uri.startswith(USER_DIR + "/")]:
            files.remove(file)  # users' own pages and files stay theirs
    return _keep_out(files, pages_by_doc, core)


def _keep_out(files: Files, pages_by_doc: dict[str, Page], core: Config) -> set[str]:
    """MkDocs publishes every file under docs_dir, symlinks followed: a page the site cannot
    show gets a notice as its text (MkDocs never reads the file), and any other file that
    leads out of the folder or to nothing is left out."""
    unpublished: set[str] = set()
    for file in [f for f in files if not utf8_name(f.src_uri)]:
        # MkDocs lists the folder itself; the core already left the file out and said so.
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
    paths = [
        path
        for f in on_disk
        if f.src_uri not in unpublished and (path := f.abs_src_path) is not None
    ]
    gone = outside_files(paths, docs) | {p for p in paths if not os.path.exists(p)}
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


def generated_pages(
    wiki: Wiki, report: LintReport, templates: Templates, graph: bool, listings: Listings
) -> dict[str, Rendered]:
    """The pages groundwiki adds, by src_uri: the lint report (what the site may show of it),
    the graph when the site shows graphs, the A–Z index and the tags page (`listings` keeps
    them across the rebuilds of a server)."""
    layout = wiki.layout
    pages = {LINT_PAGE: Rendered(lint_page(wiki, report, layout, templates), {})}
    if graph:
        pages[GRAPH_PAGE] = Rendered(graph_page(layout, templates), {})
    pages.update(listings.of(wiki, layout, templates))
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
    for asset in sorted(ASSETS.rglob("*")):
        if asset.is_file() and asset.suffix in {".js", ".css", ".txt"}:  # licences too
            dest = f"{ASSETS_DIR}/{asset.relative_to(ASSETS).as_posix()}"
            files.append(File.generated(config, dest, abs_src_path=str(asset)))
