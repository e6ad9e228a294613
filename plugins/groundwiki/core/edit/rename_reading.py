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

import multiprocessing
import os
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.evidence.lock import Lock, read_lock
from groundwiki.core.files.file_cache import walk
from groundwiki.core.files.forking import can_fork, die_with_parent
from groundwiki.core.model.records import Page
from groundwiki.core.read.frontmatter import check_contract, split_page
from groundwiki.core.read.page_reader import read_pages
from groundwiki.core.read.pages import bare_page, page_key
from groundwiki.core.read.provenance import PathGuard
from groundwiki.core.read.symlinks import leaves_folder, linked_out_page
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import assign_keys

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


def _stub(path: Path, doc_path: str, rel_path: str) -> Page:
    """A page known by its path only: its file name, path and key resolve links to it."""
    return bare_page(path, rel_path, doc_path, page_key(path))


_URL_SAFE = re.compile(r"[A-Za-z0-9._~-]*")


@dataclass(frozen=True)
class _Names:
    """Names as their lower-cased words, and whether a text could spell them otherwise:
    decomposed (a word with a letter beyond ASCII) or percent-encoded (a character a URL
    encodes)."""

    words: tuple[tuple[str, ...], ...]
    composed: bool
    encoded: bool


def _names(names: Iterable[str]) -> _Names:
    words = tuple(
        tuple(name.split())
        for name in dict.fromkeys(unicodedata.normalize("NFC", n).lower() for n in names)
        if name.strip()
    )
    flat = [word for name in words for word in name]
    return _Names(
        words,
        composed=not all(word.isascii() for word in flat),
        encoded=not all(_URL_SAFE.fullmatch(word) for word in flat),
    )


def _fits(text: str, names: _Names) -> bool:
    return any(all(word in text for word in name) for name in names.words)


class _Texts:
    """Page files' texts, read once, and whether they mention a name: every word of it, in any
    case, composed or not, percent-encoded or not."""

    def __init__(self) -> None:
        self._texts: dict[Path, str] = {}

    def text(self, path: Path) -> str:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                self._texts[path] = ""
        return self._texts[path]

    def mentions(self, path: Path, names: _Names, *, frontmatter: bool = False) -> bool:
        text = self.text(path)
        if frontmatter:  # generously: up to the next `---`, or the whole file
            if not text.lstrip("\ufeff").startswith("---"):
                return False
            end = text.find("\n---", 3)
            text = text if end < 0 else text[:end]
        text = text.lower()
        if _fits(text, names):
            return True
        if names.composed and not text.isascii():
            text = unicodedata.normalize("NFC", text)
            if _fits(text, names):
                return True
        return names.encoded and "%" in text and _fits(unquote(text), names)


def scoped_wiki(config: Config, old: str, new: str) -> Wiki:
    """The wiki as a rename of OLD to NEW needs it (see the module's docstring)."""
    linked: set[Path] = set()
    others: list[str] = []
    paths = walk(config.docs_dir, suffix=PAGE_SUFFIX, linked=linked, others=others)
    outside = {p for p in linked if leaves_folder(p, config.docs_dir)}
    docs = str(config.docs_dir) + os.sep
    docs_rel = config.rel(config.docs_dir)
    stubs: dict[Path, Page] = {}
    for path in paths:
        doc_path = str(path).removeprefix(docs).replace(os.sep, "/")
        stubs[path] = (
            linked_out_page(path, config)
            if path in outside
            else _stub(path, doc_path, f"{docs_rel}/{doc_path}" if docs_rel != "." else doc_path)
        )
    lock = read_lock(config.lock_path)
    attachments = tuple(sorted(others))
    old_name = as_doc_name(config, old)
    # Pages that mention OLD may link to it: read in full. Pages that mention NEW only in
    # their frontmatter may hold it as an alias: only their frontmatter is read.
    # A path's last part is a file name that every link by that path spells too.
    old_names = {_stem(old_name)}
    new_names = _names([_stem(new)])
    texts = _Texts()
    parsed: dict[Path, Page] = {}
    guard = PathGuard(config.raw_dir)
    for path in paths:
        if path not in outside and texts.mentions(path, new_names, frontmatter=True):
            stubs[path] = _with_aliases(stubs[path], texts.text(path))
    wiki = _build(config, list(stubs.values()), lock, attachments)
    scanned: set[str] = set()
    while True:
        # OLD given as an alias or title names a page that is learnt once the pages that
        # mention OLD are read: then the pages that mention its file name are read too.
        found = wiki.resolver.resolve_name(old_name)
        named = wiki.pages[found.key].path if found is not None else None
        if named is not None:
            old_names.add(named.stem)
        # A page linked out of the wiki is never read: known by its path, it is complete.
        if old_names == scanned and (named is None or named in parsed or named in outside):
            return wiki
        patterns = _names(old_names)
        scanned = set(old_names)
        wanted = [
            p
            for p in paths
            if p not in parsed and p not in outside and (p == named or texts.mentions(p, patterns))
        ]
        parsed.update(zip(wanted, _read(wanted, config, guard, texts), strict=True))
        wiki = _build(config, [parsed.get(p) or stubs[p] for p in paths], lock, attachments)


# Below this many characters to parse, a forked reader costs more than it saves.
_FORK_FROM = 200_000


def _read(paths: list[Path], config: Config, guard: PathGuard, texts: _Texts) -> list[Page]:
    """Read pages in full. The pages that mention a popular name are few and some are huge
    (a list of every plugin): split by size, a second process reads half of the text."""
    sizes = {path: len(texts.text(path)) for path in paths}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if sum(sizes.values()) < _FORK_FROM or cores < 2 or not can_fork():
        return read_pages(paths, config, guard)
    mine: list[Path] = []
    theirs: list[Path] = []
    load = [0, 0]
    for path in sorted(paths, key=lambda p: -sizes[p]):
        side = 0 if load[0] <= load[1] else 1
        (mine, theirs)[side].append(path)
        load[side] += sizes[path]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=context, initializer=die_with_parent) as pool:
        future = pool.submit(_read_all, theirs, config)
        pages = dict(zip(mine, read_pages(mine, config, guard), strict=True))
        pages.update(zip(theirs, future.result(), strict=True))
    return [pages[path] for path in paths]


def _read_all(paths: list[Path], config: Config) -> list[Page]:
    return read_pages(paths, config, PathGuard(config.raw_dir))


def _stem(name: str) -> str:
    return posixpath.basename(name.strip().replace("\\", "/")).removesuffix(PAGE_SUFFIX)


def _with_aliases(stub: Page, text: str) -> Page:
    """The stub with the aliases its frontmatter declares, read as the compile reads them."""
    split = split_page(text, stub.rel_path)
    data, _ = check_contract(split.data, split.field_lines, stub.rel_path)
    aliases = tuple(dict.fromkeys(str(a).strip() for a in data.get("aliases") or []))
    return replace(stub, aliases=aliases)


def _build(config: Config, pages: list[Page], lock: Lock, attachments: tuple[str, ...]) -> Wiki:
    all_pages = assign_keys(pages)
    by_key: dict[str, Page] = {}
    for page in all_pages:
        by_key.setdefault(page.key, page)
    return Wiki(config, by_key, all_pages, {}, lock, attachments=attachments)
