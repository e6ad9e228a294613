"""The scope rules: a shared page's link that lands only on one user's page or file (a leak),
a user's page that shadows a shared one for them, a page file in no user's folder.

A scoped wiki is linted as each reader sees it (runner.py): these rules report from the shared
view, once, what concerns several views.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.lint.findings import Finding
from groundwiki.core.lint.rules import finding, link_kind, page_at, rule
from groundwiki.core.model.records import Location
from groundwiki.core.model.scopes import USER_DIR, user_scope
from groundwiki.core.wiki.compiled import ResolvedLink, Wiki


@dataclass(frozen=True)
class Leak:
    path: str  # as findings print paths
    scope: str  # the user's scope
    what: str  # "page" or "file"


def leak(wiki: Wiki, item: ResolvedLink) -> Leak | None:
    """Where a shared page's link that lands nowhere in the shared view lands in a user's view:
    on their page (`Scopes.leak_target`), or on a file of their own folder, which the shared
    view does not see either. Only the shared view reports leaks: in a user's view the link
    resolves."""
    if wiki.user is not None:
        return None
    scopes = wiki.scopes
    target = scopes.leak_target(item.link, item.page)
    if target is not None:
        return Leak(target.rel_path, target.scope, "page")
    if item.link.kind != "wikilink":
        return None
    for view in scopes.views[1:]:
        found = view.resolver.attachment(item.link, item.page.doc_path)
        if found is not None:  # none in the shared view, so the user's own
            path = wiki.config.rel(wiki.config.docs_dir / found.path)
            return Leak(path, user_scope(view.user), "file")
    return None


@rule(
    "scope-leak",
    "error",
    "A shared page's link that lands only on a user's own page or file: shared pages must not "
    "depend on one user's notes.",
    per_page=True,
)
def scope_leak(wiki: Wiki) -> Iterator[Finding]:
    for item in wiki.resolved_links:
        found = leak(wiki, item) if item.broken else None
        if found is not None:
            link, what = item.link, found.what
            quoted = f"{link_kind(link)} '{excerpt(link.raw or link.target)}'"
            detail = f"{link.kind}:{link.target}"
            yield finding(
                "scope-leak",
                link.at,
                f"{quoted} lands only on {found.path}, a {what} of {found.scope}; other readers "
                f"find no {what} there",
                f"move the {what} (or what the link needs from it) into the shared pages, or "
                "drop the link"
                if what == "page"
                else f"move the file out of {USER_DIR}/ into the shared folders, or drop the link",
                detail,
                # The site of the shared scope names neither the user nor their page or file.
                (
                    f"{quoted} lands only on one user's own {what}; other readers find no {what} "
                    "there",
                    detail,
                ),
            )


@rule(
    "shadowed-page",
    "info",
    "A user's page with the key of a shared page: that user sees theirs in its place.",
)
def shadowed_page(wiki: Wiki) -> Iterator[Finding]:
    if wiki.user is not None:
        return  # the shared view reports every user's
    scopes = wiki.scopes
    for user in scopes.users:
        for page in scopes.pages_of(user):
            shared = scopes.shadowed(page)
            if shared is None or scopes.view(user).pages.get(page.key) is not page:
                continue
            yield finding(
                "shadowed-page",
                page_at(page),
                f"{page.rel_path} shadows {shared.rel_path} for {user}: their searches, links "
                "and pages show this one instead",
                "nothing to do if that is meant; rename the page to keep both in view",
                page.key,
            )


@rule(
    "misplaced-user-page",
    "error",
    "A page file directly under user/, in no user's folder: no one's, so never read or published.",
)
def misplaced_user_page(wiki: Wiki) -> Iterator[Finding]:
    if wiki.user is not None:
        return  # the shared view reports it once; it is in no user's view
    for doc in wiki.refused:
        name = doc.rsplit("/", 1)[-1]
        stem = name.removesuffix(".md")
        yield finding(
            "misplaced-user-page",
            Location(wiki.config.rel(wiki.config.docs_dir / doc), 1, 1),
            f"{doc} is directly under {USER_DIR}/, in no user's folder: it belongs to no one, "
            "so it is left out of the wiki (not shared, searched or published)",
            f"move it to {USER_DIR}/{stem}/{name} if it is {stem}'s own page, or to "
            f"global/{name} to share it",
            doc,
        )
