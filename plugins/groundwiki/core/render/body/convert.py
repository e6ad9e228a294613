"""Markdown to HTML for what the renderer shows inside a page: a transcluded note or section.

MkDocs converts each page itself; a transclusion is converted here, with the site's own
Markdown extensions (the plugin passes them), so it looks like the page it comes from:
callouts, code, math, diagrams. One Python-Markdown instance is built on first use and reset
between conversions, as MkDocs does per page.
"""

from __future__ import annotations

import xml.etree.ElementTree as etree
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from markdown.util import AMP_SUBSTITUTE

# What a page needs when the site gives no list (a render outside MkDocs, in tests): MkDocs'
# built-in three, the two that callouts become and superfences (code inside a callout; it takes
# over `fenced_code`'s place, as under MkDocs), with the mermaid fence (`site_extensions`).
DEFAULT_EXTENSIONS = (
    "toc",
    "tables",
    "fenced_code",
    "admonition",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.highlight",
)


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
        if extensions is DEFAULT_EXTENSIONS and configs is None:
            self.configs = {SUPERFENCES: {"custom_fences": [MERMAID_FENCE]}, HIGHLIGHT: PLAIN_CODE}
        self._markdown: markdown.Markdown | None = None
        self._transclusion = _TransclusionExtension()

    def fingerprint(self) -> str | None:
        """What the conversion depends on, as text; None when some of it cannot be told apart
        from another value by its text (an object without a stable description)."""
        described = repr(_described((list(self.extensions), self.configs)))
        return None if " at 0x" in described else described

    def __call__(self, text: str) -> str:
        if self._markdown is None:
            self._markdown = markdown.Markdown(
                extensions=[*self.extensions, self._transclusion],
                extension_configs=dict(self.configs or {}),
            )
        return self._markdown.reset().convert(text)

    def transclusion(self, text: str, relink: Callable[[str], str], prefix: str = "gw-t-") -> str:
        """The HTML of a note shown inside another page: every link and image URL passed
        through `relink` (MkDocs rewrites those of the page's own Markdown only, and this HTML
        reaches the page after that), and headings without ids, which would repeat the page's
        own ids and send its anchors and table of contents into the embed. Other ids (footnotes'
        `fn:1` and `fnref:1`, `{#id}` attributes) take `prefix`, unique in the host, and links
        to them in the embed follow: the host's `[1]` would jump to the embed's footnote."""
        processor = self._transclusion.processor
        processor.relink, processor.prefix = relink, prefix
        try:
            return self(text)
        finally:
            processor.relink = None


_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


class _TransclusionProcessor(Treeprocessor):
    relink: Callable[[str], str] | None = None
    prefix = "gw-t-"

    def run(self, root: etree.Element) -> None:
        relink = self.relink
        if relink is None:
            return
        elements = list(root.iter())
        ids: set[str] = set()
        for element in elements:
            if element.tag in _HEADINGS:
                _drop_heading_id(element)
            elif (ident := element.get("id")) is not None:
                ids.add(ident)
                element.set("id", self.prefix + ident)
        for element in elements:
            attribute = {"a": "href", "img": "src"}.get(element.tag)
            url = element.get(attribute) if attribute else None
            # Python-Markdown writes an autolinked e-mail address with AMP_SUBSTITUTE in it.
            if not attribute or url is None or AMP_SUBSTITUTE in url:
                continue
            if url.startswith("#") and unquote(url[1:]) in ids:
                element.set(attribute, f"#{self.prefix}{url[1:]}")
            else:
                element.set(attribute, relink(url))


def _drop_heading_id(heading: etree.Element) -> None:
    """The heading without its id and the links `toc` adds to it: a permalink (`¶`) goes, an
    `anchorlink` around the text leaves the text."""
    slug = heading.attrib.pop("id", None)
    if slug is None:
        return
    for index, child in reversed(list(enumerate(heading))):
        if child.tag != "a" or child.get("href") != f"#{slug}":
            continue
        if "headerlink" in (child.get("class") or "").split():
            child.text = None
            child[:] = []
        _unwrap(heading, index)


