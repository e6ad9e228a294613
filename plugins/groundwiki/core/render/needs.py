"""What a wiki's pages need of the reader's browser beyond the site's own script: mermaid for a
diagram, KaTeX for a formula. A page needs mermaid when it holds a fence whose language is
`mermaid`, and KaTeX when it holds a `$...$` or `$$...$$` formula (Obsidian's syntax); the site
loads each only when some page needs it.

Told from each page's body, already in memory: a substring test spares nearly every page the
pattern (`mermaid`, `$`), and a page's answer is kept while the compile keeps the page object,
so a rebuild looks at the pages an edit read again, not at the whole wiki.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from groundwiki.core.model.records import Page
from groundwiki.core.render.body.code import has_math

MERMAID = "mermaid"
MATH = "math"

# A fence whose language is mermaid, as superfences reads one (```mermaid, ``` {.mermaid}),
# in a quote or a list too. Fences inside other code count as well: a library loaded for
# nothing costs less than a diagram fetched from a CDN.
_MERMAID_FENCE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})[ \t]*\{?[ \t]*\.?mermaid(?![\w-])", re.M)


def page_needs(body: str) -> frozenset[str]:
    """What a page's body needs: `MERMAID`, `MATH`, both or neither."""
    found: set[str] = set()
    if "mermaid" in body and _MERMAID_FENCE.search(body):
        found.add(MERMAID)
    if has_math(body):
        found.add(MATH)
    return frozenset(found)


class WikiNeeds:
    """What the pages of a build need, each page's answer kept across the builds of a server
    while the compile keeps the page (an unchanged file's page is the same object)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Page, frozenset[str]]] = {}
        self.last: frozenset[str] | None = None  # the last build's answer
        self.changed = False  # this build's answer is not the last build's

    def of(self, pages: Iterable[Page]) -> frozenset[str]:
        known: dict[int, tuple[Page, frozenset[str]]] = {}
        needs: set[str] = set()
        for page in pages:
            entry = self._known.get(id(page))
            if entry is None or entry[0] is not page:
                entry = (page, page_needs(page.body))
            known[id(page)] = entry
            needs |= entry[1]
        self._known = known
        found = frozenset(needs)
        self.changed, self.last = self.last is not None and found != self.last, found
        return found
