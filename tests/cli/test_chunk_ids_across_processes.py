"""Chunk IDs do not depend on the process: a fresh interpreter (its own hash seed) gives a text
the same chunk IDs as this one. A new interpreter costs a second, so this lives here rather than
with the chunking tests in tests/core/test_chunking.py."""

from __future__ import annotations

import subprocess
import sys

from groundwiki.core.sources.chunking import chunk_text
from groundwiki.core.sources.extract import Extracted
from helpers.prose import prose


def test_chunk_ids_are_the_same_in_another_process():
    text = prose(7, 8)
    code = (
        "import sys; from groundwiki.core.sources.chunking import chunk_text;"
        "from groundwiki.core.sources.extract import Extracted;"
        "print(' '.join(c.id for c in chunk_text('doc.txt', Extracted('text', sys.stdin.read()))))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], input=text, capture_output=True, text=True, check=True
    )
    here = chunk_text("doc.txt", Extracted("text", text, frozenset()))
    assert other.stdout.split() == [c.id for c in here]
