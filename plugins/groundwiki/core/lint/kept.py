"""What the whole-wiki lint rules read of every page, kept from the last compile of a
long-running process (`groundwiki lsp`, the sidecar) and updated for what changed, so that a
keystroke's lint does not look at all 10,000 pages again. Each is exactly what a compile from
scratch makes (the random-edit property test, tests/core/test_incremental_compile.py,
compares them).

Kept in `Wiki.derived` under a name of this module's: the last compile's, and only while it is
the shared scope's view (`previous` is the compile before; a user's view has none)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from groundwiki.core.model.records import Page
from groundwiki.core.wiki.compiled import Wiki

V = TypeVar("V")
T = TypeVar("T")


def counted(
    wiki: Wiki,
    name: str,
    values: Mapping[str, V],
    count: Callable[[V], Iterable[Hashable]],
    changed: Iterable[str] | None = None,
) -> Counter[Hashable]:
    """How often each thing is named by the values of all page files (`values`: by doc path,
    e.g. `Wiki.links_by_page`), from the last compile's counts: only a value that is not the
    object the last compile counted is counted again (its old count taken off). A thing no
    longer named has no count, so `in` means named at least once. `changed`: when the page
    files are those of the last compile (`Wiki.changed_pages`), the names whose values may
    differ; only those are compared."""
    previous = wiki.previous
    kept = previous.derived.get(name) if previous is not None and wiki.user is None else None
    counts: Counter[Hashable]
    if kept is not None and changed is not None and wiki.changed_pages is not None:
        old_values, old_counts = kept
        counts = old_counts.copy()
        for doc in changed:
            was, now = old_values.get(doc), values.get(doc)
            if was is not now:
                if was is not None:
                    _take(counts, count(was))
                if now is not None:
                    counts.update(count(now))
    elif kept is None:
        counts = Counter()
        for value in values.values():
            counts.update(count(value))
    else:
        old_values, old_counts = kept
        counts = old_counts.copy()
        get = old_values.get
        for doc, now in values.items():
            was = get(doc)
            if was is not now:
                if was is not None:
                    _take(counts, count(was))
                counts.update(count(now))
        for doc in old_values.keys() - values.keys():
            _take(counts, count(old_values[doc]))
    if wiki.user is None:
        wiki.derived[name] = (values, counts)
    return counts


def _take(counts: Counter[Hashable], things: Iterable[Hashable]) -> None:
    for thing in things:
        left = counts[thing] - 1
        if left > 0:
            counts[thing] = left
        else:
            del counts[thing]


def every_page(wiki: Wiki) -> dict[str, Page]:
    """Every page file of every scope by its path, made once per compile for all the rules."""
    found: dict[str, Page] | None = wiki.derived.get(_EVERY)
    if found is None:
        changed, previous = wiki.changed_pages, wiki.previous
        before = previous.derived.get(_EVERY) if previous is not None else None
        if changed is not None and before is not None:
            # The same files as the last compile's (no user's pages: not scoped), in its order.
            found = dict(before)
            for _, page in changed:
                found[page.rel_path] = page
        else:
            found = {page.rel_path: page for page in wiki.scopes.every_page}
        wiki.derived[_EVERY] = found
    return found


def changed_paths(wiki: Wiki) -> list[str] | None:
    """The paths (from the wiki root) of the page files changed since the last compile, when it
    had the same files (`Wiki.changed_pages`): the keys of `every_page` that may differ."""
    changed = wiki.changed_pages
    return None if changed is None else [page.rel_path for _, page in changed]


_EVERY = "every-page"


def kept_while(wiki: Wiki, name: str, inputs: tuple[object, ...], make: Callable[[], T]) -> T:
    """`make()`, or the last compile's result when every one of `inputs` is the object it was
    made from (a compile keeps an object it did not read again: the lock, the resolver while
    no page's names changed)."""
    previous = wiki.previous
    kept: Any = previous.derived.get(name) if previous is not None and wiki.user is None else None
    if (
        kept is not None
        and len(kept[0]) == len(inputs)
        and all(old is new for old, new in zip(kept[0], inputs, strict=True))
    ):
        wiki.derived[name] = kept
        return kept[1]
    made = make()
    if wiki.user is None:
        wiki.derived[name] = (inputs, made)
    return made
