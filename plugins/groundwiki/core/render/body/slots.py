"""Finished HTML that skips Python-Markdown: a slot in the Markdown, filled after conversion.

Python-Markdown and MkDocs each parse every raw HTML block of a page with a pure-Python HTML
parser; lists of backlinks and sources, and thousands of numbered source lines, cost more there
than anything else the plugin does. A slot is a tiny placeholder block instead.

An *inline* slot does the same inside a paragraph: a wikilink or a citation marker becomes two
private-use characters around a number, which Python-Markdown passes through as plain text,
instead of inline HTML it would parse and stash (most of what the plugin added to its time).
Inside a heading an inline slot would reach the table of contents and the heading's id, so
headings keep inline HTML.

A *late* slot holds what site search must not index (tags, refs, backlinks, sources, the local
graph): it is filled only after search plugins have read the page, which keeps those lists out
of the index for any search plugin and spares it the parsing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A block placeholder alone in a paragraph takes the paragraph's place: a transclusion is a
# <div>, which a <p> cannot hold.
_SLOT = re.compile(
    r"<p>\ue000(gw-block-\d+)\ue001</p>"
    r'|<div class="gw-slot" id="(gw-slot-\d+)"></div>'
    r"|\ue000(gw-(?:inline|block)-\d+)\ue001"
)
_BLOCK_SLOT = re.compile(r"(\ue000gw-block-\d+\ue001)")
# Python-Markdown's paragraphs do not nest, and the text between holds no `</p>`.
_PARAGRAPH = re.compile(r"(<p\b[^>]*>)(.*?)</p>", re.DOTALL)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)\b[^>]*?(/?)>")
_VOID = frozenset({"br", "img", "wbr", "input", "hr", "source", "embed", "area", "col"})


@dataclass
class Slots:
    html: dict[str, str] = field(default_factory=dict)
    late: dict[str, str] = field(default_factory=dict)

    def put(self, html: str, *, searchable: bool = True) -> str:
        """The placeholder block to write in the Markdown (blank lines around it)."""
        key = f"gw-slot-{len(self.html) + len(self.late) + 1}"
        (self.html if searchable else self.late)[key] = html
        return f'<div class="gw-slot" id="{key}"></div>'

    def put_inline(self, html: str, *, block: bool = False) -> str:
        """The placeholder to write inside a line of text. A `block` one holds block HTML (an
        embedded note): alone on its line it replaces the paragraph Markdown wraps it in."""
        kind = "block" if block else "inline"
        key = f"gw-{kind}-{len(self.html) + len(self.late) + 1}"
        self.html[key] = html
        return f"\ue000{key}\ue001"


@dataclass(frozen=True)
class Rendered:
    markdown: str
    slots: dict[str, str]
    late_slots: dict[str, str] = field(default_factory=dict)


def fill_slots(html: str, slots: dict[str, str]) -> str:
    """Fill the slots given; placeholders of other slots (late ones) stay for a later fill."""
    if not slots:
        return html
    if "\ue000gw-block-" in html:
        html = _PARAGRAPH.sub(_split_paragraph, html)
    return _SLOT.sub(lambda match: slots.get(match[1] or match[2] or match[3], match[0]), html)


def _split_paragraph(match: re.Match[str]) -> str:
    """A paragraph holding a block slot among other text (`A embeds B: ![[B]]`, two embeds on
    quoted lines), closed before the block and opened again after it: a <p> cannot hold a
    <div>, and a browser closes it there anyway, leaving the text after in no paragraph. Inline
    elements open at the slot (`*see ![[B]]*`) are closed and opened again the same way."""
    opening, content = match[1], match[2]
    parts = _BLOCK_SLOT.split(content)
    if len(parts) == 1 or (len(parts) == 3 and not parts[0].strip() and not parts[2].strip()):
        return match[0]  # no block, or one alone: `_SLOT` puts it in the paragraph's place
    pieces: list[str] = []
    open_tags: list[tuple[str, str]] = []  # (name, opening tag as written)
    for index, part in enumerate(parts):
        if index % 2:
            pieces.append(part)
            continue
        reopened = "".join(tag for _, tag in open_tags)
        for tag in _TAG.finditer(part):
            name = tag[2].lower()
            if tag[3] or name in _VOID:
                continue
            if not tag[1]:
                open_tags.append((name, tag[0]))
            elif any(open_name == name for open_name, _ in open_tags):
                while open_tags and open_tags.pop()[0] != name:
                    pass
        if part.strip():
            closing = "".join(f"</{name}>" for name, _ in reversed(open_tags))
            pieces.append(f"{opening}{reopened}{part}{closing}</p>")
    return "".join(pieces)
