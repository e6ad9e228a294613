"""Writers' text made safe for the two languages a site is written in: HTML and Markdown.

Frontmatter values and file names are text. MkDocs and its themes print page titles and
frontmatter (`page.meta`) into HTML as they are, because MkDocs' own titles (from a rendered
heading) are HTML already; a writer's `title: <img src=x onerror=...>` would be markup there.
Escaped once here, the reader sees the characters the writer typed.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

# Python-Markdown's backslash escapes, and the characters that start inline syntax.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!])")


def html_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """Frontmatter as a theme may print it: every string, key or value, at any depth, escaped.

    Names a theme reads as settings (`hide: [toc]`, `search: {exclude: true}`, `template`) hold
    no characters that escaping changes, so they keep working.
    """
    return {_html_value(key): _html_value(value) for key, value in meta.items()}


def _html_value(value: Any) -> Any:
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {_html_value(k): _html_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_html_value(item) for item in value]
    return value  # numbers, booleans, dates: no markup in them


def markdown_text(text: str) -> str:
    """Text for a line of Markdown that renders as exactly these characters: no HTML, no link,
    no emphasis (a raw source named `[x](javascript:...)` stays a name)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escape(text, quote=False))
