"""Site URLs of pages, computed the way MkDocs computes them, so the graph and index link correctly."""

from __future__ import annotations

import posixpath
from functools import lru_cache


@lru_cache(maxsize=65536)
def page_url(doc_path: str, use_directory_urls: bool = True) -> str:
    """`guide/linting.md` → `guide/linting/` (or `guide/linting.html`); index pages → their folder."""
    stem, _ = posixpath.splitext(doc_path)
    folder, name = posixpath.split(stem)
    if name in {"index", "README"}:
        return f"{folder}/" if folder else ""
    if use_directory_urls:
        return f"{stem}/"
    return f"{stem}.html"
