"""A spawned lexical index writer (`segment_workers.py`): analyses the documents it is sent and
writes them as one new segment of the index, then sends the segment's description back. Run as
`python -m groundwiki_sidecar.index.segment_worker`; it speaks pickle over its standard input
and output with the process that started it, and nothing else. It takes no lock: the process
that started it holds the index's, and lists the segment in its own commit."""

from __future__ import annotations

import pickle
import sys

from groundwiki.core.files.forking import die_with_parent
from whoosh import index
from whoosh.writing import SegmentWriter

from groundwiki_sidecar.index.terms import analysed

LIMIT_MB = 128  # postings held in memory before they spill to temporary files


def main() -> int:
    die_with_parent()  # no worker outlives the sidecar that started it
    folder, indexname, docs, text_fields = pickle.load(sys.stdin.buffer)
    ix = index.open_dir(folder, indexname=indexname)
    writer = SegmentWriter(ix, _lk=False, limitmb=LIMIT_MB)
    analysed(writer.schema, docs, text_fields)
    for doc in docs:
        writer.add_document(**doc)
    # Written and closed; the shared temporary folder is left to the writer holding the lock.
    segment = writer._finalize_segment()
    pickle.dump(segment, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
