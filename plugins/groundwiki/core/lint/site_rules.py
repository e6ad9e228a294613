"""The rules on what the site shows: a list nested deeper than it renders, embeds that reach
the transclusion limit, a raw source longer than its page shows."""

from __future__ import annotations

from collections.abc import Iterator

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.lint.findings import Finding
from groundwiki.core.lint.rules import finding, page_at, rule
from groundwiki.core.model.records import Location
from groundwiki.core.read.markdown import MAX_INDENT, MAX_LIST_DEPTH, too_deep_lines
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.transclusion import first_capped


@rule(
    "deep-list",
    "warning",
    f"A list nested more than {MAX_LIST_DEPTH} levels deep: the site shows the deeper items at "
    "that level.",
    per_page=True,
)
def deep_list(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        code = page.body_map.code_and_headings if page.body_map else ()
        deep = too_deep_lines(page.body, code)
        if deep:
            yield finding(
                "deep-list",
                page_at(page, page.body_line + deep[0]),
                f"{len(deep):,} lines are indented more than {MAX_INDENT} columns (a list "
                f"{MAX_LIST_DEPTH} levels deep); the site shows them at that depth",
                "nest less deeply: split the list, or use headings for its outer levels",
            )


@rule(
    "transclusion-capped",
    "warning",
    "A page whose embeds, with the embeds inside them, transclude more than one page may show.",
    per_page=True,
)
def transclusion_capped(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        if not any(link.embed for link in page.links):
            continue
        capped = first_capped(wiki, page)
        if capped is not None:
            link, why = capped
            yield finding(
                "transclusion-capped",
                link.at,
                f"'{excerpt(link.raw, 80)}' reaches the transclusion limit: {why}; the embeds "
                "past it show a note and a link",
                "embed sections (`![[note#Heading]]`) or link (`[[note]]`) instead of embedding "
                "whole notes that embed others",
            )


@rule(
    "large-source",
    "warning",
    "A raw source longer than its page shows (option source_page_lines): the page shows its "
    "first lines and the cited ranges, and links the full text.",
)
def large_source(wiki: Wiki) -> Iterator[Finding]:
    cap = wiki.config.source_page_cap
    if cap is None:  # no raw-source pages are built
        return
    for path, source in wiki.sources.items():
        if source.text is not None and source.line_count > cap:
            yield finding(
                "large-source",
                Location(wiki.config.rel(source.abs_path), 1, 1),
                f"'{wiki.config.raw_prefix}/{path}' has {source.line_count:,} lines; its page "
                f"shows lines 1–{cap:,} and the cited ranges, and links the full text",
                "raise source_page_lines in mkdocs.yml to show more, split the file, or set "
                "rules: large-source: off to accept it",
                path,
            )
