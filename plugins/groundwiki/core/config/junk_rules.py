"""When a raw-source chunk is junk that escaped format detection, and so is neither embedded
nor ranked: the thresholds the `skip_junk_chunks` options set (core/sources/hygiene.py measures
the chunks)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JunkRules:
    enabled: bool = True
    # Bits per character above which a chunk that is not mostly letters is binary data:
    # English prose measures 4-5, base64 6, bytes read as Latin-1 7.8. Text in a script with
    # thousands of letters (Chinese) can pass 7 too, which is why letters are exempt.
    entropy_above: float = 7.0
    # Below this many bits per character and `words_below` words a chunk is near-empty: a run
    # of whitespace or one character repeated.
    entropy_below: float = 0.5
    words_below: int = 5


DEFAULT_JUNK_RULES = JunkRules()
