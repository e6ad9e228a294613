"""Markdown to HTML for what the renderer shows inside a page: a transcluded note or section.

MkDocs converts each page itself; a transclusion is converted here, with the site's own
Markdown extensions (the plugin passes them), so it looks like the page it comes from:
callouts, code, math, diagrams. One Python-Markdown instance is built on first use and reset
between conversions, as MkDocs does per page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import markdown

# What a page needs when the site gives no list (a render outside MkDocs, in tests): MkDocs'
# built-in three, and the two that callouts become.
DEFAULT_EXTENSIONS = ("toc", "tables", "fenced_code", "admonition", "pymdownx.details")


class MarkdownConverter:
    def __init__(
        self,
        extensions: Sequence[Any] = DEFAULT_EXTENSIONS,
        configs: dict[str, Any] | None = None,
    ) -> None:
        # Kept as given, not copied: the plugin passes MkDocs' live lists, which later plugins
        # may still extend before the first page is rendered.
        self.extensions = extensions
        self.configs = configs
        self._markdown: markdown.Markdown | None = None

    def __call__(self, text: str) -> str:
        if self._markdown is None:
            self._markdown = markdown.Markdown(
                extensions=list(self.extensions), extension_configs=dict(self.configs or {})
            )
        return self._markdown.reset().convert(text)


# Callouts are written as admonitions, folding ones as details: a site needs both.
CALLOUT_EXTENSIONS = ("admonition", "pymdownx.details")


def missing_extensions(extensions: Sequence[Any]) -> list[str]:
    """The callout extensions a site's list lacks (`markdown.extensions.admonition` counts)."""
    present = {
        name.removeprefix("markdown.extensions.") for name in extensions if isinstance(name, str)
    }
    return [name for name in CALLOUT_EXTENSIONS if name not in present]
