"""A spawned page reader (`page_workers.py`): reads the page files it is sent and sends the
pages back. Run as `python -m groundwiki.core.read.page_worker`; it speaks pickle over its
standard input and output with the process that started it, and nothing else: frames of a mark
and a count (how many pages it has read, every PROGRESS_EVERY pages), then an answer frame and
the pages, pickled."""

from __future__ import annotations

import pickle
import struct
import sys

from groundwiki.core.files.forking import die_with_parent
from groundwiki.core.read.pages import read_page
from groundwiki.core.read.provenance import PathGuard

FRAME = struct.Struct(">cI")  # a mark, a count
PROGRESS = b"p"  # pages read so far
ANSWER = b"a"  # the pickled pages follow, to the end of the stream
PROGRESS_EVERY = 100


def main() -> int:
    die_with_parent()  # no worker outlives the sidecar that started it
    config, paths = pickle.load(sys.stdin.buffer)
    guard = PathGuard(config.raw_dir)
    out = sys.stdout.buffer
    pages = []
    for path in paths:
        pages.append(read_page(path, config, guard))
        if len(pages) % PROGRESS_EVERY == 0:
            out.write(FRAME.pack(PROGRESS, len(pages)))
            out.flush()
    out.write(FRAME.pack(ANSWER, len(pages)))
    pickle.dump(pages, out, protocol=pickle.HIGHEST_PROTOCOL)
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
