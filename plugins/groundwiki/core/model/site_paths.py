"""Where everything lands in the built site: doc paths of generated pages and their URLs.

Page URLs follow MkDocs' rules (`use_directory_urls`), so links written by the renderer, the
graph, the knowledge index and the redirects all agree with the pages MkDocs writes.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

GENERATED_DIR = "groundwiki"
GRAPH_PAGE = f"{GENERATED_DIR}/graph.md"
LINT_PAGE = f"{GENERATED_DIR}/lint.md"
TAGS_PAGE = f"{GENERATED_DIR}/tags.md"
INDEX_PAGE = f"{GENERATED_DIR}/a-z.md"
GRAPH_JSON = f"{GENERATED_DIR}/graph.json"
LINT_JSON = f"{GENERATED_DIR}/lint.json"
PAGES_JSON = f"{GENERATED_DIR}/pages.json"
EXPLORER_JSON = f"{GENERATED_DIR}/explorer.json"  # the folder tree (core/render/explorer.py)
# Each page's local graph, in shards of graph.json's shape: a page reads its shard, kilobytes,
# not the whole graph (4 MB on a 6,571-note vault).
LOCAL_GRAPHS = f"{GENERATED_DIR}/local-graphs"
ASSETS_DIR = f"{GENERATED_DIR}/assets"
# The parts of an overview page too large for one page (core/render/generated.py): beside the
# page's own URL (`groundwiki/lint/` → `groundwiki/lint/folder-notes/`), each named with a
# prefix, so no part is named `index` and lands on the overview page itself.
LINT_PARTS = f"{GENERATED_DIR}/lint"
INDEX_PARTS = f"{GENERATED_DIR}/a-z"
TAGS_PARTS = f"{GENERATED_DIR}/tags"


def local_graph_file(node: str) -> str:
    """The shard holding the local graph of the page whose graph node is `node`: one of 256,
    picked by a hash of the node's id, so that a page's HTML names its shard whatever the size
    of the wiki (and a page's shard never moves when others come or go)."""
    digest = hashlib.sha1(node.encode("utf-8")).hexdigest()
    return f"{LOCAL_GRAPHS}/{digest[:2]}.json"


@lru_cache(maxsize=65536)
def page_url(doc_path: str, use_directory_urls: bool = True) -> str:
    """`guide/linting.md` → `guide/linting/` (or `guide/linting.html`); index pages → their folder.

    Always a path: a doc named like a URL (`javascript:x.md`) gets `./` in front."""
    stem, _ = posixpath.splitext(doc_path)
    folder, name = posixpath.split(stem)
    if name in {"index", "README"}:
        return path_only(f"{folder}/") if folder else ""
    if use_directory_urls:
        return path_only(f"{stem}/")
    return path_only(f"{stem}.html")


@dataclass(frozen=True)
class HomePages:
    """The pages at the top of docs_dir that a reader may expect at the site root: the first of
    `index.md`, `README.md`, `Home.md` (any case) is the root, and links to the others."""

    root: str | None
    others: tuple[str, ...] = ()


def home_pages(doc_paths: Iterable[str]) -> HomePages:
    top = sorted(path for path in doc_paths if "/" not in path)
    found: list[str] = [name for name in ("index.md", "README.md") if name in top]
    found += [path for path in top if path.lower() == "home.md"][:1]
    return HomePages(found[0], tuple(found[1:])) if found else HomePages(None)


def moved_pages(doc_paths: Iterable[str], use_directory_urls: bool = True) -> dict[str, str]:
    """Pages whose URL is not the one their file name gives, by doc path.

    MkDocs serves `README.md` as its folder's index, and drops it when an `index.md` sits
    beside it: groundwiki publishes it at `README/` instead. `Home.md` is the site root when
    there is neither an `index.md` nor a `README.md` at the top."""
    paths = set(doc_paths)
    moved: dict[str, str] = {}
    for path in paths:
        folder, name = posixpath.split(path)
        if name == "README.md" and posixpath.join(folder, "index.md") in paths:
            stem = path[: -len(".md")]
            moved[path] = path_only(f"{stem}/" if use_directory_urls else f"{stem}.html")
    root = home_pages(paths).root
    if root is not None and root.lower() == "home.md":
        moved[root] = ""
    return moved


def dest_uri(url: str) -> str:
    """The file MkDocs writes for a page URL: `README/` → `README/index.html`, `` → `index.html`."""
    return f"{url}index.html" if url == "" or url.endswith("/") else url


@dataclass(frozen=True)
class SiteLayout:
    raw_prefix: str = "raw-sources"
    use_directory_urls: bool = True
    # Pages whose URL is not the one their file name gives (see `moved_pages`), by doc path.
    moved: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def for_pages(
        cls, raw_prefix: str, use_directory_urls: bool, doc_paths: Iterable[str]
    ) -> SiteLayout:
        """The layout of a site built from these page files (doc paths)."""
        moved = moved_pages(doc_paths, use_directory_urls)
        return cls(raw_prefix, use_directory_urls, tuple(sorted(moved.items())))

    @cached_property
    def _moved(self) -> Mapping[str, str]:
        return dict(self.moved)

    def url(self, doc_path: str) -> str:
        """A doc's URL relative to the site root."""
        moved = self._moved.get(doc_path) if self.moved else None
        return moved if moved is not None else page_url(doc_path, self.use_directory_urls)

    def source_doc(self, source_path: str) -> str:
        """The generated page of a raw source: `raw-sources/notes/a.md` → `raw-sources/notes/a.md.md`."""
        return f"{self.raw_prefix}/{source_path}.md"

    def source_url(self, source_path: str) -> str:
        return self.url(self.source_doc(source_path))

    def href(self, from_doc: str, to_url: str, fragment: str | None = None) -> str:
        """A link from the page built from `from_doc` to a site-root-relative URL."""
        link = relative_url(self.url(from_doc), to_url)
        return f"{link}#{fragment}" if fragment else link

    def root_from(self, from_doc: str) -> str:
        """The site root as seen from a page: `../../` for `guide/linting/`."""
        return relative_url(self.url(from_doc), "") or "./"


@lru_cache(maxsize=65536)
def relative_url(from_url: str, to_url: str) -> str:
    """Relative link between two site-root-relative URLs (a trailing `/` is a folder).

    Plain string work on URL parts (no filesystem, unlike `posixpath.relpath`), memoised: a
    build asks for the same few thousand pairs over and over.
    """
    base = from_url.rstrip("/") if from_url.endswith("/") else posixpath.dirname(from_url)
    base_parts = [part for part in base.split("/") if part not in {"", "."}]
    target_parts = [part for part in to_url.rstrip("/").split("/") if part not in {"", "."}]
    common = 0
    for left, right in zip(base_parts, target_parts, strict=False):
        if left != right:
            break
        common += 1
    parts = [".."] * (len(base_parts) - common) + target_parts[common:]
    link = "/".join(parts)
    if to_url.endswith("/") or to_url == "":
        link = f"{link}/" if link else "./"
    return path_only(link or "./")


# A colon before the first `/` makes a browser read a scheme (`javascript:alert(1).html` is
# code, not a page); a leading `/` or `\` makes it a path from the host or another host.
_NOT_A_PATH = re.compile(r"^(?:[^/]*:|[/\\])")


def path_only(url: str) -> str:
    """A relative URL that a browser can only read as a path: file names are the writers'
    choice, so a page named `javascript:alert(1).md` is linked as `./javascript:alert(1).html`."""
    return f"./{url}" if _NOT_A_PATH.match(url) else url
