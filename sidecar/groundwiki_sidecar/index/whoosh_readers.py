"""Whoosh searchers that follow the index's commits, reusing the segment readers still valid.

Whoosh 2.7's own `Searcher.refresh()` serves deleted documents on an index that is edited:

- it reuses an open segment reader whenever the segment's ID is unchanged. A commit that
  deletes documents from an existing segment (every update does) records the deletions in a new
  `Segment` object with the same ID, so the reused reader keeps the old deletions and a replaced
  or deleted document still matches;
- it keeps every segment of the old reader that the new commit no longer lists, so the segments
  a merge replaced stay in, and the documents they held are found again.

`reopen` reads the latest table of contents and reuses an open segment reader as it is when its
segment ID and its deleted documents are both unchanged. When only the deletions changed, the
segment's files are the same (Whoosh keeps deletions in the table of contents), so the reader's
terms and storage move to a reader with the new deletions: opening them again copies the
segment's terms and postings into memory (some 35 ms per thread and commit for the one large
segment of a 10,000-page wiki, which nearly every edit deletes from). Every other segment is
opened anew.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from whoosh.index import TOC, FileIndex
from whoosh.reading import EmptyReader, MultiReader, SegmentReader
from whoosh.searching import Searcher

# A commit may delete the table of contents or a merged-away segment's files while they are
# opened.
OPEN_RETRIES = 10


def reopen(ix: FileIndex, schema: Any, old: Searcher | None) -> Searcher:
    """A searcher of the latest commit of `ix`. The old searcher's readers that are not reused
    are closed, so the old searcher must not be used afterwards (it is this thread's own)."""
    reusable = {} if old is None else {r.segment().segment_id(): r for r in _leaves(old)}
    for attempt in range(OPEN_RETRIES):
        opened: list[Any] = []
        readers: list[Any] = []
        try:
            # A commit deletes the previous table of contents, too: it can go between Whoosh
            # listing the latest one and opening it.
            toc = TOC.read(ix.storage, ix.indexname, schema=schema)
            for segment in toc.segments:
                held = reusable.get(segment.segment_id())
                if held is None:
                    reader = SegmentReader(ix.storage, schema, segment, generation=toc.generation)
                    opened.append(reader)
                    readers.append(reader)
                elif _same_deletions(held.segment(), segment):
                    readers.append(held)
                else:
                    readers.append((held, segment))  # moved below, once no open can fail
        except OSError:
            for reader in opened:
                reader.close()
            if attempt == OPEN_RETRIES - 1:
                raise
            time.sleep(0.05)
            continue
        readers = [
            _with_deletions(r[0], r[1], toc.generation) if isinstance(r, tuple) else r
            for r in readers
        ]
        kept = {id(r) for r in readers}
        for reader in reusable.values():
            if id(reader) not in kept and not reader.is_closed:
                reader.close()
        if not readers:
            reader = EmptyReader(schema)
        elif len(readers) == 1:
            reader = readers[0]
        else:
            reader = MultiReader(readers, generation=toc.generation)
        return Searcher(reader, fromindex=ix)
    raise AssertionError("unreachable")


def _with_deletions(held: SegmentReader, segment: Any, generation: int) -> SegmentReader:
    """A reader of `held`'s segment files with the deletions `segment` records: the terms reader
    and storage move over, only the per-document reader (which holds the deletions) is new.
    `held` is closed without closing what moved."""
    fresh = copy.copy(held)
    fresh.__dict__.pop("deleted_docs_set", None)  # Whoosh caches it on first use
    fresh._segment = segment
    fresh._gen = generation
    fresh._perdoc = held.codec().per_document_reader(held.storage(), segment)
    held._perdoc.close()
    held.is_closed = True
    return fresh


def _leaves(searcher: Searcher) -> list[Any]:
    return [r for r, _ in searcher.reader().leaf_readers() if r.segment() is not None]


def _same_deletions(before: Any, now: Any) -> bool:
    if before.deleted_count() != now.deleted_count():
        return False
    return before.deleted_count() == 0 or set(before.deleted_docs()) == set(now.deleted_docs())
