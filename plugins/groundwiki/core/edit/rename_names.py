"""Which page a rename moves and where to: OLD read as one page, NEW as a path in the wiki
folder that names nothing else, and the old name the page keeps as an alias."""

from __future__ import annotations

import posixpath
from pathlib import Path

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.new_page import check_name
from groundwiki.core.edit.rename_plan import PAGE_SUFFIX, RenameRefused
from groundwiki.core.edit.rename_reading import as_doc_name
from groundwiki.core.links.resolver import normalise
from groundwiki.core.model.records import Page
from groundwiki.core.wiki.compiled import Wiki


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


def check_free(wiki: Wiki, page: Page, new_doc: str) -> None:
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


def alias_to_add(wiki: Wiki, page: Page, new_doc: str) -> str | None:
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
