"""Read one wiki page file into a `Page`: frontmatter contract, body links, headings, citations."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.model.records import Citation, Heading, Link, Location, Page, Problem
from groundwiki.core.read.comments import blank_comments
from groundwiki.core.read.frontmatter import check_contract, split_page
from groundwiki.core.read.markdown import parse_body
from groundwiki.core.read.provenance import PathGuard, comment_spec, parse_citation
from groundwiki.core.read.summary import derive_summary, written_summary

CONTRACT_FIELDS = {
    "title",
    "summary",
    "tldr",
    "tags",
    "refs",
    "aliases",
    "usage_mode",
    "kind",
    "stale_since",
    "archived_since",
    "sources",
}


def page_key(path: Path) -> str:
    return path.stem.lower()


def read_page(path: Path, config: Config, guard: PathGuard | None = None) -> Page:
    rel_path = config.rel(path)
    doc_path = path.relative_to(config.docs_dir).as_posix()
    key = page_key(path)
    try:
        raw_bytes = path.read_bytes()
        text = raw_bytes.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        problem = Problem(
            "unreadable-page",
            Location(rel_path, 1, 1),
            f"cannot read the page: {reason}",
            "save the file as UTF-8 text",
            "unreadable",
        )
        return empty_page(path, rel_path, doc_path, key, problem)
    return page_from_text(path, text, config, guard, raw_bytes)


def page_from_text(
    path: Path,
    text: str,
    config: Config,
    guard: PathGuard | None = None,
    raw_bytes: bytes | None = None,
) -> Page:
    """The page file at `path` as if it held `text` (an editor's unsaved buffer)."""
    rel_path = config.rel(path)
    doc_path = path.relative_to(config.docs_dir).as_posix()
    key = page_key(path)
    if raw_bytes is None:
        raw_bytes = text.encode("utf-8", "surrogatepass")
    try:
        return _parse_page(path, config, guard, text, raw_bytes)
    except Exception as exc:  # one page's bug must not stop the whole compile
        problem = Problem(
            "unreadable-page",
            Location(rel_path, 1, 1),
            f"reading this page failed: {internal_error(exc)}",
            "this is a bug in groundwiki: please report it with this page attached; "
            "until then, the rest of the wiki is built without it",
            "internal-error",
        )
        return empty_page(path, rel_path, doc_path, key, problem)


def internal_error(exc: BaseException) -> str:
    """An unexpected exception, bounded for a message: a value's repr can be megabytes."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 200 else text[:160] + f"... ({len(text):,} characters)"


def _parse_page(
    path: Path, config: Config, guard: PathGuard | None, text: str, raw_bytes: bytes
) -> Page:
    rel_path = config.rel(path)
    doc_path = path.relative_to(config.docs_dir).as_posix()
    key = page_key(path)
    split = split_page(text, rel_path)
    data, schema_problems = check_contract(split.data, split.field_lines, rel_path)
    # Obsidian's `%% comments %%` are private: blanked before anything reads the body.
    page_body = blank_comments(split.body)
    body = parse_body(page_body, rel_path, split.body_line)
    raw_prefix = config.raw_prefix
    guard = guard or PathGuard(config.raw_dir)

    citations: list[Citation] = []
    problems: list[Problem] = []
    for spec in data.get("sources") or []:
        at = Location(rel_path, split.field_lines.get("sources", 1), 1)
        _add(parse_citation(spec, at, "frontmatter", raw_prefix, guard), citations, problems)
    for comment in body.comments:
        spec = comment_spec(comment.text)
        if spec is not None:
            at = Location(rel_path, comment.line, comment.column)
            _add(parse_citation(spec, at, "inline", raw_prefix, guard), citations, problems)

    refs_line = split.field_lines.get("refs", 1)
    refs = tuple(
        Link("ref", str(target).strip(), Location(rel_path, refs_line, 1), raw=str(target))
        for target in data.get("refs") or []
    )
    return Page(
        key=key,
        path=path,
        rel_path=rel_path,
        doc_path=doc_path,
        title=(data.get("title") or "").strip()
        or _untitled(path, page_body, split.body_line, body.headings, config.title_from),
        # Folded YAML (`summary: >`) ends in a newline: one line all the same.
        **_summary(data, page_body, config),
        tags=_tags(data, getattr(body, "tags", ())),
        refs=refs,
        aliases=tuple(dict.fromkeys(str(a).strip() for a in data.get("aliases") or [])),
        usage_mode=data.get("usage_mode", "auto"),
        kind=data.get("kind", "page"),
        stale_since=data.get("stale_since"),
        archived_since=data.get("archived_since"),
        extra=_passthrough(split.data),
        body=page_body,
        body_line=split.body_line,
        links=body.links,
        citations=tuple(citations),
        headings=body.headings,
        blocks=body.blocks,
        body_map=body.body_map,
        problems=split.problems + schema_problems + tuple(problems),
        content_hash=hashlib.sha256(raw_bytes).hexdigest(),
        field_lines=split.field_lines,
    )


def _untitled(
    path: Path, body: str, body_line: int, headings: tuple[Heading, ...], title_from: str
) -> str:
    """The title of a page without `title:`: its file name as the writer capitalised it, as
    Obsidian and Quartz title a note; a `# ` heading on the body's first line that spells the
    file name (`# Getting started` in getting-started.md) is the same title, written better.
    With `title_from: heading`, the first `# ` heading wherever it is, else the file name."""
    h1s = (h for h in headings if h.level == 1 and h.text)
    if title_from == "heading":
        return next((h.text for h in h1s), path.stem)
    first = next((i for i, line in enumerate(body.split("\n")) if line.strip()), None)
    opening = next((h for h in h1s if first is not None and h.line == body_line + first), None)
    if opening is not None and _spelled(opening.text) == _spelled(path.stem) != "":
        return opening.text
    return path.stem


def _spelled(name: str) -> str:
    """A name's letters and digits, in one case: `Getting Started!` and `getting-started`."""
    return "".join(c for c in name.casefold() if c.isalnum())


def _add(result: Citation | Problem, citations: list[Citation], problems: list[Problem]) -> None:
    (citations if isinstance(result, Citation) else problems).append(result)  # type: ignore[arg-type]


def _passthrough(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in CONTRACT_FIELDS}


def empty_page(path: Path, rel_path: str, doc_path: str, key: str, problem: Problem) -> Page:
    """A page that could not be read: its key, so links to it resolve, and the problem."""
    return bare_page(path, rel_path, doc_path, key, (problem,))


def bare_page(
    path: Path, rel_path: str, doc_path: str, key: str, problems: tuple[Problem, ...] = ()
) -> Page:
    """A page known by its file only: its key, path and file name resolve links to it."""
    return Page(
        key=key,
        path=path,
        rel_path=rel_path,
        doc_path=doc_path,
        title=path.stem,
        summary=None,
        tags=(),
        refs=(),
        aliases=(),
        usage_mode="auto",
        kind="page",
        stale_since=None,
        archived_since=None,
        extra={},
        body="",
        body_line=1,
        links=(),
        citations=(),
        headings=(),
        problems=problems,
        content_hash="",
    )


def _summary(data: dict[str, Any], body: str, config: Config) -> dict[str, Any]:
    """`summary`, else `tldr`, else Obsidian Publish's `description`; without any, the body's
    first sentence when the wiki derives summaries (`missing_summary: derive`)."""
    written = written_summary(data)
    if written is not None or config.missing_summary != "derive":
        return {"summary": written, "summary_derived": False}
    derived = derive_summary(body)
    return {"summary": derived, "summary_derived": derived is not None}


def _tags(data: dict[str, Any], body_tags: tuple[str, ...]) -> tuple[str, ...]:
    """Frontmatter tags, then the body's `#tags`, once each; a tag written `#status/active` in
    the frontmatter is `status/active`, as in Obsidian."""
    tags = (str(tag).strip().lstrip("#") for tag in data.get("tags") or [])
    # Obsidian's tags ignore case: `#Seedling` and `seedling` are one tag, shown as first written.
    once: dict[str, str] = {}
    for tag in (*tags, *body_tags):
        if tag:
            once.setdefault(tag.casefold(), tag)
    return tuple(once.values())
