"""Renaming a page: the file moves, every link that reached it is rewritten in its own style, its
old name becomes an alias, and its lock records follow it.

`plan_rename` reads a compiled `Wiki` and plans the whole change into an `Edits` (nothing is
written here). A link is rewritten when it reached the page by its file name, path or key; one
that reached it through an alias or its title still does, and stays as written. A rewritten
target keeps the link's style: a name stays a name, a path from the root stays one, a relative
path is recomputed from the linking page, a Markdown link stays percent-encoded or in `<...>`;
labels, anchors and embeds are not touched. When the page changes folders, its own relative
links are recomputed so they still reach what they reached. Every new spelling is resolved
again as the wiki will stand after the rename, and must land where the old one did.

In a scoped wiki (`scopes.py`) a move between scopes changes who sees the page: it is refused
unless asked for (`across_scopes`), and then the plan says who sees it now and lists the links
that lose it (a shared page's link to a page that became a user's own), which stay as written.
The lock records follow the page under its name across scopes (`user:bob/oncall`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import Edits
from groundwiki.core.edit.frontmatter_text import (
    FrontmatterUnreadable,
    alias_span,
    entry_spans,
    read_frontmatter,
)
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
from groundwiki.core.edit.new_page import check_name
from groundwiki.core.edit.rename_scope import as_doc_name
from groundwiki.core.evidence.lock import LockEntry, render_lock
from groundwiki.core.links.resolver import Resolver, normalise
from groundwiki.core.model.records import Link, Page
from groundwiki.core.model.scopes import GLOBAL, GLOBAL_DIR, USER_DIR, is_scoped, scope_of, user_of
from groundwiki.core.read.pages import page_key
from groundwiki.core.wiki.compiler import ResolvedLink, Wiki, assign_keys

PAGE_SUFFIX = ".md"


class RenameRefused(GroundwikiError):
    """The rename cannot be made as asked; nothing was changed."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}. Nothing was changed")


@dataclass(frozen=True)
class LeftLink:
    """A link that reached the page and is left as written (it still reaches it by the alias)."""

    path: str
    line: int
    written: str
    reason: str


@dataclass(frozen=True)
class RenamePlan:
    old_path: str  # the page file, from the wiki root
    new_path: str
    old_key: str
    new_key: str
    links: int  # links rewritten
    linking_files: int  # files whose links were rewritten (the page itself included)
    alias: str | None  # the old name added to the page's aliases
    lock_rows: int  # lock records moved to the new key
    left: tuple[LeftLink, ...]
    lock_from: str = ""  # the page's name in the lock before (its key, scoped) and after
    lock_to: str = ""
    old_scope: str = GLOBAL
    new_scope: str = GLOBAL
    seen_by: str | None = None  # who sees the page after a move across scopes
    lost: tuple[LeftLink, ...] = ()  # links that reach the page, or from it, and no longer will


# --- which page, which new name --------------------------------------------------------------


def page_to_rename(wiki: Wiki, old: str) -> Page:
    name = as_doc_name(wiki.config, old)
    found = wiki.resolver.resolve_name(name)
    docs = wiki.config.rel(wiki.config.docs_dir)
    if found is None or found.key not in wiki.pages:
        raise RenameRefused(
            f"'{old}' names no page: it is no key, alias, title, file name or path under "
            f"{docs}/; check the spelling (`groundwiki graph` lists every key)"
        )
    page = wiki.pages[found.key]
    if found.candidates:
        paths = [page.doc_path, *(wiki.pages[key].doc_path for key in found.candidates)]
        raise RenameRefused(
            f"'{old}' fits several pages: {', '.join(paths[:4])}; give the path of the one to "
            f"rename, e.g. groundwiki rename {page.doc_path.removesuffix(PAGE_SUFFIX)} NEW"
        )
    return page


def new_doc_path(config: Config, page: Page, new: str) -> str:
    """NEW as a path in the wiki folder: a name stays in the page's folder, a path moves it.
    A path written from the wiki root (`wiki/guide/new`, as OLD may be) is read from the
    wiki folder, unless the wiki folder has a folder of that name."""
    try:
        name = check_name(new)
    except ValueError as exc:
        raise RenameRefused(str(exc)) from None
    docs = config.rel(config.docs_dir)
    first = name.split("/", 1)[0]
    if name.startswith(f"{docs}/") and not (config.docs_dir / first).is_dir():
        name = name.removeprefix(f"{docs}/")
    if "/" not in name:
        name = posixpath.join(posixpath.dirname(page.doc_path), name)
    return name + PAGE_SUFFIX


