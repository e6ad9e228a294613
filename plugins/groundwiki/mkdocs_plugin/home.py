"""The home pages at the top of docs_dir in the MkDocs file list: `index.md`, `README.md` or
`Home.md` is the site root, and each of them is published where `SiteLayout.url` says.

MkDocs serves a `README.md` as its folder's index, and drops it when an `index.md` is beside
it; `Home.md` it serves at `Home/`. The core's layout decides otherwise (`core.site`); this
module moves the files to agree, and gives the site root its links to the other home pages.
"""

from __future__ import annotations

import logging
import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from groundwiki.core.model.records import Page
from groundwiki.core.model.site_paths import SiteLayout, dest_uri, home_pages
from groundwiki.core.render.generated import home_links
from groundwiki.core.wiki.compiled import Wiki

# Logged while MkDocs lists the files, before any plugin can act: groundwiki publishes that
# README.md at README/, so the warning is false, and under `--strict` it fails the build.
_README_EXCLUDED = re.compile(
    r"^Excluding '(?:.*/)?README\.md' from the site because it conflicts with '(?:.*/)?index\.md'\.$"
)


class _KeptReadme(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _README_EXCLUDED.match(record.getMessage())


_FILES_LOG = logging.getLogger("mkdocs.structure.files")
if not any(isinstance(f, _KeptReadme) for f in _FILES_LOG.filters):
    _FILES_LOG.addFilter(_KeptReadme())


def place_home_pages(files: Files, config: MkDocsConfig, layout: SiteLayout) -> None:
    """Give each moved page (a README.md beside an index.md, a Home.md that is the root) the
    destination its URL in the layout names; put back the README.md files MkDocs dropped."""
    for doc_path, url in layout.moved:
        file = files.get_file_from_path(doc_path)
        if file is None:
            if not doc_path.endswith("README.md"):
                continue
            # Left UNDEFINED, MkDocs applies the writer's exclude_docs and drafts to it.
            file = File(doc_path, config.docs_dir, config.site_dir, config.use_directory_urls)
            files.append(file)
        file.dest_uri = dest_uri(url)
        for derived in ("url", "abs_dest_path"):  # cached from the old destination
            file.__dict__.pop(derived, None)


def home_page_links(wiki: Wiki, pages_by_doc: dict[str, Page]) -> dict[str, str]:
    """The Markdown the site root ends with, by its src_uri: links to the other home pages at
    the top of the wiki, which nothing else may reach."""
    home = home_pages(pages_by_doc)
    if not home.root:
        return {}
    return {home.root: home_links(wiki, home.root, home.others, wiki.layout)}
