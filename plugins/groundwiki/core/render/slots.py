"""Finished HTML that skips Python-Markdown: a slot in the Markdown, filled after conversion.

Python-Markdown and MkDocs each parse every raw HTML block of a page with a pure-Python HTML
parser; lists of backlinks and sources, and thousands of numbered source lines, cost more there
than anything else the plugin does. A slot is a tiny placeholder block instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SLOT = re.compile(r'<div class="gw-slot" id="(gw-slot-\d+)"></div>')


@dataclass
class Slots:
    html: dict[str, str] = field(default_factory=dict)

    def put(self, html: str) -> str:
        """The placeholder block to write in the Markdown (blank lines around it)."""
        key = f"gw-slot-{len(self.html) + 1}"
        self.html[key] = html
        return f'<div class="gw-slot" id="{key}"></div>'


@dataclass(frozen=True)
class Rendered:
    markdown: str
    slots: dict[str, str]


def fill_slots(html: str, slots: dict[str, str]) -> str:
    if not slots:
        return html
    return _SLOT.sub(lambda match: slots.get(match.group(1), ""), html)
