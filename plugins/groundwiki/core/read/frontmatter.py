"""Split a page into YAML frontmatter and body, and check the frontmatter against the page contract.

Nothing here raises on bad input: a page with broken YAML or wrong field types still yields a
usable (default-filled) result plus problems that say which line to fix and how.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import frontmatter as python_frontmatter
import jsonschema
import yaml

from groundwiki.core.config.excerpt import excerpt, excerpt_repr
from groundwiki.core.model.records import Location, Problem

_HANDLER = python_frontmatter.YAMLHandler()


# libyaml's parser when PyYAML has it (every PyPI wheel does): parsing is most of reading a page.
_SafeLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _ContractLoader(_SafeLoader):
    """Safe YAML that keeps dates as the strings the writer typed, so the schema sees them."""


_ContractLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class SplitPage:
    data: dict[str, Any]
    body: str
    body_line: int  # 1-based file line of the body's first line
    field_lines: dict[str, int]
    problems: tuple[Problem, ...]


@cache
def page_schema() -> dict[str, Any]:
    text = (
        resources.files("groundwiki.core").joinpath("schemas/page.schema.json").read_text("utf-8")
    )
    return json.loads(text)


# The schema's one-line pattern (summary, tldr) backtracks in Python's `re` for time quadratic
# in a long line followed by a newline (200 KB: minutes). The same language, matched in one
# pass: whitespace other than a newline, the first non-space character, the rest of the line.
_LINEAR_PATTERNS = {r"^[^\n]*\S[^\n]*$": r"^[^\n\S]*\S[^\n]*$"}
_SMALL_ARRAY = 100


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    linear = _LINEAR_PATTERNS.get(pattern, pattern)
    if validator.is_type(instance, "string") and not re.search(linear, instance):
        yield jsonschema.ValidationError(f"{excerpt_repr(instance)} does not match {pattern!r}")


def _unique_items(validator: Any, unique: bool, instance: Any, schema: Any) -> Any:
    """jsonschema compares unhashable items pairwise (3,300 mappings in `tags`: 20 s). Strings,
    which every list of the contract holds, are compared by hashing; a long list of anything
    else is left to the `items` error every such list of the contract also gets."""
    if not unique or not validator.is_type(instance, "array"):
        return
    if all(isinstance(item, str) for item in instance):
        if len(set(instance)) < len(instance):
            yield jsonschema.ValidationError(f"{excerpt_repr(instance)} has non-unique elements")
    elif len(instance) <= _SMALL_ARRAY:
        yield from _BaseValidator.VALIDATORS["uniqueItems"](validator, unique, instance, schema)


_BaseValidator = jsonschema.Draft202012Validator
_ContractValidator = jsonschema.validators.extend(
    _BaseValidator, {"pattern": _pattern, "uniqueItems": _unique_items}
)


@cache
def _validator() -> Any:
    # Formats are only annotations unless checked: `date` must be a real calendar date.
    checker = _BaseValidator.FORMAT_CHECKER
    return _ContractValidator(page_schema(), format_checker=checker)


# Real frontmatter holds a few dozen values, a few levels deep, and no YAML aliases (none in
# 6,554 pages of the wikis we measured; at most 22 values, 3 levels). The bounds stop documents
# that are small as text but huge once built: aliases of aliases ("billion laughs") expand a
# 500-byte block to billions of values, and deep nesting overflows libyaml's C stack.
MAX_VALUES = 10_000  # scalars and collections, counting each alias as everything it repeats
MAX_DEPTH = 64
_UNSHAPELY_FIX = (
    "write the values out in full: frontmatter holds a few short fields, "
    "without YAML anchors and aliases (&name / *name) or deep nesting"
)


class _Unshapely(Exception):
    """Frontmatter that is valid YAML but too large or too deep once built."""

    def __init__(self, reason: str, detail: str, line: int, column: int) -> None:
        super().__init__(reason)
        self.reason, self.detail, self.line, self.column = reason, detail, line, column


def _check_flow_depth(text: str) -> None:
    """`[[[[...` past the bound, found before libyaml scans it: its scanner takes time quadratic
    in the depth of flow collections. Brackets inside quotes count too, which only errs on the
    safe side for text nobody writes."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for position, char in enumerate(text):
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, position)
                column = position - (text.rfind("\n", 0, position) + 1)
                raise _Unshapely(
                    f"frontmatter nests more than {MAX_DEPTH} levels deep", "too-deep", line, column
                )
        elif char in "]}" and depth:
            depth -= 1