def _unwrap(parent: etree.Element, index: int) -> None:
    """Replace `parent[index]` by its content (text, children and tail)."""
    child = parent[index]
    text = (child.text or "") + (child.tail or "") if not len(child) else child.text or ""
    if len(child):
        child[-1].tail = (child[-1].tail or "") + (child.tail or "")
    if index == 0:
        parent.text = (parent.text or "") + text
    else:
        parent[index - 1].tail = (parent[index - 1].tail or "") + text
    parent[index : index + 1] = list(child)


class _TransclusionExtension(Extension):
    def __init__(self) -> None:
        super().__init__()
        self.processor = _TransclusionProcessor()

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # After `toc` (5), which sets the ids; where MkDocs rewrites a page's own links.
        self.processor.md = md
        md.treeprocessors.register(self.processor, "groundwiki_transclusion", 0)


def _described(value: Any) -> Any:
    """A configuration with its functions named (`module.name`) rather than shown at an
    address: a `format: !!python/name:pymdownx.superfences.fence_code_format` in mkdocs.yml
    must not turn the render cache off."""
    if isinstance(value, dict):
        return {key: _described(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_described(item) for item in value]
    qualified = getattr(value, "__qualname__", None)
    if callable(value) and isinstance(qualified, str) and "<" not in qualified:
        return f"{getattr(value, '__module__', '')}.{qualified}"
    return value


# Callouts are written as admonitions, folding ones as details: a site needs both. A callout
# holding a fence needs superfences, which alone reads fences inside an admonition.
SUPERFENCES = "pymdownx.superfences"
CALLOUT_EXTENSIONS = ("admonition", "pymdownx.details", SUPERFENCES)
# Obsidian draws a ```mermaid fence: superfences writes it as `<pre class="mermaid"><code>`
# (its default format, `fence_code_format`), which mkdocs-material draws.
MERMAID_FENCE = {"name": "mermaid", "class": "mermaid"}
# Superfences colours code with Pygments unless told otherwise: 4.5 times the cost of
# `fenced_code` on a page of code blocks (121 ms against 27 ms for 50 blocks). A site that does
# not configure highlighting (`pymdownx.highlight`, or `codehilite`) keeps its code as it was
# under `fenced_code`: `<pre><code class="language-x">`, at the same cost.
HIGHLIGHT = "pymdownx.highlight"
PLAIN_CODE = {"use_pygments": False}


def missing_extensions(extensions: Sequence[Any]) -> list[str]:
    """The callout extensions a site's list lacks (`markdown.extensions.admonition` counts)."""
    present = {
        name.removeprefix("markdown.extensions.") for name in extensions if isinstance(name, str)
    }
    return [name for name in CALLOUT_EXTENSIONS if name not in present]


def site_extensions(extensions: list[Any], configs: dict[str, Any]) -> None:
    """MkDocs' live lists given what the rendering needs: the callout extensions the site
    lacks, a `mermaid` fence in superfences' configuration unless the site names one, and code
    left uncoloured (`PLAIN_CODE`) unless the site configures highlighting."""
    named = {
        name.removeprefix("markdown.extensions.") for name in extensions if isinstance(name, str)
    }
    if HIGHLIGHT not in named and "codehilite" not in named:
        extensions.append(HIGHLIGHT)
        configs[HIGHLIGHT] = dict(PLAIN_CODE)
    extensions.extend(missing_extensions(extensions))
    options = configs.get(SUPERFENCES) or {}
    fences = list(options.get("custom_fences") or [])
    if not any(isinstance(fence, dict) and fence.get("name") == "mermaid" for fence in fences):
        configs[SUPERFENCES] = {**options, "custom_fences": [*fences, MERMAID_FENCE]}
