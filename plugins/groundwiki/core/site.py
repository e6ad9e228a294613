"""Where everything lands in the built site: doc paths of generated pages and their URLs.

Page URLs follow MkDocs' rules (`use_directory_urls`), so links written by the renderer, the
graph, the knowledge index and the redirects all agree with the pages MkDocs writes.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

GENERATED_DIR = "groundwiki"
GRAPH_PAGE = f"{GENERATED_DIR}/graph.md"
LINT_PAGE = f"{GENERATED_DIR}/lint.md"
TAGS_PAGE = f"{GENERATED_DIR}/tags.md"
INDEX_PAGE = f"{GENERATED_DIR}/a-z.md"
GRAPH_JSON = f"{GENERATED_DIR}/graph.json"
LINT_JSON = f"{GENERATED_DIR}/lint.json"
PAGES_JSON = f"{GENERATED_DIR}/pages.json"
ASSETS_DIR = f"{GENERATED_DIR}/assets"


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
class SiteLayout:
    raw_prefix: str = "raw-sources"
    use_directory_urls: bool = True

    def url(self, doc_path: str) -> str:
        """A doc's URL relative to the site root."""
        return page_url(doc_path, self.use_directory_urls)

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
