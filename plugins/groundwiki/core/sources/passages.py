"""A page's body cut into passages, by the chunker that cuts raw sources (`chunking.py`).

A page is found by more than its title, summary and lead: a fact deep in a long page sits in
one of its passages, which the sidecar indexes too and shows as a hit's snippet. The body is cut
at its Markdown headings (as the compile found them, so a `#` line inside a code fence is no
heading) under the same policy as raw sources, and each passage keeps the headings it sits
under and its lines in the page file.

A passage's ID hashes the policy, the page file's path and the passage's text, with the prefix
`pa_` (a raw-source chunk's is `ch_`): the same page gives the same IDs on every machine, and
passages an edit did not touch keep theirs.
"""

from __future__ import annotations

import re

from groundwiki.core.model.records import Heading, Page, Passage
from groundwiki.core.sources.chunking import DEFAULT_POLICY, ChunkPolicy, chunk_text
from groundwiki.core.sources.extract import Extracted

# Passages of unchanged pages, kept across compiles by a long-running process: (page file,
# page key, file hash, policy identity) -> passages. The key is in the passages, and a page's
# key can change without its file changing (another page of the same name appeared).
PassageCache = dict[tuple[str, str, str, str], tuple[Passage, ...]]


_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)


def cache_key(page: Page, policy: ChunkPolicy) -> tuple[str, str, str, str]:
    return (page.rel_path, page.key, page.content_hash, policy.identity)


def page_passages(page: Page, policy: ChunkPolicy = DEFAULT_POLICY) -> tuple[Passage, ...]:
    """The passages of a page's body, in order; none for an empty body."""
    body = page.body
    if not body.strip():
        return ()
    offset = page.body_line - 1  # body line n is file line n + offset
    heading_lines = frozenset(h.line - offset for h in page.headings)
    chunks = chunk_text(page.rel_path, Extracted("markdown", body, heading_lines), policy)
    headings = sorted(page.headings, key=lambda h: h.line)
    passages: list[Passage] = []
    for chunk in chunks:
        if not _COMMENT.sub("", chunk.text).strip():
            continue  # only citation comments: nothing a reader sees, nothing to find
        start = chunk.start_line + offset
        passages.append(
            Passage(
                # The chunker's hash is of the policy, this path and the text, with repeats
                # numbered: the passage takes it under its own prefix.
                id="pa_" + chunk.id.removeprefix("ch_"),
                page=page.key,
                path=page.rel_path,
                heading_path=heading_path(headings, start),
                start_line=start,
                end_line=chunk.end_line + offset,
                text=chunk.text,
                content_hash=chunk.content_hash,
                tokens=chunk.tokens,
            )
        )
    return tuple(passages)


def heading_path(headings: list[Heading], line: int) -> tuple[str, ...]:
    """The texts of the headings a file line sits under, outermost first: each heading on or
    before the line closes the deeper and equal levels before it."""
    stack: list[Heading] = []
    for heading in headings:
        if heading.line > line:
            break
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
    return tuple(h.text for h in stack)
