"""The site's navigation and page titles: a compact navigation for a large wiki (home, the
generated pages, the top folders' index pages) instead of MkDocs' full one, section and page
titles given to the theme as the HTML it prints them as."""

from __future__ import annotations

from html import escape
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files, InclusionLevel
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page as MkDocsPage

from groundwiki.core.config.wiki_config import Config, Options
from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import USER_DIR
from groundwiki.core.model.site_paths import (
    GRAPH_PAGE,
    INDEX_PAGE,
    LINT_PAGE,
    TAGS_PAGE,
    home_pages,
)
from groundwiki.core.wiki.compiler import discover_pages


class SiteNavigation:
    """The navigation of one build: whether it is compact, and the one MkDocs made."""

    def __init__(self) -> None:
        self.compact = False
        self.nav: Navigation | None = None

    def configure(
        self, config: MkDocsConfig, options: Options, core: Config, pages: int | None = None
    ) -> None:
        """Give MkDocs the compact navigation when the site wants one. `pages`: how many page
        files the wiki has, when the compile's walk already counted them (under `mkdocs serve`
        a rebuild walks no folder, and counting them again took a fifth of a second)."""
        self.compact = _wants_compact(config, options, core, pages)
        if self.compact:
            config.nav = compact_nav(core, options.graph)

    def hide_unlisted(self, files: Files, config: MkDocsConfig) -> None:
        """In a compact navigation, the pages it does not list are published but not listed."""
        if not self.compact:
            return
        listed = {entry for item in config.nav or [] for entry in item.values()}
        for file in files.documentation_pages():
            if file.src_uri not in listed and file.inclusion.is_included():
                file.inclusion = InclusionLevel.NOT_IN_NAV

    def made(self, nav: Navigation, config: MkDocsConfig) -> None:
        """The navigation MkDocs made: its sections named after folders as HTML."""
        if config.nav is None:  # sections named after folders, by MkDocs
            _escape_section_titles(nav.items)
        self.nav = nav


def _wants_compact(config: MkDocsConfig, options: Options, core: Config, pages: int | None) -> bool:
    if config.nav is not None or options.navigation == "full":
        return False  # an explicit nav is the writer's choice
    if options.navigation == "compact":
        return True
    # mkdocs-material renders the whole navigation into every page: past a few hundred
    # pages that costs more than the pages themselves.
    return (len(discover_pages(core)) if pages is None else pages) > options.compact_above


def compact_nav(core: Config, graph: bool) -> list[Any]:
    docs = core.docs_dir
    nav: list[Any] = []
    # The site root is whichever home page the core picks: index.md, README.md or Home.md.
    top = (p.name for p in docs.iterdir() if p.is_file() and not p.name.startswith("."))
    root = home_pages(top).root
    if root is not None:
        nav.append({"Home": root})
    nav += [{"A–Z index": INDEX_PAGE}, {"Tags": TAGS_PAGE}]
    if graph:
        nav.append({"Graph": GRAPH_PAGE})
    nav.append({"Lint report": LINT_PAGE})
    for folder in sorted(
        # user/index.md is no one's page (scopes.py): never published, so never listed.
        p
        for p in docs.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name != USER_DIR
    ):
        if (folder / "index.md").is_file():
            title = escape(folder.name.replace("-", " ").title())  # themes print it as HTML
            nav.append({title: f"{folder.name}/index.md"})
    return nav


def give_text_title(page: MkDocsPage, ours: Page | None) -> None:
    """A wiki page without a frontmatter title gets the compiler's (the file name as written,
    or its heading, `title_from`), not MkDocs' pick (a leading `# heading`, else the file name
    capitalised), so the navigation, the tab and search say what the A–Z index and the
    sidecar say. Titles go to the theme as HTML: escaped. A file that is no wiki page keeps
    MkDocs' title from a rendered heading (HTML already), else its file name as text."""
    if "title" in page.meta:
        return
    if ours is not None:
        # MkDocs capitalises a file name's first letter; the writer's capitalisation stands,
        # as in Obsidian (`iPhone notes`, `macOS`).
        page.meta["title"] = escape(ours.title)
    elif not getattr(page, "_title_from_render", None):
        page.meta["title"] = escape(page.title or "")


def title_lines(markdown: str) -> list[str]:
    """The lines a generated page's title comes from (frontmatter title, first heading): all a
    navigation shows of it."""
    found = [line for line in markdown.splitlines() if line.startswith(("title:", "# "))]
    return found[:2]


def _escape_section_titles(items: list[Any]) -> None:
    for item in items:
        if isinstance(item, Section):
            item.title = escape(item.title)
            _escape_section_titles(item.children)
