"""The links a rename rewrites, in the wiki as it will stand (`After`): every link that reached
the page by its file name, path or key, in its own style, and the page's own relative links
when it changes folders; each new spelling must land where the old one did. Then where each
rewrite goes in a file's text."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import pairwise
from urllib.parse import unquote

from groundwiki.core.edit.cross_scope import ScopeMove
from groundwiki.core.edit.frontmatter_text import entry_spans, read_frontmatter
from groundwiki.core.edit.link_text import (
    Span,
    destination_text,
    line_starts,
    markdown_destination,
    spell_markdown_path,
    spell_name,
    wikilink_target,
    with_suffix_as_written,
)
from groundwiki.core.edit.rename_plan import PAGE_SUFFIX, LeftLink, left_link
from groundwiki.core.links.resolver import Resolver
from groundwiki.core.model.records import Link, Page
from groundwiki.core.read.pages import page_key
from groundwiki.core.wiki.compiled import ResolvedLink, Wiki
from groundwiki.core.wiki.compiler import assign_keys


@dataclass
class After:
    """The wiki as it will stand: the page at its new path, keys recomputed."""

    page: Page
    resolver: Resolver
    keys: dict[str, str]  # key before -> key after, for every page whose key changes
    # The lock's name (`Page.uid`: scope and key) before -> after, for every page whose name
    # changes; keys are made within a scope, so a page's lock name follows its scope.
    uids: dict[str, str]
    lock_names: tuple[str, str]  # the page's own lock name, before and after


def wiki_after(wiki: Wiki, page: Page, new_doc: str, alias: str | None, move: ScopeMove) -> After:
    config = wiki.config
    path = config.docs_dir / new_doc
    moved = replace(
        page,
        path=path,
        rel_path=config.rel(path),
        doc_path=new_doc,
        key=page_key(path),
        aliases=page.aliases + ((alias,) if alias else ()),
    )
    before = [moved if p is page else p for p in wiki.all_pages]
    after = assign_keys(_unkeyed(before))
    keys: dict[str, str] = {}
    for old_page, new_page in zip(wiki.all_pages, after, strict=True):
        if wiki.pages.get(old_page.key) is old_page and old_page.key != new_page.key:
            keys[old_page.key] = new_page.key
    at = wiki.all_pages.index(page)
    named_before = assign_keys(_unkeyed(wiki.all_pages), move.scoped_before)
    named_after = assign_keys(_unkeyed(before), move.scoped_after)
    uids: dict[str, str] = {}
    for old_page, new_page in zip(named_before, named_after, strict=True):
        if old_page.uid != new_page.uid:
            uids.setdefault(old_page.uid, new_page.uid)
    resolver = Resolver(after, wiki.attachments, wiki.sources)
    lock_names = (named_before[at].uid, named_after[at].uid)
    return After(after[at], resolver, keys, uids, lock_names)


def _unkeyed(pages: list[Page]) -> list[Page]:
    """The pages with their keys as their file names give them, before `assign_keys`."""
    return [p if p.key == page_key(p.path) else replace(p, key=page_key(p.path)) for p in pages]


def _is_relative(link: Link, via: str) -> bool:
    if link.kind == "link":
        return via == "path" and not link.target.startswith("/")
    return link.target.startswith(("./", "../"))


@dataclass(frozen=True)
class Rewrite:
    item: ResolvedLink
    target: str  # the new target, unencoded, as the link will read it


def _spell(link: Link, via: str, doc_path: str, from_doc: str) -> str:
    if link.kind == "link":
        return spell_markdown_path(link.target, via, doc_path, from_doc)
    spelled = spell_name(link.target, doc_path.removesuffix(PAGE_SUFFIX), from_doc)
    return with_suffix_as_written(link.target, spelled)


def _lands(after: After, link: Link, target: str, from_doc: str, wanted: str) -> bool:
    """Whether the link, with its new target, reaches `wanted` (a page key, or an attachment's
    path) in the wiki as it will stand."""
    moved = replace(link, target=target)
    found = after.resolver.resolve(moved, from_doc)
    if found is not None:
        return found.key == wanted
    attachment = after.resolver.attachment(moved, from_doc)
    return attachment is not None and attachment.path == wanted


def link_rewrites(wiki: Wiki, page: Page, after: After) -> tuple[list[Rewrite], list[LeftLink]]:
    rewrites: list[Rewrite] = []
    left: list[LeftLink] = []
    new_doc = after.page.doc_path
    folder_moves = posixpath.dirname(new_doc) != posixpath.dirname(page.doc_path)
    for item in wiki.resolved_links:
        link, found = item.link, item.resolution
        if link.kind == "wikilink" and not link.target:
            continue  # [[#Heading]]: this page, wherever it is
        from_doc = new_doc if item.page is page else item.page.doc_path
        if found is not None and wiki.pages.get(found.key) is page:
            if found.via in ("alias", "title"):
                continue  # the alias or title still belongs to the page
            wanted, doc_path, via = after.page.key, new_doc, found.via
            spelled = _spell(link, via, doc_path, from_doc)
        elif item.page is page and folder_moves and found is not None:
            target = wiki.pages.get(found.key)
            if target is None:
                continue
            wanted = after.keys.get(found.key, found.key)
            doc_path, via = target.doc_path, found.via
            if _is_relative(link, via):
                spelled = _spell(link, via, doc_path, from_doc)
            elif _lands(after, link, link.target, from_doc, wanted):
                continue
            else:  # a name Obsidian resolved by the page's old folder: name the page by path
                spelled = _path_form(link, doc_path, from_doc)
        elif item.page is page and folder_moves and item.attachment is not None:
            attachment = item.attachment
            if attachment.where != "docs" or not link.target.startswith(("./", "../")):
                continue
            wanted, doc_path = attachment.path, attachment.path
            spelled = spell_name(link.target, attachment.path, from_doc)
        else:
            continue
        if not _lands(after, link, spelled, from_doc, wanted) and doc_path.endswith(PAGE_SUFFIX):
            spelled = _path_form(link, doc_path, from_doc)
        if not _lands(after, link, spelled, from_doc, wanted):
            left.append(left_link(item, "its new spelling would not reach the page"))
            continue
        rewrites.append(Rewrite(item, spelled))
    return rewrites, left


def _path_form(link: Link, doc_path: str, from_doc: str) -> str:
    """The spelling that names one page whatever the folders hold: the path from the root for a
    wikilink or ref, the relative path (which MkDocs tries first) for a Markdown link."""
    if link.kind == "link":
        return spell_markdown_path(link.target, "path", doc_path, from_doc)
    return with_suffix_as_written(link.target, doc_path.removesuffix(PAGE_SUFFIX))


def spans_of(text: str, rewrites: list[Rewrite], left: list[LeftLink]) -> tuple[list[Span], int]:
    """Where each rewrite goes in one file's text, and how many links that rewrites."""
    starts = line_starts(text)
    spans: list[Span] = []
    count = 0
    refs: dict[str, str] = {}
    taken: set[int] = set()
    for rewrite in rewrites:
        link = rewrite.item.link
        if link.kind == "ref":
            refs[link.target] = rewrite.target
            count += link.target != rewrite.target
            continue
        if link.kind == "wikilink":
            place = wikilink_target(text, starts, link)
            if place is None:
                left.append(left_link(rewrite.item, "it could not be found in the file"))
                continue
            written = text[place[0] : place[1]]
            spans.append(Span(place[0], place[1], rewrite.target))
        else:
            destination = markdown_destination(text, starts, link, taken)
            if destination is None:
                left.append(left_link(rewrite.item, "it could not be found in the file"))
                continue
            written = text[destination.start : destination.end]
            if unquote(written) == rewrite.target:
                continue
            new = destination_text(written, rewrite.target, destination.bracketed)
            spans.append(Span(destination.start, destination.end, new))
        if written != rewrite.target:
            count += 1
    if refs:
        spans.extend(entry_spans(text, read_frontmatter(text), "refs", refs))
    return [s for s in spans if text[s.start : s.end] != s.text], count


def apply_spans(text: str, spans: Iterable[Span]) -> str:
    unique = sorted(set(spans), key=lambda s: (s.start, s.end))
    for before, span in pairwise(unique):
        if span.start < before.end:
            raise ValueError(f"overlapping rewrites at {before} and {span}")  # a bug of ours
    for span in reversed(unique):
        text = text[: span.start] + span.text + text[span.end :]
    return text
