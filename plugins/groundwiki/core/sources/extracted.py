"""What extraction gives for one raw source: its format, its text (None when it has none, with
why and how to fix it) and the lines that start its sections."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Extracted:
    format: str
    text: str | None
    heading_lines: frozenset[int] = frozenset()  # 1-based lines that start a section
    problem: str | None = None  # why there is no text
    hint: str | None = None  # how to fix that

    @property
    def content_hash(self) -> str | None:
        return sha256_text(self.text) if self.text is not None else None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
