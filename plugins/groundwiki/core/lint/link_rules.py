"""The link rules: links and embeds that land on no page or file, or on a page by a guess (an
alias several pages claim, a name that fits pages in several folders), anchors the target does
not have, links to archived pages, pages no page links to, and renamed pages whose former name
no longer reaches them."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.links.anchors import Anchors
from groundwiki.core.links.resolver import normalise
from groundwiki.core.lint.findings import Finding
from groundwiki.core.lint.kept import counted, kept_while
from groundwiki.core.lint.rules import finding, link_kind, page_at, rule
from groundwiki.core.lint.scope_rules import leak
from groundwiki.core.model.records import Link
from groundwiki.core.wiki.compiled import ResolvedLink, Wiki


@rule(
    "broken-link",
    "error",
    "A wikilink, embed, ref or Markdown link to no page or file.",
    per_page=True,
)
def broken_link(wiki: Wiki) -> Iterator[Finding]:
    # The word index of the keys lasts while the names do (the compile keeps its resolver).
    suggestions = kept_while(
        wiki, "broken-link-keys", (wiki.resolver,), lambda: _KeySuggestions(list(wiki.pages))
    )
    for item in wiki.resolved_links:
        if item.broken and leak(wiki, item) is None:
            link = item.link
            what = "page or file" if link.kind == "wikilink" else "page"
            yield finding(
                "broken-link",
                link.at,
                f"{link_kind(link)} '{excerpt(link.raw or link.target)}' points to no {what}",
                _link_hint(link, suggestions),
                f"{link.kind}:{link.target}",
            )


@rule(
    "ambiguous-link",
    "warning",
    "A link by name that fits pages in several folders; the site follows the one Obsidian picks.",
    per_page=True,
)
def ambiguous_link(wiki: Wiki) -> Iterator[Finding]:
    for item in wiki.resolved_links:
        resolution = item.resolution
        if resolution is None or not resolution.candidates:
            continue
        chosen = wiki.pages[resolution.key]
        others = ", ".join(wiki.pages[key].rel_path for key in resolution.candidates[:3])
        more = len(resolution.candidates) - 3
        if more > 0:
            others += f" and {more} more"
        yield finding(
            "ambiguous-link",
            item.link.at,
            f"'{excerpt(item.link.raw or item.link.target)}' fits {chosen.rel_path} "
            f"(followed) and {others}",
            f"write the path to the page you mean, e.g. [[{chosen.doc_path.removesuffix('.md')}]]",
            f"{item.link.target}",
        )


class _KeySuggestions:
    """Keys sharing words with a broken target, found through a word index (no scan per link),
    made on the first broken link: most checks find none."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = keys
        self._by_word: dict[str, set[str]] | None = None

    @property
    def by_word(self) -> dict[str, set[str]]:
        if self._by_word is None:
            self._by_word = defaultdict(set)
            for key in self.keys:
                for word in _words(key):
                    self._by_word[word].add(key)
        return self._by_word

    def close_to(self, target: str, limit: int = 3) -> list[str]:
        shared: Counter[str] = Counter()
        by_word = self.by_word
        for word in _words(target):
            shared.update(by_word.get(word, ()))
        return [key for key, _ in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


_WORD_BREAK = re.compile(r"[\s\-_/.]+")


def _words(name: str) -> list[str]:
    return [w for w in _WORD_BREAK.split(normalise(name)) if w]


def _link_hint(link: Link, suggestions: _KeySuggestions) -> str:
    if link.kind == "link":
        return "fix the relative path to the .md file, or use a [[key]] wikilink"
    close = suggestions.close_to(link.target)
    if close:
        return f"did you mean {', '.join(f'[[{k}]]' for k in close)}? (keys are file names without .md)"
    return "create the page, add the name to a page's 'aliases', or fix the key"


@rule(
    "broken-anchor",
    "warning",
    "A link to a heading or block that the target page does not have.",
    per_page=True,
)
def broken_anchor(wiki: Wiki) -> Iterator[Finding]:
    anchors: dict[str, Anchors] = {}  # by key: a page's headings indexed once for all its links
    for item in wiki.resolved_links:
        link = item.link
        if not link.anchor or item.resolution is None:
            continue
        target = wiki.pages[item.resolution.key]
        if target.key not in anchors:
            anchors[target.key] = Anchors(target)
        if anchors[target.key].find(link.anchor) is not None:
            continue
        what = "block" if link.anchor.startswith("^") else "heading"
        yield finding(
            "broken-anchor",
            link.at,
            f"'{target.key}' has no {what} '{excerpt(link.anchor)}'",
            f"link to an existing {what} of that page, or drop the '#...' part",
            f"{target.key}#{link.anchor}",
        )


@rule("link-to-archived", "warning", "A live page linking to an archived page.", per_page=True)
def link_to_archived(wiki: Wiki) -> Iterator[Finding]:
    for item in wiki.resolved_links:
        if item.resolution is None or item.page.archived_since:
            continue
        target = wiki.pages[item.resolution.key]
        if target.archived_since:
            yield finding(
                "link-to-archived",
                item.link.at,
                f"links to '{target.key}', archived since {target.archived_since}",
                "link to the page that replaced it, or remove the link",
                target.key,
            )


@rule("orphan-page", "info", "A page no other page links to.")
def orphan_page(wiki: Wiki) -> Iterator[Finding]:
    stale = wiki.stale if wiki.changed_pages is not None else None
    inbound = counted(wiki, "orphan-page-inbound", wiki.links_by_page, _inbound, stale)
    for key, page in wiki.pages.items():
        if key in inbound or page.kind == "overview" or page.doc_path == "index.md":
            continue
        yield finding(
            "orphan-page",
            page_at(page),
            f"no page links to '{key}'",
            f"link to it with [[{key}]] from a related page, or list it in that page's refs",
            key,
        )


def _inbound(items: tuple[ResolvedLink, ...]) -> list[str]:
    """The keys one page file's links lead to, itself left out."""
    return [
        item.resolution.key
        for item in items
        if item.resolution is not None and item.resolution.key != item.page.key
    ]


@rule(
    "missing-rename-alias",
    "info",
    "A page renamed in git history whose former name is not among its aliases.",
)
def missing_rename_alias(wiki: Wiki) -> Iterator[Finding]:
    for old, page in wiki.renamed_from.items():
        former = old.rsplit("/", 1)[-1].removesuffix(".md")
        if normalise(former) == normalise(page.path.stem):
            continue  # moved to another folder under its name: links by name still find it
        if wiki.resolver.resolve_name(former) is not None:
            continue  # the name is an alias already, or another page's now
        yield finding(
            "missing-rename-alias",
            page_at(page),
            f"'{page.key}' was '{excerpt(old)}' before a rename in git history; links by the "
            f"name '{excerpt(former)}' no longer reach it (its old URL redirects here)",
            f"add it to the page's aliases: aliases: [{excerpt(former)}] (groundwiki rename "
            "does this when it renames)",
            old,
        )
