"""What the language server answers, from the compiled wiki: diagnostics (lint findings), the
place a link or a citation leads to, hovers, completions and references. Plain functions of the
compile and a position (1-based, as the compiler counts), so they are tested without a client;
editor/server.py (the editor layer) speaks the protocol.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.edit.editor_wiki import citation_at, link_at
from groundwiki.core.evidence.citations import cited_text
from groundwiki.core.links.anchors import Anchors
from groundwiki.core.links.resolver import Resolver, normalise
from groundwiki.core.model.records import Page
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.dependencies import ANY_NAME, page_names

COMPLETION_LIMIT = 200  # items per answer; the editor asks again as the writer types


@dataclass(frozen=True)
class Place:
    """A file, and a 1-based line and column in it with the length of what stands there."""

    path: Path
    line: int = 1
    column: int = 1
    length: int = 0


@dataclass(frozen=True)
class Item:
    """A completion: the text inserted, what kind of name it is, and a line about it."""

    label: str
    kind: str  # page | alias | heading | block | source
    detail: str = ""


def definition(wiki: Wiki, page: Page, lines: list[str], line: int, column: int) -> Place | None:
    """Where the link or citation under the cursor leads: the page (at the heading or block it
    names), the attachment, or the raw source at the cited lines."""
    link = link_at(page, lines, line, column)
    if link is not None:
        resolution = wiki.resolve(link, page)
        if resolution is not None:
            target = wiki.pages[resolution.key]
            return Place(target.path, _anchor_line(target, link.anchor))
        attachment = wiki.attachment(link, page)
        if attachment is not None:
            folder = wiki.config.docs_dir if attachment.where == "docs" else wiki.config.raw_dir
            return Place(folder / attachment.path)
        return None
    citation = citation_at(page, lines, line, column)
    if citation is not None and citation.source in wiki.sources:
        source = wiki.sources[citation.source]
        # An archive's member has no lines in the archive's file: open the archive at its top.
        return Place(source.abs_path, 1 if source.in_archive else citation.start or 1)
    return None


def _anchor_line(page: Page, anchor: str | None) -> int:
    if not anchor:
        return 1
    found = Anchors(page).find(anchor)
    if found is None:
        return 1
    if found.startswith("^"):
        return next((b.line for b in page.blocks if f"^{b.id}" == found), 1)
    return next((h.line for h in page.headings if h.slug == found), 1)


def hover(wiki: Wiki, page: Page, lines: list[str], line: int, column: int) -> str | None:
    """Markdown about what is under the cursor: a linked page's title and summary, or a
    citation's text and its state against the lock."""
    link = link_at(page, lines, line, column)
    if link is not None:
        resolution = wiki.resolve(link, page)
        if resolution is None:
            attachment = wiki.attachment(link, page)
            if attachment is not None:
                return f"`{attachment.path}` (a file)"
            return f"No page or file is named `{excerpt(link.target)}`."
        target = wiki.pages[resolution.key]
        summary = target.summary or "(no summary)"
        if target.summary_derived:
            summary += " *(its first sentence: the page has no summary)*"
        return f"**{target.title}**\n\n{summary}\n\n`{target.rel_path}`"
    citation = citation_at(page, lines, line, column)
    if citation is None:
        return None
    source = wiki.sources.get(citation.source)
    if source is None:
        return f"`{citation.raw}`: no such raw source."
    states = [s for s in wiki.states_of(page) if s.citation is citation]
    state: str = states[0].status if states else "not checked"
    if states and states[0].moved_to:
        state += " to lines {}-{}".format(*states[0].moved_to)
    text = cited_text(citation, source)
    quoted = "(the cited lines are past the end)" if text is None else excerpt(text, 1_500)
    return f"`{citation.raw}`: {state}\n\n```\n{quoted}\n```"


_OPEN_LINK = re.compile(r"!?\[\[([^\]\[|]*)$")
_OPEN_CITATION = re.compile(r"<!--\s*from:\s*(\S*)$")


