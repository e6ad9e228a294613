"""A new page from a template: `groundwiki new`.

The template is a page file with placeholders, `{{title}}`, `{{key}}`, `{{tags}}`, `{{summary}}`
and `{{date}}`, as Obsidian's core Templates plugin spells them (spaces inside the braces
allowed). Each is written as what it stands in: in the frontmatter a YAML value (a quoted string,
a flow list), so a title with a colon or a quote stays one value; in the body Markdown that shows
the text as typed, so a title with `[[` makes no link. The page made must meet the page contract;
a template that would not gives an error naming its line, before anything is written.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass
from pathlib import Path

from groundwiki.core.edit.writer import prose_markdown
from groundwiki.core.read.frontmatter import check_contract, split_page

DEFAULT_TEMPLATE = """---
title: {{title}}
summary: {{summary}}
tags: {{tags}}
---
# {{title}}

"""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}")
# A placeholder a template wraps in quotes: its value would be quoted twice.
_QUOTED = re.compile(r"[\"']\s*(\{\{\s*[A-Za-z_][\w-]*\s*\}\})")
PLACEHOLDERS = ("title", "key", "tags", "summary", "date")
# What a name may not hold: link syntax (`#`, `|`, `[`, `]`, `^`), what file systems refuse,
# and control characters.
_BAD_NAME = re.compile(r"[#|\[\]^<>:\"\\?*\x00-\x1f\x7f]")


class TemplateError(ValueError):
    """The template cannot make a valid page; the message names its line and the fix."""


@dataclass(frozen=True)
class NewPage:
    title: str
    key: str
    tags: tuple[str, ...] = ()
    summary: str | None = None
    date: datetime.date | None = None


def check_name(name: str) -> str:
    """A page name as given (`deploy-queue`, `ops/deploy-queue`, `.md` optional), checked."""
    name = name.strip().replace("\\", "/").removesuffix(".md")
    parts = name.split("/")
    if not name or any(not part.strip() for part in parts):
        raise ValueError("give the new page's name, e.g. deploy-queue or ops/deploy-queue")
    for part in parts:
        if part in (".", "..") or part.startswith("."):
            raise ValueError(f"'{name}': a page's folders and name cannot start with a dot")
        bad = _BAD_NAME.search(part)
        if bad:
            raise ValueError(
                f"'{name}' holds {bad.group()!r}, which a link to the page cannot spell; "
                "use letters, digits, spaces, - and _"
            )
    return name


def key_of(name: str) -> str:
    """The key the page will have (its file name, lower-cased, as `pages.page_key` makes it)."""
    return name.rsplit("/", 1)[-1].lower()


def wikilink(key: str) -> str:
    """How another page links to it."""
    return f"[[{key}]]"


def default_title(name: str) -> str:
    """`deploy-queue` -> `Deploy queue`: the file name as a reader would write it."""
    words = re.sub(r"[-_]+", " ", name.rsplit("/", 1)[-1]).strip()
    return words[:1].upper() + words[1:]


def render(template: str, template_name: str, page: NewPage) -> str:
    """The page text; raises TemplateError when the template is not a valid page once filled."""
    split_at = _frontmatter_end(template)
    quoted = _QUOTED.search(template, 0, split_at)
    if quoted:
        raise TemplateError(
            f"{template_name}:{template.count(chr(10), 0, quoted.start()) + 1}: write the "
            f"placeholder bare ({quoted.group(1)}, not in quotes): groundwiki quotes the value"
        )
    front = _fill(template[:split_at], template_name, page, _yaml_values(page), 1)
    body_line = template[:split_at].count("\n") + 1
    body = _fill(template[split_at:], template_name, page, _markdown_values(page), body_line)
    text = front + body
    _check(text, template_name)
    return text


def _frontmatter_end(template: str) -> int:
    """Where the frontmatter (with its closing `---` line) ends; 0 when there is none."""
    lines = template.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return 0
    offset = len(lines[0])
    for line in lines[1:]:
        offset += len(line)
        if line.rstrip() in ("---", "..."):
            return offset
    return 0


def _yaml_values(page: NewPage) -> dict[str, str]:
    # JSON strings and lists are YAML flow values: quoted, one line, nothing read as syntax.
    return {
        "title": json.dumps(page.title, ensure_ascii=False),
        "key": json.dumps(page.key, ensure_ascii=False),
        "tags": json.dumps(list(page.tags), ensure_ascii=False),
        "summary": json.dumps(page.summary, ensure_ascii=False) if page.summary else "",
        "date": (page.date or datetime.date.today()).isoformat(),
    }


def _markdown_values(page: NewPage) -> dict[str, str]:
    return {
        "title": prose_markdown(page.title),
        "key": prose_markdown(page.key),
        "tags": prose_markdown(", ".join(page.tags)),
        "summary": prose_markdown(page.summary or ""),
        "date": (page.date or datetime.date.today()).isoformat(),
    }


def _fill(
    part: str, template_name: str, page: NewPage, values: dict[str, str], first_line: int
) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1).lower()
        if name not in values:
            line = first_line + part.count("\n", 0, match.start())
            raise TemplateError(
                f"{template_name}:{line}: unknown placeholder {match.group()}; the known ones "
                f"are {', '.join('{{' + p + '}}' for p in PLACEHOLDERS)}"
            )
        return values[name]

    return _PLACEHOLDER.sub(one, part)


def _check(text: str, template_name: str) -> None:
    split = split_page(text, template_name)
    problems = list(split.problems)
    if not problems:
        problems += check_contract(split.data, split.field_lines, template_name)[1]
    if problems:
        first = problems[0]
        raise TemplateError(
            f"{template_name}:{first.at.line}: the page it makes breaks the page contract: "
            f"{first.message} ({first.hint})"
        )


def template_text(path: Path | None, shown: str) -> tuple[str, str]:
    """The wiki's template and its name for messages (`shown`), or groundwiki's own."""
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8"), shown
    return DEFAULT_TEMPLATE, "groundwiki's page template"
