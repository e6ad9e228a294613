"""Values as a message quotes them: whole when short, else their start and their length.

A frontmatter value, a link or a citation can be megabytes long (or, through YAML aliases, far
more once printed); a message that carries it whole floods the terminal, the lint report and the
site. Every user value that goes into a message or a hint goes through here.
"""

from __future__ import annotations

import hashlib

SHOWN_CHARS = 80
_DETAIL_CHARS = 200


def excerpt(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text`, cut to `limit` characters with an ellipsis and the full length when longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def excerpt_repr(value: object, limit: int = SHOWN_CHARS) -> str:
    """A value's repr, bounded: containers are cut before their repr is built in full."""
    if isinstance(value, list | tuple | dict | set) and len(value) > limit:
        head = list(value.items() if isinstance(value, dict) else value)[:limit]
        kind = type(value).__name__
        return excerpt(f"{kind} of {len(value):,} items starting {head!r}", limit)
    return excerpt(repr(value), limit)


def detail_key(text: str) -> str:
    """A finding's detail (the baseline's key): short text as is, long text cut and hashed, so
    two long values that share a start still stay apart."""
    if len(text) <= _DETAIL_CHARS:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{text[: _DETAIL_CHARS - 40]}…#{digest}"
