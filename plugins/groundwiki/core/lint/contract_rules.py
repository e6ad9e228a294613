"""The page contract's rules: every page file readable UTF-8 text whose frontmatter is valid
YAML that keeps the schema, with a summary, a key of its own and aliases that point one way,
and no symlink out of the wiki folder."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.links.resolver import normalise
from groundwiki.core.lint.findings import Finding
from groundwiki.core.lint.kept import kept_while
from groundwiki.core.lint.rules import finding, page_at, recorded, rule
from groundwiki.core.wiki.compiled import Wiki


@rule("unreadable-page", "error", "A page file that is not readable UTF-8 text.", per_page=True)
def unreadable_page(wiki: Wiki) -> Iterator[Finding]:
    yield from recorded(wiki, "unreadable-page")


@rule(
    "invalid-frontmatter",
    "error",
    "Frontmatter that is not valid YAML or not a mapping.",
    per_page=True,
)
def invalid_frontmatter(wiki: Wiki) -> Iterator[Finding]:
    yield from recorded(wiki, "invalid-frontmatter")


@rule(
    "schema-violation",
    "error",
    "A frontmatter field that breaks the page contract (JSON Schema).",
    per_page=True,
)
def schema_violation(wiki: Wiki) -> Iterator[Finding]:
    yield from recorded(wiki, "schema-violation")


@rule(
    "missing-summary",
    "info",
    "A page without a one-line `summary` (or `tldr`, or `description`): by default its first "
    "sentence stands in (option missing_summary).",
    per_page=True,
)
def missing_summary(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        problems = {(p.rule, p.detail) for p in page.problems}
        unparsed = any(
            rule in {"invalid-frontmatter", "unreadable-page", "page-outside-wiki"}
            for rule, _ in problems
        )
        already = problems & {
            ("schema-violation", name) for name in ("summary", "tldr", "description")
        }
        if (page.summary and not page.summary_derived) or unparsed or already:
            continue
        if page.summary_derived:
            message = f"page '{page.key}' has no summary: its first sentence stands in"
        elif wiki.config.missing_summary == "derive":
            message = (
                f"page '{page.key}' has no summary, and no paragraph of prose to take one from"
            )
        else:
            message = f"page '{page.key}' has no summary"
        yield finding(
            "missing-summary",
            page_at(page),
            message,
            "add a one-line 'summary:' (or 'description:') to the frontmatter saying what the "
            "page is for",
            page.key,
        )


@rule("duplicate-key", "error", "Two page files whose names differ only in case, in one folder.")
def duplicate_key(wiki: Wiki) -> Iterator[Finding]:
    if len(wiki.pages) == len(wiki.all_pages):
        return  # every page file holds a key of its own (the usual wiki: no page is looked at)
    for page in wiki.all_pages:
        first = wiki.pages[page.key]
        if first is not page:
            yield finding(
                "duplicate-key",
                page_at(page),
                f"key '{page.key}' is already used by {first.rel_path}",
                "rename or merge one of the files: links cannot tell them apart (names are "
                "compared without case, as Obsidian does)",
                page.key,
            )


@rule("alias-collision", "warning", "A link by an alias that several pages claim.", per_page=True)
def alias_collision(wiki: Wiki) -> Iterator[Finding]:
    """Shared aliases are common in real vaults (two people called Chen) and harmless until a
    link uses one: only then is the target a guess, so only then is it reported, at the link.
    A page's own name always wins over an alias (in Obsidian aliases are no link targets at
    all), so an alias that is another page's name is no collision."""
    # The claims last while the names do (the compile keeps its resolver).
    claims = kept_while(wiki, "alias-collision-claims", (wiki.resolver,), lambda: _claims(wiki))
    if not claims:
        return
    for item in wiki.resolved_links:
        resolution = item.resolution
        if resolution is None or resolution.via != "alias":
            continue
        claimants = [
            path
            for key, path in claims.get(normalise(item.link.target), ())
            if key != resolution.key
        ]
        if not claimants:
            continue
        chosen = wiki.pages[resolution.key]
        others = ", ".join(claimants[:3])
        yield finding(
            "alias-collision",
            item.link.at,
            f"'{excerpt(item.link.target)}' is an alias of {chosen.rel_path} (followed) and "
            f"of {others}",
            "link by the page's key or path, or keep the alias on one page only",
            item.link.target,
        )


def _claims(wiki: Wiki) -> dict[str, list[tuple[str, str]]]:
    """The pages (key, path) claiming each alias, normalised, in the order of their paths."""
    claims: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for page in sorted(wiki.pages.values(), key=lambda p: p.rel_path):
        for alias in page.aliases:
            claims[normalise(alias)].append((page.key, page.rel_path))
    return claims


@rule(
    "page-outside-wiki",
    "error",
    "A page file that is a symlink to a file outside the wiki folder (never read or published).",
    per_page=True,
)
def page_outside_wiki(wiki: Wiki) -> Iterator[Finding]:
    yield from recorded(wiki, "page-outside-wiki")
