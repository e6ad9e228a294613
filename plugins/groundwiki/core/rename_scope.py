"""Compiling only what a rename reads, so renaming in a wiki of thousands of pages takes a moment.

A link reaches a page by its file name, path or key only if the link's text holds the page's
file name; names and paths resolve by the page files' paths alone. So the wiki a rename needs is
every page file known by its path, and in full only the pages whose text mentions the old name,
the new one (an alias that would collide), or the page itself: the plan is the one a full
compile gives, at the cost of the pages that mention the name. Mentions are found generously
(every word of the name anywhere in the file, case and Unicode composition ignored,
percent-encoding decoded), which can only read a page too many.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

from .config import Config
from .file_cache import walk
from .links import normalise
from .lock import Lock, read_lock
from .model import Location, Page, Problem
from .page_links import leaves_folder, linked_out_page
from .page_reader import read_pages
from .pages import empty_page, page_key
from .provenance import PathGuard
from .wiki import Wiki, assign_keys

PAGE_SUFFIX = ".md"


def as_doc_name(config: Config, name: str) -> str:
    """A file path given on the command line (`wiki/guide/old.md`, absolute, or from the
    current folder) becomes its path in the wiki folder; anything else is a name as is."""
    name = name.strip().replace("\\", "/")
    for candidate in (Path(name), config.root / name):
        try:
            if candidate.is_file():
                return candidate.resolve().relative_to(config.docs_dir).as_posix()
        except (OSError, ValueError):
            continue
    return name


def _stub(path: Path, config: Config) -> Page:
    """A page known by its path only: its file name, path and key resolve links to it."""
    doc_path = path.relative_to(config.docs_dir).as_posix()
    rel_path = config.rel(path)
    unread = Problem("unreadable-page", Location(rel_path), "", "", "")  # replaced just below
    return replace(empty_page(path, rel_path, doc_path, page_key(path), unread), problems=())


def _folded(text: str) -> str:
    """A file's text as names are compared (case, composition), with percent-encoded names
    decoded too."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    text = text.casefold()
    return text + "\n" + unquote(text) if "%" in text else text


def _mentions(folded: str, names: Iterable[str]) -> bool:
    return any(all(word in folded for word in name.split()) for name in names)


def scoped_wiki(config: Config, old: str, new: str) -> Wiki:
    """The wiki as a rename of OLD to NEW needs it (see the module's docstring)."""
    linked: set[Path] = set()
    others: list[str] = []
    paths = walk(config.docs_dir, suffix=PAGE_SUFFIX, linked=linked, others=others)
    outside = {p for p in linked if leaves_folder(p, config.docs_dir)}
    stubs = {p: linked_out_page(p, config) if p in outside else _stub(p, config) for p in paths}
    lock = read_lock(config.lock_path)
    attachments = tuple(sorted(others))
    old_name = as_doc_name(config, old)
    names = {normalise(old_name), normalise(_stem(old_name)), normalise(_stem(new))}
    texts: dict[Path, str] = {}
    parsed: dict[Path, Page] = {}
    guard = PathGuard(config.raw_dir)
    while True:
        wiki = _build(config, [parsed.get(p) or stubs[p] for p in paths], lock, attachments)
        # OLD given as an alias or title names a page that is learnt once the pages that
        # mention OLD are read: then the pages that mention its file name are read too.
        found = wiki.resolver.resolve_name(old_name)
        named = wiki.pages[found.key].path if found is not None else None
        if named is not None:
            names.add(normalise(named.stem))
        wanted = [
            p
            for p in paths
            if p not in parsed
            and p not in outside
            and (p == named or _mentions(_text_of(p, texts), names))
        ]
        if not wanted:
            return wiki
        parsed.update(zip(wanted, read_pages(wanted, config, guard), strict=True))


def _stem(name: str) -> str:
    return posixpath.basename(name.strip().replace("\\", "/")).removesuffix(PAGE_SUFFIX)


def _text_of(path: Path, texts: dict[Path, str]) -> str:
    if path not in texts:
        try:
            texts[path] = _folded(path.read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            texts[path] = ""
    return texts[path]


def _build(config: Config, pages: list[Page], lock: Lock, attachments: tuple[str, ...]) -> Wiki:
    all_pages = assign_keys(pages)
    by_key: dict[str, Page] = {}
    for page in all_pages:
        by_key.setdefault(page.key, page)
    return Wiki(config, by_key, all_pages, {}, lock, attachments=attachments)
