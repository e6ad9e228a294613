"""Edits to a page's frontmatter made in its text, never by writing the YAML out again: comments,
quoting, order and layout stay as the writer left them, and the diff shows one entry changed.

The YAML parser's node marks say where each list entry is written; an entry's new value is
quoted the way the old one was (plain when plain still reads back as the same text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import yaml

from groundwiki.core.edit.link_text import Span

# Where python-frontmatter (and so `split_page`) finds the fences.
_FENCE = re.compile(r"^-{3,}\s*$", re.MULTILINE)


class FrontmatterUnreadable(ValueError):
    """The frontmatter is no YAML mapping, so it cannot be edited in place."""


@dataclass(frozen=True)
class Frontmatter:
    """The frontmatter of a page's text: its YAML between [start, end), and the parse."""

    start: int
    end: int
    root: yaml.MappingNode | None  # None: the page has no frontmatter


def read_frontmatter(text: str) -> Frontmatter:
    bom = 1 if text.startswith("\ufeff") else 0
    if not _FENCE.match(text, bom):
        return Frontmatter(bom, bom, None)
    fences = list(_FENCE.finditer(text, bom))
    if len(fences) < 2:
        raise FrontmatterUnreadable("its frontmatter is opened with '---' but never closed")
    start, end = fences[0].end(), fences[1].start()
    try:
        root = yaml.compose(text[start:end], Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise FrontmatterUnreadable(f"its frontmatter is not valid YAML ({exc})") from None
    if root is None:
        return Frontmatter(start, end, yaml.MappingNode("tag:yaml.org,2002:map", []))
    if not isinstance(root, yaml.MappingNode):
        raise FrontmatterUnreadable("its frontmatter is not a mapping of fields")
    return Frontmatter(start, end, root)


def _field(front: Frontmatter, *names: str) -> yaml.Node | None:
    if front.root is None:
        return None
    for name in names:
        for key, value in front.root.value:
            if isinstance(key, yaml.ScalarNode) and key.value == name:
                return value
    return None


def _entries(node: yaml.Node | None) -> list[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        return [node] if node.value.strip() else []
    if isinstance(node, yaml.SequenceNode):
        return [item for item in node.value if isinstance(item, yaml.ScalarNode)]
    return []


def scalar(value: str, flow: bool, style: str | None = None) -> str:
    """`value` as a YAML scalar: in the quotes `style` names, else plain when it reads back as
    itself (inside `[...]` when `flow`), else double-quoted."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style != '"' and value == value.strip() and "\n" not in value:
        probe = f"[{value}]" if flow else f"- {value}"
        try:
            if yaml.safe_load(probe) == [value]:
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def entry_spans(
    text: str, front: Frontmatter, field: str, new_values: dict[str, str]
) -> list[Span]:
    """Replace each entry of a list field whose value (stripped) is a key of `new_values`,
    keeping its quoting."""
    spans: list[Span] = []
    node = _field(front, field)
    flow = isinstance(node, yaml.SequenceNode) and bool(node.flow_style)
    for entry in _entries(node):
        new = new_values.get(entry.value.strip())
        if new is None or entry.style in ("|", ">"):
            continue
        start = front.start + entry.start_mark.index
        end = front.start + entry.end_mark.index
        spans.append(Span(start, end, scalar(new, flow, entry.style)))
    return spans


def alias_span(text: str, front: Frontmatter, alias: str) -> Span:
    """Add `alias` to the page's `aliases` (or `alias`) entry, or add the entry, or the
    frontmatter itself when the page has none."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if front.root is None:
        return Span(
            front.start,
            front.start,
            f"---{newline}aliases: [{scalar(alias, True)}]{newline}---{newline}",
        )
    node = _field(front, "aliases", "alias")
    if node is None:
        block = any(
            isinstance(value, yaml.SequenceNode) and not value.flow_style
            for _, value in front.root.value
        )
        added = (
            f"aliases:{newline}  - {scalar(alias, False)}{newline}"
            if block
            else f"aliases: [{scalar(alias, True)}]{newline}"
        )
        at = front.end
        if at > 0 and text[at - 1] != "\n":  # the last field ends without a line break
            added = newline + added
        return Span(at, at, added)
    start = front.start + node.start_mark.index
    end = front.start + node.end_mark.index
    if isinstance(node, yaml.SequenceNode) and node.flow_style:
        close = text.rindex("]", start, end)
        before = text[start:close].rstrip()
        joiner = "" if before.endswith("[") else ", "
        return Span(close, close, joiner + scalar(alias, True))
    if isinstance(node, yaml.SequenceNode) and node.value:
        last = node.value[-1]
        last_start = front.start + last.start_mark.index
        line_start = text.rfind("\n", 0, last_start) + 1
        prefix = text[line_start:last_start]
        if not re.fullmatch(r"[ \t]*-[ \t]+", prefix):
            prefix = "  - "
        line_end = text.find("\n", front.start + last.end_mark.index)
        if line_end < 0 or line_end >= front.end:
            line_end = front.end - 1
        if text[line_end - 1 : line_end] == "\r":
            line_end -= 1
        return Span(line_end, line_end, newline + prefix + scalar(alias, False))
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:null" or not node.value.strip():
            # `aliases:` left empty: its value starts where the (empty) node is.
            return Span(
                start,
                end,
                f" [{scalar(alias, True)}]" if start == end else f"[{scalar(alias, True)}]",
            )
        # One alias written as a scalar becomes a list of two.
        return Span(start, end, f"[{scalar(node.value, True)}, {scalar(alias, True)}]")
    raise FrontmatterUnreadable("its 'aliases' field is not a list of names")


def scalar_field_span(text: str, front: Frontmatter, name: str, value: str) -> Span:
    """Give the field `name` the one-line `value`: fill it when it is written but left empty,
    else add it as the frontmatter's last field (or add the frontmatter itself)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    line = f"{name}: {scalar(value, False)}{newline}"
    if front.root is None:
        return Span(front.start, front.start, f"---{newline}{line}---{newline}")
    node = _field(front, name)
    if node is not None:
        if not (isinstance(node, yaml.ScalarNode) and not node.value.strip() and not node.style):
            raise FrontmatterUnreadable(f"its '{name}' field is written already")
        start = front.start + node.start_mark.index
        end = front.start + node.end_mark.index
        return Span(start, end, (" " if start == end else "") + scalar(value, False))
    at = front.end
    if at > 0 and text[at - 1] != "\n":  # the last field ends without a line break
        line = newline + line
    return Span(at, at, line)
