"""A rename that moves a page across scopes (core/model/scopes.py): who sees the page before
and after, the refusal unless it is asked for, and the links that lose the page (or that it
loses), which stay as written."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.rename_plan import LeftLink, RenameRefused, left_link
from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import GLOBAL, GLOBAL_DIR, USER_DIR, is_scoped, scope_of, user_of
from groundwiki.core.wiki.compiled import ResolvedLink, Wiki


@dataclass(frozen=True)
class ScopeMove:
    """The page's scope before and after, and whether the wiki is scoped before and after (a
    page moved into `user/<id>/` makes a wiki scoped)."""

    old: str
    new: str
    scoped_before: bool
    scoped_after: bool

    @property
    def across(self) -> bool:
        return self.old != self.new


def scope_move(config: Config, page: Page, new_doc: str) -> ScopeMove:
    scoped = is_scoped(config.docs_dir)
    after = scoped or new_doc.split("/", 1)[0] in (GLOBAL_DIR, USER_DIR)
    return ScopeMove(scope_of(page.doc_path, scoped), scope_of(new_doc, after), scoped, after)


def _visible(viewer: str, target: str) -> bool:
    """Whether a page of scope `viewer` sees a page of scope `target` (`Scopes.view`)."""
    return target in (GLOBAL, viewer)


def _owner(scope: str) -> str:
    return user_of(scope) or GLOBAL


def seen_by(rel_path: str, move: ScopeMove) -> str:
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


def check_scope(wiki: Wiki, page: Page, new_doc: str, move: ScopeMove, allowed: bool) -> None:
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


def lost_links(
    wiki: Wiki, page: Page, new_rel: str, move: ScopeMove
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
            left = left_link(item, reason)
        else:
            held = scope_of(target.doc_path, move.scoped_before)
            was, will = _visible(move.old, held), _visible(move.new, held)
            reason = (
                f"it no longer reaches {target.rel_path}: pages of {move.new} cannot see pages "
                f"of {held}; it breaks, or reaches another page of that name"
            )
            left = replace(left_link(item, reason), path=new_rel)
        if was and not will:
            lost.append((item, left))
    return lost
