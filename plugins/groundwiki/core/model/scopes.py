"""Scopes: the shared pages of a team's wiki and each user's own.

A wiki with a `global/` or a `user/` folder is scoped: `global/**.md` (and any page outside both
folders) is shared, `user/<id>/**.md` is user `<id>`'s. Keys are made within a scope, from the
path below the scope's folder, so `user/alice/deploy.md` has the key `deploy`, like
`global/deploy.md`: the user's page shadows the shared one for that user only. A wiki without
either folder has one scope, `global`, and behaves as if scopes did not exist.

What each user sees (`Wiki.scopes`, core/wiki/scope_views.py): their own pages, then the shared pages they do not shadow.

A page file directly under `user/` (`user/bob.md`) is in no user's folder: it belongs to no one,
and sharing it would publish what its writer meant to keep. It is refused: never read, indexed or
published, and lint's `misplaced-user-page` says where to move it.
"""

from __future__ import annotations

from pathlib import Path

GLOBAL = "global"
GLOBAL_DIR = "global"
USER_DIR = "user"
USER_PREFIX = "user:"


def is_scoped(docs_dir: Path) -> bool:
    return (docs_dir / GLOBAL_DIR).is_dir() or (docs_dir / USER_DIR).is_dir()


def scope_of(doc_path: str, scoped: bool) -> str:
    """`user:<id>` for a page under user/<id>/ of a scoped wiki, else `global`."""
    if not scoped:
        return GLOBAL
    parts = doc_path.split("/")
    if len(parts) >= 3 and parts[0] == USER_DIR and parts[1]:
        return USER_PREFIX + parts[1]
    return GLOBAL


def unowned(doc_path: str, scoped: bool) -> bool:
    """Whether a page file of a scoped wiki sits directly under user/, in no user's folder."""
    parts = doc_path.split("/")
    return scoped and len(parts) == 2 and parts[0] == USER_DIR


def file_owner(doc_path: str) -> str | None:
    """Whose a file of a scoped wiki that is not a page is: a user ID under user/<id>/, ""
    directly under user/ (no one's: no view sees it, as no page there is read), None for a
    shared file."""
    parts = doc_path.split("/")
    if parts[0] != USER_DIR or len(parts) < 2:
        return None
    return parts[1] if len(parts) >= 3 else ""


def scope_root(doc_path: str, scope: str) -> str:
    """The folder a page's key is made below: `user/<id>/`, `global/`, or the wiki's root."""
    if scope != GLOBAL:
        return f"{USER_DIR}/{user_of(scope)}/"
    if doc_path.startswith(GLOBAL_DIR + "/"):
        return GLOBAL_DIR + "/"
    return ""


def user_of(scope: str) -> str | None:
    """The user ID of a user scope; None for the shared one."""
    return scope[len(USER_PREFIX) :] if scope.startswith(USER_PREFIX) else None


def user_scope(user: str | None) -> str:
    return GLOBAL if user is None else USER_PREFIX + user


def user_folder(user: str) -> str:
    """A user's folder below the wiki folder, as doc paths start."""
    return f"{USER_DIR}/{user}/"


def scoped_name(scope: str, name: str) -> str:
    """A key or alias as the lock and the indexes record it: as it is in the shared scope,
    under `user:<id>/` in a user's (where it may repeat a shared page's)."""
    return name if scope == GLOBAL else f"{scope}/{name}"
