"""A test collection as a groundwiki: one page per document, so the real indexer and query
engine rank it exactly as they rank a wiki.

Each page is what a writer would put in a wiki: the document's title in the frontmatter and its
full text as the body (title included once, as the outside baselines see it); its key comes from
the document ID. No summary is written: the wiki derives one from the body's first sentence
(`missing_summary: derive`), as it does for a user's page without one, so the page vectors and
the summary field are the ones a served wiki of the same pages has.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from groundwiki.core.edit.writer import page_text as wiki_page_text
from groundwiki.core.edit.writer import write_mkdocs_config

from groundwiki_sidecar.evaluation.collection import Collection, Document

_NOT_KEY = re.compile(r"[^a-z0-9]+")


def page_keys(documents: tuple[Document, ...]) -> dict[str, str]:
    """Document ID -> page key: lower-case letters, digits and dashes, unique (a hash suffix
    tells apart IDs that only differ in case or punctuation)."""
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for doc in documents:
        key = _NOT_KEY.sub("-", doc.id.lower()).strip("-") or "doc"
        if key in taken:
            key = f"{key}-{hashlib.sha256(doc.id.encode()).hexdigest()[:8]}"
        taken.add(key)
        keys[doc.id] = key
    return keys


def page_text(doc: Document) -> str:
    body = doc.full_text
    title = " ".join(doc.title.split()).rstrip(" .") or " ".join(body.split()[:8]) or doc.id
    # The text is prose, not Markdown: the core's writer keeps whatever wiki syntax it holds
    # (links, tags, headings, comments, block ids) as text.
    return wiki_page_text({"title": title}, body)


def write_corpus_wiki(
    collection: Collection, root: Path, sidecar: dict[str, object]
) -> dict[str, str]:
    """Writes the wiki under `root` (mkdocs.yml, wiki/, raw-sources/) and returns page key ->
    document ID. A wiki already there (a kept evaluation folder) is brought up to date: a file
    whose text is the same is not written again, so its indexes and vectors stay valid, and
    the pages of documents no longer in the collection (another slice) are deleted."""
    (root / "wiki").mkdir(parents=True, exist_ok=True)
    (root / "raw-sources").mkdir(exist_ok=True)
    config = {
        "site_name": f"evaluation: {collection.name}",
        "docs_dir": "wiki",
        "plugins": [{"groundwiki": {"sidecar": sidecar}}],
    }
    write_mkdocs_config(root / "mkdocs.yml", config)
    keys = page_keys(collection.documents)
    wanted = {root / "wiki" / f"{keys[doc.id]}.md": doc for doc in collection.documents}
    for stale in set((root / "wiki").glob("*.md")) - set(wanted):
        stale.unlink()
    for path, doc in wanted.items():
        _write_if_changed(path, page_text(doc))
    return {key: doc_id for doc_id, key in keys.items()}


def _write_if_changed(path: Path, text: str) -> None:
    # An unchanged page keeps its modification time: the sync then skips it without reading.
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except FileNotFoundError:
        pass
    path.write_text(text, encoding="utf-8")
