"""The overview pages of the whole real vault (../shared/vaults/obsidian-hub, 6,571 notes,
issue 31) each hold at most `PAGE_BYTES` of content, so that no generated HTML page reaches
500 KB once the theme is around it (about 11 KB with a compact navigation): the lint report (4.7
MB on one page before) and the A–Z index (0.76 MB) are split, every finding and every note on
exactly one part; every tag chip's anchor is on the tags page. The vault is read, never written
(its mkdocs.yml is a temp file)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.config.site_options import PAGE_BYTES
from groundwiki.core.lint import run_lint
from groundwiki.core.model.site_paths import INDEX_PAGE, LINT_PAGE, TAGS_PAGE
from groundwiki.core.render.generated import (
    index_pages,
    lint_pages,
    rendered_bytes,
    tag_anchor,
    tags_pages,
)
from helpers.edit_walk import VAULT

# Compiling the vault takes most of a minute beside other work.
pytestmark = [
    pytest.mark.long,
    pytest.mark.skipif(not VAULT.is_dir(), reason="the obsidian-hub vault is not here"),
]
# Under 500 KB with the theme's page around the content (11 KB on the vault's pages).
assert PAGE_BYTES <= 450_000


def test_no_overview_page_of_the_vault_outgrows_the_budget(tmp_path: Path) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump({"site_name": "vault", "docs_dir": str(VAULT)}))
    wiki = compile_wiki(load_config(config))
    report = run_lint(wiki)
    layout = wiki.layout
    assert len(wiki.pages) > 6000 and len(report.findings) > 6000

    lint = lint_pages(wiki, report, layout)
    listings = {**index_pages(wiki, layout), **tags_pages(wiki, layout)}
    sizes = {doc: rendered_bytes(text) for doc, text in lint.items()}
    sizes |= {doc: rendered_bytes(page) for doc, page in listings.items()}
    assert {LINT_PAGE, INDEX_PAGE, TAGS_PAGE} <= sizes.keys()
    assert max(sizes.values()) <= PAGE_BYTES, max(sizes.items(), key=lambda item: item[1])

    # The report is split, and each finding is on one part.
    parts = [text for doc, text in lint.items() if doc != LINT_PAGE]
    assert len(parts) > 10
    listed = sum(len(re.findall(r'<li class="gw-finding gw-', text)) for text in parts)
    assert listed == len(report.findings)
    # The A–Z index is split by letter, each page on one part (its listing is a late slot).
    letters = [page for doc, page in listings.items() if doc.startswith("groundwiki/a-z/")]
    assert len(letters) > 20
    assert sum("".join(p.late_slots.values()).count("<dt>") for p in letters) == len(wiki.pages)
    # Every tag a page shows links to its heading on the tags page.
    tags = listings[TAGS_PAGE].markdown
    missing = {tag for p in wiki.pages.values() for tag in p.tags} - {
        tag
        for tag in {t for p in wiki.pages.values() for t in p.tags}
        if f'id="{tag_anchor(tag)}"' in tags
    }
    assert missing == set()
