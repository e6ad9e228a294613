"""Renaming a page: the file moves, every link that reached it is rewritten in its own style, its
old name becomes an alias, and its lock records follow it.

`plan_rename` reads a compiled `Wiki` and plans the whole change into an `Edits` (nothing is
written here). A link is rewritten when it reached the page by its file name, path or key; one
that reached it through an alias or its title still does, and stays as written. A rewritten
target keeps the link's style: a name stays a name, a path from the root stays one, a relative
path is recomputed from the linking page, a Markdown link stays percent-encoded or in `<...>`;
labels, anchors and embeds are not touched. When the page changes folders, its own relative
links are recomputed so they still reach what they reached. Every new spelling is resolved
again as the wiki will stand after the rename, and must land where the old one did.

In a scoped wiki (core/model/scopes.py) a move between scopes changes who sees the page: it is
refused unless asked for (`across_scopes`), and then the plan says who sees it now and lists the
links that lose it (a shared page's link to a page that became a user's own), which stay as
written. The lock records follow the page under its name across scopes (`user:bob/oncall`).

The parts, each in its module: rename_names (which page, which new path, the alias it keeps),
cross_scope (a move across scopes), rename_links (the links rewritten, and where in each file),
rename_plan (what the plan says); this module puts them together, with the lock's records.
"""

from __future__ import annotations

from pathlib import Path

from groundwiki.core.edit.cross_scope import check_scope, lost_links, scope_move, seen_by
from groundwiki.core.edit.edits import Edits
from groundwiki.core.edit.frontmatter_text import (
    FrontmatterUnreadable,
    alias_span,
    read_frontmatter,
)
from groundwiki.core.edit.rename_links import (
    Rewrite,
    apply_spans,
    link_rewrites,
    spans_of,
    wiki_after,
)
from groundwiki.core.edit.rename_names import alias_to_add, check_free, new_doc_path, page_to_rename
from groundwiki.core.edit.rename_plan import RenamePlan, RenameRefused
from groundwiki.core.evidence.lock import LockEntry, render_lock
from groundwiki.core.wiki.compiled import Wiki


def _lock_text(wiki: Wiki, keys: dict[str, str]) -> tuple[str | None, int]:
    """The lock with the records of every page whose lock name (`Page.uid`) changes under its
    new name; `keys` maps the old names to the new."""
    lock = wiki.lock
    moving = [(page, citation) for page, citation in lock.records if page in keys]
    if not moving:
        return None, 0
    lock_file = wiki.config.rel(wiki.config.lock_path)
    if lock.problems:
        raise RenameRefused(
            f"{lock_file} line {lock.problems[0].line} cannot be read, and the page's records "
            "there must move: run `groundwiki lock` first"
        )
    entries: dict[tuple[str, str], LockEntry] = {}
    for (page, citation), record in lock.records.items():
        if page not in keys:
            entries[(page, citation)] = LockEntry(page, citation, record.sha256, record.first_line)
    for page, citation in moving:
        record = lock.records[(page, citation)]
        key = keys[page]
        entries[(key, citation)] = LockEntry(key, citation, record.sha256, record.first_line)
    return render_lock(entries.values()), len(moving)


def plan_rename(
    wiki: Wiki, old: str, new: str, edits: Edits, *, across_scopes: bool = False
) -> RenamePlan:
    """Plan renaming the page OLD names to NEW into `edits`; refuse (`RenameRefused`) with
    nothing planned when NEW is taken, OLD names no single page, or NEW is in another scope
    and `across_scopes` is not given."""
    config = wiki.config
    page = page_to_rename(wiki, old)
    new_doc = new_doc_path(config, page, new)
    check_free(wiki, page, new_doc)
    move = scope_move(config, page, new_doc)
    check_scope(wiki, page, new_doc, move, across_scopes)
    alias = alias_to_add(wiki, page, new_doc)
    after = wiki_after(wiki, page, new_doc, alias, move)
    rewrites, left = link_rewrites(wiki, page, after)
    lost = lost_links(wiki, page, after.page.rel_path, move)
    # No spelling reaches the page from where it can no longer be seen: left as written.
    losing = {id(item.link) for item, _ in lost}
    rewrites = [rewrite for rewrite in rewrites if id(rewrite.item.link) not in losing]
    by_file: dict[Path, list[Rewrite]] = {}
    for rewrite in rewrites:
        by_file.setdefault(rewrite.item.page.path, []).append(rewrite)
    by_file.setdefault(page.path, [])
    texts: dict[Path, str] = {}
    total = 0
    linking = 0
    for path, planned in by_file.items():
        text = edits.read(path)
        spans, count = spans_of(text, planned, left)
        if path == page.path and alias is not None:
            try:
                spans.append(alias_span(text, read_frontmatter(text), alias))
            except FrontmatterUnreadable as exc:
                raise RenameRefused(
                    f"{page.rel_path}: {exc}, so its old name cannot be added to its aliases; "
                    "fix it first (groundwiki lint shows where)"
                ) from None
        total += count
        linking += 1 if count else 0
        texts[path] = apply_spans(text, spans)
    lock_text, lock_rows = _lock_text(wiki, after.uids)
    for path, text in texts.items():
        edits.write(path, text)
    edits.move(page.path, after.page.path)
    if lock_text is not None:
        edits.write(config.lock_path, lock_text)
    return RenamePlan(
        page.rel_path,
        after.page.rel_path,
        page.key,
        after.page.key,
        total,
        linking,
        alias,
        lock_rows,
        tuple(sorted(left, key=lambda item: (item.path, item.line))),
        *after.lock_names,
        move.old,
        move.new,
        seen_by(page.rel_path, move) if move.across else None,
        tuple(sorted((left for _, left in lost), key=lambda item: (item.path, item.line))),
    )
