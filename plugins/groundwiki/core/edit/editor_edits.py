"""The changes the language server offers (`groundwiki lsp`): a rename, and the quick fixes of a
moved citation and of a missing summary. Each is planned by the writers' tools on the editor's
compile and buffers (an open page is changed as the writer sees it, unsaved) and handed back as
whole-file texts and moves, `Planned`, for the editor to apply: nothing is written here.

Positions are the compiler's, 1-based; editor/server.py speaks the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.edit.editor_wiki import link_at
from groundwiki.core.edit.edits import Planned, wiki_edits
from groundwiki.core.edit.frontmatter_text import (
    FrontmatterUnreadable,
    read_frontmatter,
    scalar_field_span,
)
from groundwiki.core.edit.moved import fix_page, relocked
from groundwiki.core.edit.rename import plan_rename
from groundwiki.core.edit.rename_links import apply_spans
from groundwiki.core.edit.rename_plan import PAGE_SUFFIX, RenamePlan
from groundwiki.core.evidence.drift import CitationState
from groundwiki.core.model.records import Page
from groundwiki.core.read.summary import derive_summary
from groundwiki.core.wiki.compiled import Wiki

MOVED = "moved-source"
MISSING_SUMMARY = "missing-summary"


@dataclass(frozen=True)
class RenameTarget:
    """The page a rename at the cursor renames, and the text there the editor highlights (a
    1-based line, column and length) with the name it proposes to change."""

    page: Page
    line: int
    column: int
    length: int
    name: str


def rename_target(
    wiki: Wiki, page: Page, lines: list[str], line: int, column: int
) -> RenameTarget | None:
    """On a link to a page: that page, the link's target highlighted. In the frontmatter: this
    page, the line highlighted. Elsewhere nothing is renamed (a word of prose is no file)."""
    link = link_at(page, lines, line, column)
    if link is not None:
        found = wiki.resolve(link, page)
        if found is None or found.key not in wiki.pages or link.kind == "ref" or not link.target:
            return None
        target = wiki.pages[found.key]
        text = lines[line - 1]
        at = text.find(link.target, link.at.column - 1)
        start = at + 1 if at >= 0 else link.at.column
        length = len(link.target) if at >= 0 else len(link.raw)
        return RenameTarget(target, line, start, length, target.path.stem)
    if _in_frontmatter(lines, line) and wiki.is_canonical(page):
        return RenameTarget(page, line, 1, len(lines[line - 1]), page.path.stem)
    return None


def _in_frontmatter(lines: list[str], line: int) -> bool:
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return False
    for number, text in enumerate(lines[1:], start=2):
        if text.rstrip() == "---":
            return line <= number
    return False


def rename_changes(
    wiki: Wiki, page: Page, new: str, buffers: Mapping[Path, str]
) -> tuple[RenamePlan, list[Planned]]:
    """`groundwiki rename` of the page to NEW, planned (raises `RenameRefused` as the command
    does: NEW taken, ambiguous, in another scope)."""
    edits = wiki_edits(wiki.config, buffers)
    old = page.doc_path.removesuffix(PAGE_SUFFIX)  # its path: names this one page
    plan = plan_rename(wiki, old, new, edits)
    return plan, edits.planned()


def moved_fix(
    wiki: Wiki, state: CitationState, buffers: Mapping[Path, str]
) -> list[Planned] | None:
    """`groundwiki lock --fix-moved` for one citation: its range where the text now stands, and
    the lock's record moved with it; None when the citation is not where the page says."""
    if wiki.lock.problems:
        return None  # the lock cannot be rewritten without losing its unreadable lines
    edits = wiki_edits(wiki.config, buffers)
    fixes = fix_page([state], edits)
    if not fixes:
        return None
    edits.write(wiki.config.lock_path, relocked(wiki, fixes))
    return edits.planned()


def summary_fix(wiki: Wiki, page: Page, buffers: Mapping[Path, str]) -> list[Planned] | None:
    """The page's first sentence written as its `summary`; None when its body has no prose to
    take one from (the writer must say it: no placeholder) or its frontmatter is unreadable."""
    summary = page.summary if page.summary_derived else derive_summary(page.body)
    if not summary:
        return None
    edits = wiki_edits(wiki.config, buffers)
    try:
        text = edits.read(page.path)
        span = scalar_field_span(text, read_frontmatter(text), "summary", summary)
    except (FrontmatterUnreadable, GroundwikiError, OSError):
        return None
    edits.write(page.path, apply_spans(text, [span]))
    return edits.planned()


def moved_states(wiki: Wiki, page: Page) -> list[CitationState]:
    """The page's citations whose text moved, which `moved_fix` can correct."""
    return [s for s in wiki.states_of(page) if s.status == "moved" and s.moved_to is not None]
