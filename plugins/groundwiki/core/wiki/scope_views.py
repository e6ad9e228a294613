"""Each scope's view of one compiled wiki (`Scopes`): what one user sees, every view, who owns
which page, which shared page a user's page shadows, and where a shared page's link would leak.

The rules on paths (which scope a page file is in) are core/model/scopes.py's. A compile gives
the shared scope's view, a `Wiki` whose pages are the shared ones; each user's view is a `Wiki`
too, made from it on first use: their own pages, then the shared pages they do not shadow.
Every view of one compile holds the same `Scopes` (`wiki.scopes`), so each user's view is made
once, whichever view asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Generic, Protocol, TypeVar

from groundwiki.core.links.resolver import Resolver
from groundwiki.core.model.records import Link, Page
from groundwiki.core.model.scopes import GLOBAL


class ScopeView(Protocol):
    """What `Scopes` reads of a view: core/wiki/compiled.py's `Wiki`. A Protocol, so that the
    `Wiki` can hold its `Scopes` without the two modules importing each other."""

    @property
    def user(self) -> str | None: ...  # whose view; None: the shared scope's

    @property
    def pages(self) -> Mapping[str, Page]: ...

    @property
    def all_pages(self) -> Sequence[Page]: ...

    @property
    def resolver(self) -> Resolver: ...


V = TypeVar("V", bound=ScopeView)


class Scopes(Generic[V]):
    """The views of one compile. `shared`: the shared scope's view; `user_pages`: each user's
    own page files, by user ID (sorted); `view_of`: makes a user's view from the shared one."""

    def __init__(
        self,
        shared: V,
        user_pages: Mapping[str, tuple[Page, ...]],
        view_of: Callable[[V, str], V],
    ) -> None:
        self._shared = shared
        self._user_pages = user_pages
        self._view_of = view_of
        self._views: dict[str, V] = {}
        self._leaks: dict[int, Page | None] = {}  # by the link's id: links live as the compile

    @property
    def users(self) -> tuple[str, ...]:
        """Every user with pages of their own, sorted."""
        return tuple(self._user_pages)

    def pages_of(self, user: str) -> tuple[Page, ...]:
        """A user's own page files."""
        return self._user_pages.get(user, ())

    def view(self, user: str | None) -> V:
        """What `user` sees (None: the shared scope): their own pages, then the shared pages
        they do not shadow, with links resolved in their scope first. Made on first use."""
        if user is None:
            return self._shared
        found = self._views.get(user)
        if found is None:
            found = self._views[user] = self._view_of(self._shared, user)
        return found

    @cached_property
    def views(self) -> tuple[V, ...]:
        """The shared view, then each user's: every page of every scope is its viewer's own in
        one of them."""
        return (self._shared, *(self.view(user) for user in self.users))

    @cached_property
    def owned(self) -> tuple[tuple[V, Page], ...]:
        """Every page that owns its key in its scope, with the view its owner sees it in: what
        the lock and the sidecar's indexes hold, once each."""
        return tuple(
            (view, page)
            for view in self.views
            for page in view.pages.values()
            if view.user is None or page.scope != GLOBAL  # the viewer's own
        )

    @cached_property
    def every_page(self) -> tuple[Page, ...]:
        """Every page file of every scope, by path: what the lock, raw sources and renames
        answer to, whoever views them."""
        found = [*self._shared.all_pages, *(p for own in self._user_pages.values() for p in own)]
        return tuple(sorted(found, key=lambda p: p.rel_path))

    def shadowed(self, page: Page) -> Page | None:
        """The shared page a user's page shadows (same key), if any."""
        if page.scope == GLOBAL:
            return None
        return self._shared.pages.get(page.key)

    def leak_target(self, link: Link, page: Page) -> Page | None:
        """For a link of a shared page that lands nowhere in the shared scope: the user's page it
        would land on in that user's view (a scope leak), else None."""
        key = id(link)
        if key not in self._leaks:
            self._leaks[key] = self._leak(link, page)
        return self._leaks[key]

    def _leak(self, link: Link, page: Page) -> Page | None:
        for view in self.views[1:]:
            landed = view.resolver.resolve(link, page.doc_path)
            if landed is not None and view.pages[landed.key].scope != GLOBAL:
                return view.pages[landed.key]
        return None
