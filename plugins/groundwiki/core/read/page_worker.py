"""A spawned page reader (`page_workers.py`): reads the page files it is sent and sends the
pages back. Run as `python -m groundwiki.core.read.page_worker`; it speaks pickle over its
standard input and output with the process that started it, and nothing else."""

from __future__ import annotations

import pickle
import sys

from groundwiki.core.files.forking import die_with_parent
from groundwiki.core.read.pages import read_page
from groundwiki.core.read.provenance import PathGuard


def main() -> int:
    die_with_parent()  # no worker outlives the sidecar that started it
    config, paths = pickle.load(sys.stdin.buffer)
    guard = PathGuard(config.raw_dir)
    pages = [read_page(path, config, guard) for path in paths]
    pickle.dump(pages, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
