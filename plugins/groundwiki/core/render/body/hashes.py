"""A `#` that starts a line's text without a space after it (`#seedling`) kept from being a
heading.

CommonMark, Obsidian and groundwiki's compiler need a space after the `#` of a heading, so
`#seedling` or `- #status/active` is a tag in a paragraph. Python-Markdown, which MkDocs runs,
reads it as `<h1>`. Escaping the `#` (`\\#`) makes Python-Markdown print it as text, where the
other readers already see text.
"""

from __future__ import annotations

import re

from groundwiki.core.render.body.code import protected_lines

# Up to 3 spaces, then quote markers; or any indentation with list markers (a list item's
# paragraph is a heading to Python-Markdown at any depth); then `#`s and a character that is
# not a space (`##tag` is no heading either).
_TAG_START = re.compile(
    r"^((?:[ ]{0,3}(?:>[ \t]?[ ]{0,3})*)(?:[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)*)#(?=#*[^\s#])"
)


def escape_tag_hashes(markdown: str) -> str:
    if "#" not in markdown:
        return markdown
    lines = markdown.split("\n")
    protected: list[bool] | None = None
    for index, line in enumerate(lines):
        if "#" not in line:
            continue
        match = _TAG_START.match(line)
        if match is None:
            continue
        if protected is None:  # most pages have no such line: spare them the fence scan
            protected = protected_lines(lines)
        if not protected[index]:
            lines[index] = f"{match.group(1)}\\{line[match.end(1) :]}"
    return "\n".join(lines)
