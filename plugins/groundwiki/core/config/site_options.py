"""What the built site shows: the options of the `groundwiki` block that only the site reads.

Declared here, beside the core's other options, so one validator judges them (its messages name
mkdocs.yml's line and the fix), `groundwiki settings` lists them, and the MkDocs plugin derives
its own option list from them instead of declaring them again with MkDocs' types.
"""

from __future__ import annotations

from dataclasses import dataclass

from groundwiki.core.config.settings_spec import Choice, Flag, Integer, setting

# `auto`: MkDocs' own navigation up to `compact_above` pages, a short one beyond that.
NAVIGATION = ("auto", "full", "compact")
SCOPES = ("global", "all")


@dataclass(frozen=True)
class SiteOptions:
    """What each page and the site around it show (the renderer and the plugin read them)."""

    backlinks: bool = setting(
        Flag(), "a Backlinks section at the end of each page", default=True, blank_is_default=True
    )
    sources: bool = setting(
        Flag(), "a Sources section at the end of each page", default=True, blank_is_default=True
    )
    graph: bool = setting(
        Flag(),
        "the graph page, each page's local graph, and the scripts that draw them",
        default=True,
        blank_is_default=True,
    )
    raw_source_pages: bool = setting(
        Flag(),
        "a page per raw source, which citation markers and Sources link to",
        default=True,
        blank_is_default=True,
    )
    # 10,000 lines of a 110-character log make a 2.5 MB page (about 250 bytes a line with its
    # number and anchors), which a browser shows at once; the whole of a 50 MB log made a
    # 131 MB one. The bundled wiki's longest source has 4,723 lines.
    source_page_lines: int = setting(
        Integer(1),
        "the most lines a raw-source page shows besides the cited ranges; a longer source's page "
        "links its full text (lint: large-source)",
        default=10_000,
        blank_is_default=True,
    )
    show_derived_summaries: bool = setting(
        Flag(),
        "show a derived summary (the first sentence of a page without one of its own) under "
        "its title, in backlinks and in the A–Z and tags pages; search and agents get it "
        "either way",
        default=False,
        blank_is_default=True,
    )
    redirects: bool = setting(
        Flag(),
        "a redirect page for each alias, at the alias's URL",
        default=True,
        blank_is_default=True,
    )
    scopes: str = setting(
        Choice(SCOPES),
        "in a wiki with global/ and user/ folders: global publishes the shared pages only; all "
        "also each user's pages under /user/<id>/, each as that user sees the wiki",
        default="global",
        blank_is_default=True,
    )
    navigation: str = setting(
        Choice(NAVIGATION),
        "full: MkDocs' own navigation; compact: home, overview pages and top folders; "
        "auto: full up to compact_above pages, compact beyond (a nav in mkdocs.yml always wins)",
        default="auto",
        blank_is_default=True,
    )
    compact_above: int = setting(
        Integer(0),
        "the page count above which auto navigation is compact",
        default=300,
        blank_is_default=True,
    )
    # A build log is read by a writer: at vault size one rule alone (ambiguous-link) logged a
    # hundred lines; past the cap one line counts the rest and says where they are listed.
    log_per_rule: int = setting(
        Integer(0),
        "the most findings of one lint rule the build log lists (errors and warnings; infos are "
        "only counted); one line counts the rest; 0 lists every one",
        default=20,
        blank_is_default=True,
    )
    build_cache: bool = setting(
        Flag(),
        "keep what a build parsed in .groundwiki/build/ (git-ignored, safe to delete), keyed by "
        "file content, so the next build reads only the files that changed",
        default=True,
        blank_is_default=True,
    )
