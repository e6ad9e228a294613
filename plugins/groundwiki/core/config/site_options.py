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
# `auto`: mkdocs-material's own search up to `PAGEFIND_ABOVE` pages, Pagefind beyond that
# (mkdocs_plugin/site_search.py).
SITE_SEARCH = ("auto", "pagefind", "material")
# Where material's one-file index stops being the better one (bench/site_search.py): its
# search_index.json is about 1.7 KB a page, fetched by every page view and indexed by the
# browser before the first result (53 ms at 24 pages, 6.4 s at 6,571); Pagefind fetches about
# 290 KB per first search at either size, and answered in 0.4 s at 24 pages, 0.6 to 0.8 s at
# 6,571. At 500 pages material's index would be 0.85 MB: by interpolation about Pagefind's time,
# and three times its bytes.
PAGEFIND_ABOVE = 500
# The most bytes of content (Markdown and the HTML of its slots) a generated overview page holds:
# past it the lint report, the A–Z index and the tags page are split into parts. The theme adds
# its own (about 11 KB with a compact navigation), so each page stays under 500 KB.
PAGE_BYTES = 400_000
# The nodes the global graph draws at first, the most-linked ones: past a few hundred nodes a
# force layout is a hairball. Its filter and "Show all" still reach every node.
GRAPH_NODES = 400


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
    page_bytes: int = setting(
        Integer(1_000),
        "the most bytes of content a generated page (lint report, A–Z index, tags) holds; "
        "past it the page is split into parts linked from it",
        default=PAGE_BYTES,
        blank_is_default=True,
    )
    graph_nodes: int = setting(
        Integer(0),
        "the most-linked nodes the global graph draws at first (its filter and Show all reach "
        "the others); 0 draws every node",
        default=GRAPH_NODES,
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
    site_search: str = setting(
        Choice(SITE_SEARCH),
        "the search box: material is mkdocs-material's search (one index the browser fetches "
        "whole); pagefind indexes the pages with Pagefind after the build, and the browser "
        "fetches only the chunks a query needs; auto is pagefind above 500 pages",
        default="auto",
        blank_is_default=True,
    )