def _check_free(wiki: Wiki, page: Page, new_doc: str) -> None:
    """NEW must name nothing else: no file there, no other page's file name, key or alias."""
    config, resolver = wiki.config, wiki.resolver
    if new_doc == page.doc_path:
        raise RenameRefused(f"{page.rel_path} already has that name")
    shown = f"{config.rel(config.docs_dir)}/{new_doc}"
    existing = config.docs_dir / new_doc
    if existing.exists() and not _same_file(existing, page.path):
        raise RenameRefused(f"{shown} already exists; choose another name, or merge the pages")
    stem = posixpath.basename(new_doc).removesuffix(PAGE_SUFFIX)
    wanted = normalise(stem)
    own_route = page.doc_path.removesuffix(PAGE_SUFFIX)
    for route in resolver.routes.by_name.get(wanted, []):
        if route != own_route:
            raise RenameRefused(
                f"'{stem}' is already the file name of {config.rel(config.docs_dir)}/{route}.md; "
                "links by that name could not tell the pages apart: choose another name"
            )
    for holder_key, what in (
        (resolver.by_key.get(wanted), "key"),
        (resolver.by_alias.get(wanted), "alias"),
    ):
        if holder_key is not None and holder_key != page.key and holder_key in wiki.pages:
            holder = wiki.pages[holder_key]
            fix = (
                f"remove it from the aliases of {holder.rel_path} first, or choose another name"
                if what == "alias"
                else "choose another name"
            )
            raise RenameRefused(f"'{stem}' is already the {what} of {holder.rel_path}; {fix}")


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.samefile(other)  # a change of case only, on a case-insensitive disk
    except OSError:
        return False


# --- scopes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ScopeMove:
    """The page's scope before and after, and whether the wiki is scoped before and after (a
    page moved into `user/<id>/` makes a wiki scoped)."""

    old: str
    new: str
    scoped_before: bool
    scoped_after: bool

    @property
    def across(self) -> bool:
        return self.old != self.new


def _scope_move(config: Config, page: Page, new_doc: str) -> _ScopeMove:
    scoped = is_scoped(config.docs_dir)
    after = scoped or new_doc.split("/", 1)[0] in (GLOBAL_DIR, USER_DIR)
    return _ScopeMove(scope_of(page.doc_path, scoped), scope_of(new_doc, after), scoped, after)


def _visible(viewer: str, target: str) -> bool:
    """Whether a page of scope `viewer` sees a page of scope `target` (`Wiki.view`)."""
    return target in (GLOBAL, viewer)


def _owner(scope: str) -> str:
    return user_of(scope) or GLOBAL


def seen_by(rel_path: str, move: _ScopeMove) -> str:
    """Who sees the page once it is moved across scopes, and who no longer does."""
    if move.new == GLOBAL:
        return f"{rel_path} becomes global: every reader and the published site will see it"
    user = _owner(move.new)
    lost = (
        "every other reader and the published site (its shared pages) no longer do"
        if move.old == GLOBAL
        else f"{_owner(move.old)} no longer does"
    )
    return f"{rel_path} becomes {move.new}'s own page: only {user} will see it; {lost}"


def _check_scope(wiki: Wiki, page: Page, new_doc: str, move: _ScopeMove, allowed: bool) -> None:
    shown = f"{wiki.config.rel(wiki.config.docs_dir)}/{new_doc}"
    if move.scoped_after and new_doc.count("/") == 1 and new_doc.startswith(USER_DIR + "/"):
        # Directly under user/, a page is in no user's folder: no one would ever see it.
        raise RenameRefused(
            f"{shown} would be in no user's folder, and no one would see it: move it to "
            f"{USER_DIR}/ID/{posixpath.basename(new_doc)} for user ID, or to {GLOBAL_DIR}/"
        )
    if not move.across or allowed:
        return
    raise RenameRefused(
        f"moving {page.rel_path} to {shown} takes it from the scope {move.old} to {move.new}: "
        f"{seen_by(page.rel_path, move)}, and links from pages that cannot see it there would "
        "break; pass --across-scopes to move it all the same (the links it loses are listed)"
    )


