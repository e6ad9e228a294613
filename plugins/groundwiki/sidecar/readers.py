"""Whoosh searchers that follow the index's commits, reusing the segment readers still valid.

Whoosh 2.7's own `Searcher.refresh()` serves deleted documents on an index that is edited:

- it reuses an open segment reader whenever the segment's ID is unchanged. A commit that
  deletes documents from an existing segment (every update does) records the deletions in a new
  `Segment` object with the same ID, so the reused reader keeps the old deletions and a replaced
  or deleted document still matches;
- it keeps every segment of the old reader that the new commit no longer lists, so the segments
  a merge replaced stay in, and the documents they held are found again.

`reopen` reads the latest table of contents and reuses an open segment reader only when its
segment ID and its deleted documents are both unchanged; every other segment is opened anew.
"""

from __future__ import annotations

import time
from typing import Any

from whoosh.index import TOC, FileIndex
from whoosh.reading import EmptyReader, MultiReader, SegmentReader
from whoosh.searching import Searcher

OPEN_RETRIES = 10  # a commit may delete a merged-away segment's files while they are opened


def reopen(ix: FileIndex, schema: Any, old: Searcher | None) -> Searcher:
    """A searcher of the latest commit of `ix`. The old searcher's readers that are not reused
    are closed, so the old searcher must not be used afterwards (it is this thread's own)."""
    reusable = {} if old is None else {r.segment().segment_id(): r for r in _leaves(old)}
    for attempt in range(OPEN_RETRIES):
        toc = TOC.read(ix.storage, ix.indexname, schema=schema)
        opened: list[Any] = []
        readers: list[Any] = []
        try:
            for segment in toc.segments:
                held = reusable.get(segment.segment_id())
                if held is not None and _same_deletions(held.segment(), segment):
                    readers.append(held)
                else:
                    reader = SegmentReader(ix.storage, schema, segment, generation=toc.generation)
                    opened.append(reader)
                    readers.append(reader)
        except OSError:
            for reader in opened:
                reader.close()
            if attempt == OPEN_RETRIES - 1:
                raise
            time.sleep(0.05)
            continue
        kept = {id(r) for r in readers}
        for reader in reusable.values():
            if id(reader) not in kept:
                reader.close()
        if not readers:
            reader = EmptyReader(schema)
        elif len(readers) == 1:
            reader = readers[0]
        else:
            reader = MultiReader(readers, generation=toc.generation)
        return Searcher(reader, fromindex=ix)
    raise AssertionError("unreachable")


def _leaves(searcher: Searcher) -> list[Any]:
    return [r for r, _ in searcher.reader().leaf_readers() if r.segment() is not None]


def _same_deletions(before: Any, now: Any) -> bool:
    if before.deleted_count() != now.deleted_count():
        return False
    return before.deleted_count() == 0 or set(before.deleted_docs()) == set(now.deleted_docs())