def _check_shape(loader: yaml.SafeLoader) -> None:
    """Walk the parse events once: count the values the document builds, aliases expanded, and
    its depth, before the composer (recursive C) or the constructor sees it."""
    built = 0
    open_starts: list[tuple[int, str | None]] = []  # (values built before it, its anchor)
    sizes: dict[str, int] = {}  # anchor -> values it builds, aliases inside it expanded
    while loader.check_event():
        event = loader.get_event()
        mark = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                if any(anchor == event.anchor for _, anchor in open_starts):
                    raise _Unshapely(
                        f"alias *{excerpt(str(event.anchor), 40)} is used inside its own anchor",
                        "recursive-alias",
                        mark.line,
                        mark.column,
                    )
                continue  # an undefined alias: the composer says so
            built += sizes[event.anchor]
        elif isinstance(event, yaml.ScalarEvent):
            built += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            open_starts.append((built, event.anchor))
            built += 1
            if len(open_starts) > MAX_DEPTH:
                raise _Unshapely(
                    f"frontmatter nests more than {MAX_DEPTH} levels deep",
                    "too-deep",
                    mark.line,
                    mark.column,
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            before, anchor = open_starts.pop()
            if anchor is not None:
                sizes[anchor] = built - before
        if built > MAX_VALUES:
            reason = (
                f"frontmatter builds more than {MAX_VALUES:,} values once its YAML aliases are "
                "expanded"
                if sizes
                else f"frontmatter holds more than {MAX_VALUES:,} values"
            )
            raise _Unshapely(reason, "too-many-values", mark.line, mark.column)


def _load(text: str) -> tuple[yaml.Node | None, object]:
    """Parse once, keeping the node tree for field line numbers and the data built from it."""
    _check_flow_depth(text)
    shape = _ContractLoader(text)
    try:
        _check_shape(shape)
    finally:
        shape.dispose()
    loader = _ContractLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def split_page(text: str, rel_path: str) -> SplitPage:
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    if not _HANDLER.detect(text):
        return SplitPage({}, text, 1, {}, ())
    try:
        fm, body = _HANDLER.split(text)
    except ValueError:
        problem = Problem(
            "invalid-frontmatter",
            Location(rel_path, 1, 1),
            "frontmatter is opened with '---' but never closed",
            "add a line with '---' after the last frontmatter field",
            "unclosed",
        )
        return SplitPage({}, text, 1, {}, (problem,))
    opening = _HANDLER.FM_BOUNDARY.search(text)
    # The YAML text starts right after the opening fence, still on the fence's line.
    fm_line = text[: opening.end()].count("\n") + 1 if opening else 1
    body_line = text[: len(text) - len(body)].count("\n") + 1
    try:
        root, data = _load(fm)
    except _Unshapely as exc:
        problem = Problem(
            "invalid-frontmatter",
            Location(rel_path, fm_line + exc.line, exc.column + 1),
            exc.reason,
            _UNSHAPELY_FIX,
            exc.detail,
        )
        return SplitPage({}, body, body_line, {}, (problem,))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = fm_line + (mark.line if mark else 0)
        column = (mark.column + 1) if mark else 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problem = Problem(
            "invalid-frontmatter",
            Location(rel_path, line, column),
            f"frontmatter is not valid YAML: {excerpt(reason)}",
            "fix the YAML syntax (quote values that contain ': ' or start with '[', '{', '&', '*', '!')",
            "yaml-syntax",
        )
        return SplitPage({}, body, body_line, {}, (problem,))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        problem = Problem(
            "invalid-frontmatter",
            Location(rel_path, fm_line, 1),
            f"frontmatter must be a mapping of fields, not a {type(data).__name__}",
            "write fields as 'name: value' lines between the '---' fences",
            "not-a-mapping",
        )
        return SplitPage({}, body, body_line, {}, (problem,))
    field_lines: dict[str, int] = {}
    problems: list[Problem] = []
    if isinstance(root, yaml.MappingNode):
        for key_node, _ in root.value:
            name, line = str(key_node.value), fm_line + key_node.start_mark.line
            if name in field_lines:
                # YAML keeps the last value without a word; the writer meant one of them.
                problems.append(
                    Problem(
                        "invalid-frontmatter",
                        Location(rel_path, line, key_node.start_mark.column + 1),
                        f"field '{excerpt(name)}' is given twice "
                        f"(lines {field_lines[name]} and {line})",
                        "keep one of them: the last one would win silently",
                        f"duplicate:{name}",
                    )
                )
                continue
            field_lines[name] = line
    data = {str(k): v for k, v in data.items()}
    if isinstance(root, yaml.MappingNode):
        problems += _read_as_obsidian(root, data, fm_line, rel_path)
        _merge_singular_keys(data, field_lines)
    return SplitPage(data, body, body_line, field_lines, tuple(problems))


# The contract's list fields, read as Obsidian reads them: a single value is a list of one, an
# empty field or item is nothing, and an item YAML reads as a number or a boolean is the text
# the writer typed (`- 0x1DA9430` is a name, not 31102000; `- Yes` is not True).
LIST_FIELDS = ("tags", "aliases", "refs", "sources")
# Obsidian's older singular keys, read as the contract's plural ones.
SINGULAR_KEYS = {"tag": "tags", "alias": "aliases"}
_NULL_TAG = "tag:yaml.org,2002:null"
_STR_TAG = "tag:yaml.org,2002:str"
_TAG_SEPARATORS = re.compile(r"[,\s]+")  # `tags: a, b` or `tags: a b`: no tag holds either


def _read_as_obsidian(
    root: yaml.MappingNode, data: dict[str, Any], fm_line: int, rel_path: str
) -> list[Problem]:
    """Normalise `data` in place: empty contract fields are absent (`summary:` left blank in a
    template), list fields become lists of non-blank strings. An item Obsidian cannot read
    either (a mapping: `- Opener: New Tab` unquoted) is left out and reported at its line."""
    problems: dict[str, Problem] = {}
    for key_node, node in root.value:
        name = str(key_node.value)
        known = name in page_schema()["properties"] or name in SINGULAR_KEYS
        if not known or name not in data:
            continue
        field = SINGULAR_KEYS.get(name, name)
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG:
            del data[name]
        elif field not in LIST_FIELDS or isinstance(node, yaml.MappingNode):
            continue  # the schema says what is wrong with a mapping where a list belongs
        elif isinstance(node, yaml.ScalarNode):
            text = node.value.strip()
            items = _TAG_SEPARATORS.split(text) if field == "tags" else [text]
            data[name] = [item for item in items if item]
        else:
            data[name] = _items(node)
            bad = [item for item in node.value if not isinstance(item, yaml.ScalarNode)]
            if bad:
                problems[name] = _bad_item(name, bad, fm_line, rel_path)
    return list(problems.values())


def _merge_singular_keys(data: dict[str, Any], field_lines: dict[str, int]) -> None:
    """`tag:` and `alias:` join `tags` and `aliases` (after their items, once each), so the
    contract checks and reads one list; alone, the singular key takes the plural's place."""
    for singular, plural in SINGULAR_KEYS.items():
        if singular not in data:
            continue
        if plural not in data:
            data[plural] = data.pop(singular)
            field_lines.setdefault(plural, field_lines.get(singular, 1))
        elif isinstance(data[plural], list) and isinstance(data[singular], list):
            extra = data.pop(singular)
            data[plural] = data[plural] + [item for item in extra if item not in data[plural]]
        # Otherwise one of them is not a list: the plural is checked and the singular kept as
        # an extra field, rather than guessing how to merge them.


def _items(node: yaml.SequenceNode) -> list[str]:
    items: list[str] = []
    for item in node.value:
        if isinstance(item, yaml.ScalarNode) and item.tag != _NULL_TAG and item.value.strip():
            items.append(item.value.strip())
    return items


def _bad_item(name: str, bad: list[yaml.Node], fm_line: int, rel_path: str) -> Problem:
    first = bad[0]
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    if isinstance(first, yaml.MappingNode):
        written = _as_written(first)
        message = f"item {excerpt_repr(written)} is read by YAML as a mapping, not a text{more}"
        fix = f'quote the item: - "{excerpt(written, 60)}"'
    else:
        message = f"item on line {fm_line + first.start_mark.line} is a list, not a text{more}"
        fix = "write one value per item: a list of texts, not of lists"
    return Problem(
        "schema-violation",
        Location(rel_path, fm_line + first.start_mark.line, first.start_mark.column + 1),
        f"frontmatter field '{name}': {message}",
        f"{fix}, or leave it out; the other items are kept",
        name,
    )


def _as_written(node: yaml.MappingNode) -> str:
    pairs = [
        f"{key.value}: {value.value}" if isinstance(value, yaml.ScalarNode) else f"{key.value}: …"
        for key, value in node.value
        if isinstance(key, yaml.ScalarNode)
    ]
    return ", ".join(pairs) or "{}"


def check_contract(
    data: dict[str, Any], field_lines: dict[str, int], rel_path: str
) -> tuple[dict[str, Any], tuple[Problem, ...]]:
    """Validate against the JSON Schema; fields that violate it are dropped so defaults apply."""
    problems: list[Problem] = []
    bad_fields: set[str] = set()
    errors = sorted(_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        field_name = str(error.absolute_path[0]) if error.absolute_path else ""
        if field_name in bad_fields:
            continue
        bad_fields.add(field_name)
        line = field_lines.get(field_name, 1)
        problems.append(
            Problem(
                "schema-violation",
                Location(rel_path, line, 1),
                f"frontmatter field '{excerpt(field_name)}': {_describe(error)}",
                _hint(field_name),
                field_name,
            )
        )
    clean = {k: v for k, v in data.items() if k not in bad_fields}
    for name in bad_fields & set(LIST_FIELDS):
        # A list with a bad item keeps its good ones: the writer's other tags still count.
        if isinstance(data.get(name), list):
            item = _item_validator(name)
            kept = [value for value in data[name] if item.is_valid(value)]
            if kept:
                clean[name] = list(dict.fromkeys(kept))
    return clean, tuple(problems)


@cache
def _item_validator(name: str) -> Any:
    schema = page_schema()["properties"][name]["items"]
    return _ContractValidator(schema, format_checker=_BaseValidator.FORMAT_CHECKER)


def _describe(error: jsonschema.ValidationError) -> str:
    """What is wrong, quoting the value at most `excerpt`-long: jsonschema's own messages carry
    the whole value's repr."""
    shown = excerpt_repr(error.instance)
    if error.validator == "pattern" and isinstance(error.instance, str):
        if not error.instance.strip():
            return "is blank"
        if "\n" in error.instance.strip():
            return "must be a single line"
        return f"{shown} is not in the expected form"
    if error.validator == "format":
        return f"{shown} is not a real {error.validator_value} (YYYY-MM-DD)"
    if error.validator == "enum":
        choices = error.validator_value if isinstance(error.validator_value, list) else []
        return f"{shown} is not one of {', '.join(map(str, choices))}"
    full = repr(error.instance)
    message = error.message.replace(full, shown) if len(full) > len(shown) else error.message
    return excerpt(message, 2 * len(shown) + 80)


_HINTS = {
    "summary": "write one line, e.g. summary: How to cite raw sources from a page",
    "tldr": "write one line, or use 'summary' instead",
    "description": "write the description as text, e.g. description: How to cite raw sources",
    "tags": "write a YAML list, e.g. tags: [linting, sidecar]",
    "refs": "write a YAML list of page keys, e.g. refs: [page-contract]",
    "aliases": "write a YAML list of names, e.g. aliases: [old-key]",
    "usage_mode": "use always, auto or never",
    "kind": "use page or overview",
    "stale_since": "write a date as YYYY-MM-DD",
    "archived_since": "write a date as YYYY-MM-DD",
    "sources": "write a YAML list such as sources: [raw-sources/notes.md#L3-L9]",
    "title": "write the title as a non-empty string",
}


def _hint(field_name: str) -> str:
    return _HINTS.get(field_name, "see schemas/page.schema.json for the page contract")