def _lost(
    wiki: Wiki, page: Page, new_rel: str, move: _ScopeMove
) -> list[tuple[ResolvedLink, LeftLink]]:
    """The links that reach the page, or lead from it, and will not once it changes scope: a
    page sees its own scope's pages and the shared ones, no other user's."""
    if not move.across:
        return []
    lost: list[tuple[ResolvedLink, LeftLink]] = []
    for item in wiki.resolved_links:
        found = item.resolution
        target = wiki.pages.get(found.key) if found is not None else None
        if target is None or (target is page) == (item.page is page):
            continue
        if target is page:
            viewer = scope_of(item.page.doc_path, move.scoped_before)
            was, will = _visible(viewer, move.old), _visible(viewer, move.new)
            reason = (
                f"it no longer reaches {new_rel}: pages of {viewer} cannot see pages of "
                f"{move.new}; lint will report it"
            )
            left = _left(item, reason)
        else:
            held = scope_of(target.doc_path, move.scoped_before)
            was, will = _visible(move.old, held), _visible(move.new, held)
            reason = (
                f"it no longer reaches {target.rel_path}: pages of {move.new} cannot see pages "
                f"of {held}; it breaks, or reaches another page of that name"
            )
            left = replace(_left(item, reason), path=new_rel)
        if was and not will:
            lost.append((item, left))
    return lost


# --- the plan --------------------------------------------------------------------------------


@dataclass
class _After:
    """The wiki as it will stand: the page at its new path, keys recomputed."""

    page: Page
    resolver: Resolver
    keys: dict[str, str]  # key before -> key after, for every page whose key changes
    # The lock's name (`Page.uid`: scope and key) before -> after, for every page whose name
    # changes; keys are made within a scope, so a page's lock name follows its scope.
    uids: dict[str, str]
    lock_names: tuple[str, str]  # the page's own lock name, before and after


def _after(wiki: Wiki, page: Page, new_doc: str, alias: str | None, move: _ScopeMove) -> _After:
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
    return _After(after[at], resolver, keys, uids, lock_names)


def _unkeyed(pages: list[Page]) -> list[Page]:
    """The pages with their keys as their file names give them, before `assign_keys`."""
    return [p if p.key == page_key(p.path) else replace(p, key=page_key(p.path)) for p in pages]


def _alias_to_add(wiki: Wiki, page: Page, new_doc: str) -> str | None:
    """The old file name, unless the page already answers to it or another page's file holds
    it (then links by it reach that page, and a redirect by it would be skipped)."""
    old = page.path.stem
    wanted = normalise(old)
    if wanted == normalise(posixpath.basename(new_doc).removesuffix(PAGE_SUFFIX)):
        return None
    if any(normalise(alias) == wanted for alias in page.aliases):
        return None
    own_route = page.doc_path.removesuffix(PAGE_SUFFIX)
    if any(route != own_route for route in wiki.resolver.routes.by_name.get(wanted, [])):
        return None
    return old


def _is_relative(link: Link, via: str) -> bool:
    if link.kind == "link":
        return via == "path" and not link.target.startswith("/")
    return link.target.startswith(("./", "../"))


@dataclass(frozen=True)
class _Rewrite:
    item: ResolvedLink
    target: str  # the new target, unencoded, as the link will read it


def _spell(link: Link, via: str, doc_path: str, from_doc: str) -> str:
    if link.kind == "link":
        return spell_markdown_path(link.target, via, doc_path, from_doc)
    spelled = spell_name(link.target, doc_path.removesuffix(PAGE_SUFFIX), from_doc)
    return with_suffix_as_written(link.target, spelled)


def _lands(after: _After, link: Link, target: str, from_doc: str, wanted: str) -> bool:
    """Whether the link, with its new target, reaches `wanted` (a page key, or an attachment's
    path) in the wiki as it will stand."""
    moved = replace(link, target=target)
    found = after.resolver.resolve(moved, from_doc)
    if found is not None:
        return found.key == wanted
    attachment = after.resolver.attachment(moved, from_doc)
    return attachment is not None and attachment.path == wanted


def _rewrites(wiki: Wiki, page: Page, after: _After) -> tuple[list[_Rewrite], list[LeftLink]]:
    rewrites: list[_Rewrite] = []
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
            left.append(_left(item, "its new spelling would not reach the page"))
            continue
        rewrites.append(_Rewrite(item, spelled))
    return rewrites, left


def _path_form(link: Link, doc_path: str, from_doc: str) -> str:
    """The spelling that names one page whatever the folders hold: the path from the root for a
    wikilink or ref, the relative path (which MkDocs tries first) for a Markdown link."""
    if link.kind == "link":
        return spell_markdown_path(link.target, "path", doc_path, from_doc)
    return with_suffix_as_written(link.target, doc_path.removesuffix(PAGE_SUFFIX))


def _left(item: ResolvedLink, reason: str) -> LeftLink:
    return LeftLink(
        item.page.rel_path, item.link.at.line, item.link.raw or item.link.target, reason
    )


