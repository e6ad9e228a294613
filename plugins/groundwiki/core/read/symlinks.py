"""Page files that are symlinks.

A link that stays inside the wiki folder is read like any page: two names for one file the wiki
already publishes. A link that leads out of it is never read: it would publish whatever it
points at (`wiki/passwd.md -> /etc/passwd`) on the site, in site search and to agents. The
page keeps its key, so links to it still land, but it has no text; lint says why.
"""

from __future__ import annotations

import os
from pathlib import Path

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.model.records import Location, Page, Problem
from groundwiki.core.read.pages import empty_page, page_key

RULE = "page-outside-wiki"


def leaves_folder(path: Path | str, root: Path | str) -> bool:
    """Whether a file, symlinks followed, lies outside `root` (itself resolved too)."""
    base = os.path.realpath(root).rstrip(os.sep)
    resolved = os.path.realpath(path)
    return not (resolved == base or resolved.startswith(base + os.sep))


def linked_out_page(path: Path, config: Config) -> Page:
    """The page of a symlink that leaves the wiki folder: a key and a problem, nothing read."""
    rel_path = config.rel(path)
    problem = Problem(
        RULE,
        Location(rel_path, 1, 1),
        "the page is a symlink to a file outside the wiki folder; it is not read or published",
        "copy the text into the wiki folder instead of linking to it; a symlink to another "
        "file inside the wiki folder is allowed",
        "symlink",
    )
    doc_path = path.relative_to(config.docs_dir).as_posix()
    return empty_page(path, rel_path, doc_path, page_key(path), problem)


def outside_files(paths: list[str], root: Path | str) -> set[str]:
    """Which of these files lie outside `root` once symlinks are followed. Each folder is
    resolved once and a file only when it is a link itself, so a site's thousands of files cost
    a few hundred lookups."""
    base = os.path.realpath(root).rstrip(os.sep)
    folders: dict[str, bool] = {}
    found: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        inside = folders.get(folder)
        if inside is None:
            resolved = os.path.realpath(folder)
            inside = folders[folder] = resolved == base or resolved.startswith(base + os.sep)
        if not inside or (os.path.islink(path) and leaves_folder(path, base)):
            found.add(path)
    return found