def completions(wiki: Wiki, lines: list[str], line: int, column: int) -> list[Item]:
    """Names that may follow the text before the cursor: keys and aliases after `[[`, headings
    after `[[page#`, block ids after `[[page#^`, raw-source paths in a provenance comment."""
    text = lines[line - 1][: column - 1] if 0 < line <= len(lines) else ""
    opened = _OPEN_LINK.search(text)
    if opened is not None:
        typed = opened.group(1)
        if "#" in typed:
            return _anchors(wiki, *typed.split("#", 1))
        return _names(wiki, typed)
    cited = _OPEN_CITATION.search(text)
    if cited is not None:
        prefix = wiki.config.raw_prefix + "/"
        typed = cited.group(1).removeprefix(prefix)
        found = [
            Item(prefix + path, "source", source.format)
            for path, source in sorted(wiki.sources.items())
            if typed.casefold() in path.casefold()
        ]
        return found[:COMPLETION_LIMIT]
    return []


@dataclass(frozen=True)
class _Name:
    """A page's key, title or alias, normalised once for every completion of a compile."""

    key: str
    title: str
    normalised: tuple[str, str]  # the key and the title
    aliases: tuple[tuple[str, str], ...]  # (alias, normalised)


def _candidates(wiki: Wiki) -> tuple[_Name, ...]:
    """Every page's names, by key: made on the first completion, and kept while the compiles
    keep their resolver (no page's names changed), however many compiles that is."""
    names = _BY_RESOLVER.get(wiki.resolver)
    if names is None:
        names = tuple(
            _Name(
                key,
                page.title,
                (normalise(key), normalise(page.title)),
                tuple((alias, normalise(alias)) for alias in page.aliases),
            )
            for key, page in sorted(wiki.pages.items())
        )
        _BY_RESOLVER[wiki.resolver] = names
    return names


# Gone with the resolver: at most the few compiles a process still holds.
_BY_RESOLVER: WeakKeyDictionary[Resolver, tuple[_Name, ...]] = WeakKeyDictionary()


def _names(wiki: Wiki, typed: str) -> list[Item]:
    wanted = normalise(typed)
    found: list[Item] = []
    for name in _candidates(wiki):
        if wanted in name.normalised[0] or wanted in name.normalised[1]:
            found.append(Item(name.key, "page", name.title))
        found += [
            Item(alias, "alias", f"alias of {name.key}")
            for alias, normalised in name.aliases
            if wanted in normalised
        ]
        if len(found) >= COMPLETION_LIMIT:
            break
    return found[:COMPLETION_LIMIT]


def _anchors(wiki: Wiki, name: str, typed: str) -> list[Item]:
    resolution = wiki.resolver.resolve_name(name)
    if resolution is None:
        return []
    target = wiki.pages[resolution.key]
    if typed.startswith("^"):
        return [Item(f"^{block.id}", "block", f"line {block.line}") for block in target.blocks]
    return [Item(h.text, "heading", "#" * h.level) for h in target.headings]


def references(wiki: Wiki, page: Page, lines: list[str], line: int, column: int) -> list[Place]:
    """Every link to the page under the cursor (the link's target, else this page): its
    backlinks, each where its link stands."""
    link = link_at(page, lines, line, column)
    key = page.key
    if link is not None:
        resolution = wiki.resolve(link, page)
        if resolution is not None:
            key = resolution.key
    # Only the pages whose links look up one of the page's names can link to it (the
    # compile's reverse index), so not every link of the wiki is looked at.
    target = wiki.pages.get(key)
    if target is None:
        return []
    by_doc = wiki.links_by_page
    naming = set(wiki.dependencies.naming([*page_names(target), ANY_NAME]))
    linking = [by_doc[doc] for doc in naming if by_doc.get(doc)]
    linking.sort(key=lambda items: items[0].page.path)  # in the wiki's order, as lint lists
    return [
        Place(item.page.path, item.link.at.line, item.link.at.column, len(item.link.raw))
        for items in linking
        for item in items
        if item.resolution is not None and item.resolution.key == key
    ]