def _spans(text: str, rewrites: list[_Rewrite], left: list[LeftLink]) -> tuple[list[Span], int]:
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
                left.append(_left(rewrite.item, "it could not be found in the file"))
                continue
            written = text[place[0] : place[1]]
            spans.append(Span(place[0], place[1], rewrite.target))
        else:
            destination = markdown_destination(text, starts, link, taken)
            if destination is None:
                left.append(_left(rewrite.item, "it could not be found in the file"))
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


def _apply(text: str, spans: Iterable[Span]) -> str:
    unique = sorted(set(spans), key=lambda s: (s.start, s.end))
    for before, span in pairwise(unique):
        if span.start < before.end:
            raise ValueError(f"overlapping rewrites at {before} and {span}")  # a bug of ours
    for span in reversed(unique):
        text = text[: span.start] + span.text + text[span.end :]
    return text


def _lock_text(wiki: Wiki, keys: dict[str, str]) -> tuple[str | None, int]:
    """The lock with the records of every page whose lock name (`Page.uid`) changes under its
    new name; `keys` maps the old names to the new."""
    lock = wiki.lock
    moving = [(page, citation) for page, citation in lock.records if page in keys]
    if not moving:
        return None, 0
    lock_file = wiki.config.rel(wiki.config.lock_path)
    if lock.problems:
        raise RenameRefused(
            f"{lock_file} line {lock.problems[0].line} cannot be read, and the page's records "
            "there must move: run `groundwiki lock` first"
        )
    entries: dict[tuple[str, str], LockEntry] = {}
    for (page, citation), record in lock.records.items():
        if page not in keys:
            entries[(page, citation)] = LockEntry(page, citation, record.sha256, record.first_line)
    for page, citation in moving:
        record = lock.records[(page, citation)]
        key = keys[page]
        entries[(key, citation)] = LockEntry(key, citation, record.sha256, record.first_line)
    return render_lock(entries.values()), len(moving)


def plan_rename(
    wiki: Wiki, old: str, new: str, edits: Edits, *, across_scopes: bool = False
) -> RenamePlan:
    """Plan renaming the page OLD names to NEW into `edits`; refuse (`RenameRefused`) with
    nothing planned when NEW is taken, OLD names no single page, or NEW is in another scope
    and `across_scopes` is not given."""
    config = wiki.config
    page = page_to_rename(wiki, old)
    new_doc = new_doc_path(config, page, new)
    _check_free(wiki, page, new_doc)
    move = _scope_move(config, page, new_doc)
    _check_scope(wiki, page, new_doc, move, across_scopes)
    alias = _alias_to_add(wiki, page, new_doc)
    after = _after(wiki, page, new_doc, alias, move)
    rewrites, left = _rewrites(wiki, page, after)
    lost = _lost(wiki, page, after.page.rel_path, move)
    # No spelling reaches the page from where it can no longer be seen: left as written.
    losing = {id(item.link) for item, _ in lost}
    rewrites = [rewrite for rewrite in rewrites if id(rewrite.item.link) not in losing]
    by_file: dict[Path, list[_Rewrite]] = {}
    for rewrite in rewrites:
        by_file.setdefault(rewrite.item.page.path, []).append(rewrite)
    by_file.setdefault(page.path, [])
    texts: dict[Path, str] = {}
    total = 0
    linking = 0
    for path, planned in by_file.items():
        text = edits.read(path)
        spans, count = _spans(text, planned, left)
        if path == page.path and alias is not None:
            try:
                spans.append(alias_span(text, read_frontmatter(text), alias))
            except FrontmatterUnreadable as exc:
                raise RenameRefused(
                    f"{page.rel_path}: {exc}, so its old name cannot be added to its aliases; "
                    "fix it first (groundwiki lint shows where)"
                ) from None
        total += count
        linking += 1 if count else 0
        texts[path] = _apply(text, spans)
    lock_text, lock_rows = _lock_text(wiki, after.uids)
    for path, text in texts.items():
        edits.write(path, text)
    edits.move(page.path, after.page.path)
    if lock_text is not None:
        edits.write(config.lock_path, lock_text)
    return RenamePlan(
        page.rel_path,
        after.page.rel_path,
        page.key,
        after.page.key,
        total,
        linking,
        alias,
        lock_rows,
        tuple(sorted(left, key=lambda item: (item.path, item.line))),
        *after.lock_names,
        move.old,
        move.new,
        seen_by(page.rel_path, move) if move.across else None,
        tuple(sorted((left for _, left in lost), key=lambda item: (item.path, item.line))),
    )
