"""Fenced code and `$$` math as blocks of their own, as CommonMark and Obsidian read them.

In CommonMark a fence ends its block: the line after the closing fence starts a new one, and
an opening fence interrupts a paragraph; Obsidian reads a `$$` formula the same way. Python-
Markdown does not: `pymdownx.superfences` (which the site needs for code in callouts and for
diagrams) puts the code where its lines were, so a line right after the closing fence, or right
before the opening one, lands in one paragraph with the code (a `<p>` holding a `<div>`, which a
browser breaks apart, leaving a block id's anchor or a citation marker after an empty paragraph
instead of after the code); and `pymdownx.arithmatex` reads a `$$` block only when blank lines
set it apart, else it shows the dollars as text. A blank line (in the fence's quote, when it is
quoted) on each side keeps each a block of its own, whatever HTML the code becomes.

Only fences and formulas at the top of their container are separated: at the start of a line,
or right after its quote markers (a callout's content, before callouts become admonitions). A
fence indented under a list item is left alone: a blank line would make the list loose, and
Python-Markdown puts no paragraph around it there.
"""

from __future__ import annotations

import re

from groundwiki.core.render.body.code import CodeScanner

# Quote markers (with the space each may take), then the fence (or the `$$`) at once.
_TOP_FENCE = re.compile(r"^((?:[ ]{0,3}>[ ]?)*)(?:`{3}|~{3}|\$\$)")
_QUOTES = re.compile(r"^(?:[ \t]*>)*")


def separate_fences(markdown: str) -> str:
    """`markdown` with a blank line between each fence or `$$` formula at the top of its
    container and a non-blank line right above or below it."""
    if "```" not in markdown and "~~~" not in markdown and "$$" not in markdown:
        return markdown
    lines = markdown.split("\n")
    out: list[str] = []
    scanner = CodeScanner()
    changed = False
    for index, line in enumerate(lines):
        before = scanner.fence is not None or scanner.math
        protected = scanner.protected(line)
        after = scanner.fence is not None or scanner.math
        # Opening, closing, or both (a one-line `$$x$$`): a change of state, or a protected
        # line between two unprotected ones.
        opens = protected and not before
        closes = protected and not after
        top = _TOP_FENCE.match(line) if opens or closes else None
        if top is not None and opens and out and _filled(out[-1]):
            out.append(_blank(top.group(1), out[-1]))  # an opening fence after text
            changed = True
        out.append(line)
        if top is not None and closes and index + 1 < len(lines) and _filled(lines[index + 1]):
            out.append(_blank(top.group(1), lines[index + 1]))  # text right after the code
            changed = True
    return "\n".join(out) if changed else markdown


def _filled(line: str) -> bool:
    """Whether the line holds text, quote markers aside."""
    return bool(line.strip(" \t>"))


def _blank(prefix: str, neighbour: str) -> str:
    """The blank line between a fence with quote markers `prefix` and its neighbour: quoted
    the same when the neighbour is in the same quote, else empty (the quote ends there, as
    CommonMark reads a fence: it is never a lazy continuation)."""
    depth = prefix.count(">")
    if depth and _QUOTES.match(neighbour).group(0).count(">") == depth:  # type: ignore[union-attr]
        return prefix.rstrip()
    return ""
