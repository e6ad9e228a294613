"""The compile caches on disk as plain values: JSON that can only ever become data.

A cache file may come from less trusted hands than the checkout (a CI cache restored by key
prefix, a shared runner, an artifact), so reading one must not be able to run code, as
unpickling does. Each model type is written as a list of its fields in a fixed order, with no
type name in the file: the reader builds only the types listed here, field by field, checks the
types of the values, and gives up on the whole file (`CacheUnreadable`) at the first one out of
place. Lists rather than objects keep the file compact and the reading fast: a warm build of a
large wiki reads every page from it.

A file is one header line, then one JSON document. The header names the format, the groundwiki
version and `SCHEMA`, a fingerprint of the field names of every type written: a file written
before a model changed is ignored unread.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import fields
from itertools import product
from pathlib import Path
from typing import Any, TypeVar

from groundwiki.core.evidence.lock import Lock, LockProblem, LockRecord
from groundwiki.core.files.file_cache import Stamp, StampedCache
from groundwiki.core.model.records import (
    Block,
    BodyMap,
    Chunk,
    Citation,
    Heading,
    Link,
    Location,
    Page,
    Passage,
    Problem,
    Source,
)
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.sources.passages import PassageCache
from groundwiki.core.sources.raw_sources import ChunkCache
from groundwiki.core.wiki.compiler import CompileCache

CODEC = 2  # raised when the layout of a type's list changes without its field names changing
_TYPES = (
    Location, Link, Citation, Problem, Heading, Block, BodyMap, Page, Chunk, Passage, Source,
    Rendered, Lock, LockRecord, LockProblem,
)  # fmt: skip
SCHEMA = hashlib.sha256(
    repr((CODEC, [(t.__name__, [f.name for f in fields(t)]) for t in _TYPES])).encode()
).hexdigest()[:16]
_NONE = type(None)
T = TypeVar("T")


class CacheUnreadable(Exception):
    """The file is not a cache this code wrote: damaged, foreign or crafted."""


class CacheStale(CacheUnreadable):
    """The header names another format, version, schema or configuration."""


# --- files -------------------------------------------------------------------------------------


def write_document(path: Path, header: str, document: object) -> None:
    """Write `header`, a newline and `document` as JSON, replacing `path` atomically: a reader
    never sees half a file. Raises OSError (the caller logs it: a cache only saves time)."""
    text = json.dumps(document, separators=(",", ":"), check_circular=False)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(header + "\n")
            handle.write(text)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def read_document(path: Path, header: str, decode: Callable[[Any], T]) -> T:
    """`decode` of the JSON document in a file written with `header`. Raises FileNotFoundError
    when there is none, CacheStale for another header and CacheUnreadable for anything else
    wrong, whatever `decode` raises on a malformed document included."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CacheUnreadable(str(exc)) from exc
    first, newline, body = data.partition(b"\n")
    if not newline or first != header.encode():
        raise CacheStale(first[:200].decode("utf-8", "replace"))
    # Millions of objects are made and none is garbage: the collector's passes over them, as
    # they pile up, would cost about as much as reading (the document holds no cycles).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return decode(json.loads(body))
    except CacheUnreadable:
        raise
    except (
        TypeError,
        ValueError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        RecursionError,
    ) as exc:
        # ValueError: not JSON (UnicodeDecodeError is one); the others: JSON of another shape.
        raise CacheUnreadable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        if collecting:
            gc.enable()


def remove_old(path: Path) -> None:
    """Delete a cache file of the old, pickled format, unread: only an older groundwiki would
    unpickle it, and this one has just written its replacement."""
    # A read-only folder keeps it: this version never reads it anyway.
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


# --- checks ------------------------------------------------------------------------------------


Shape = frozenset[tuple[type, ...]]


def _shape(*kinds: type | tuple[type, ...]) -> Shape:
    """The exact types a row may hold, one tuple per combination of the alternatives: checking
    a row is then one lookup of its types, not a loop over its values (a warm build checks
    every page, link and citation)."""
    return frozenset(product(*(kind if isinstance(kind, tuple) else (kind,) for kind in kinds)))


def _row(value: Any, shape: Shape) -> list[Any]:
    """`value` as a list whose values have the types of one of `shape`'s tuples, exactly (JSON
    gives bool for true, int for 1: no bool passes for an int)."""
    if type(value) is not list or tuple(map(type, value)) not in shape:
        raise CacheUnreadable(f"unexpected values: {value!r:.120}")
    return value


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise CacheUnreadable("expected a list")
    return value


def _strs(value: Any) -> tuple[str, ...]:
    if type(value) is not list or not all(type(item) is str for item in value):
        raise CacheUnreadable("expected a list of strings")
    return tuple(value)


def _ints(value: Any) -> tuple[int, ...]:
    if type(value) is not list or not all(type(item) is int for item in value):
        raise CacheUnreadable("expected a list of integers")
    return tuple(value)


def _str_map(value: Any, kind: type) -> dict[str, Any]:
    if type(value) is not dict or not all(type(item) is kind for item in value.values()):
        raise CacheUnreadable(f"expected an object of {kind.__name__}")
    return value


def _stamp(value: Any) -> Stamp:
    stamp = _ints(value)
    if len(stamp) != 3:
        raise CacheUnreadable("expected a stamp of three integers")
    return (stamp[0], stamp[1], stamp[2])


def plain(value: Any) -> bool:
    """Whether JSON gives `value` back equal and of the same types: YAML's explicit tags
    (`!!binary`, `!!set`, `!!timestamp`) and non-string keys give values it would not."""
    kind = type(value)
    if kind in (str, int, float, bool, _NONE):
        return True
    if kind is list:
        return all(plain(item) for item in value)
    if kind is dict:
        return all(type(key) is str and plain(item) for key, item in value.items())
    return False


# --- the model ---------------------------------------------------------------------------------
# Each type: `<type>_row` gives its list, `<type>_of` builds it from one, checked.

# A Location is written inline, as three values of the row that holds it: most rows hold one,
# and a list of its own would cost a check and an allocation more for each.
_LINK = _shape(str, str, str, int, int, (str, _NONE), (str, _NONE), str, bool)


def _link_row(link: Link) -> list[Any]:
    at = link.at
    return [
        link.kind, link.target, at.path, at.line, at.column, link.label, link.anchor, link.raw,
        link.embed,
    ]  # fmt: skip


def _link_of(row: Any) -> Link:
    kind, target, path, line, column, label, anchor, raw, embed = _row(row, _LINK)
    if kind not in ("wikilink", "link", "ref"):
        raise CacheUnreadable(f"no link kind {kind!r:.40}")
    return Link(kind, target, Location(path, line, column), label, anchor, raw, embed)


_CITATION = _shape(str, str, int, int, (int, _NONE), (int, _NONE), str, str)


def _citation_row(citation: Citation) -> list[Any]:
    at = citation.at
    return [
        citation.source, at.path, at.line, at.column, citation.start, citation.end,
        citation.origin, citation.raw,
    ]  # fmt: skip


def _citation_of(row: Any) -> Citation:
    source, path, line, column, start, end, origin, raw = _row(row, _CITATION)
    if origin not in ("inline", "frontmatter"):
        raise CacheUnreadable(f"no citation origin {origin!r:.40}")
    return Citation(source, Location(path, line, column), start, end, origin, raw)


_PROBLEM = _shape(str, str, int, int, str, str, str)


def _problem_row(problem: Problem) -> list[Any]:
    at = problem.at
    return [
        problem.rule, at.path, at.line, at.column, problem.message, problem.hint, problem.detail
    ]  # fmt: skip


def _problem_of(row: Any) -> Problem:
    rule, path, line, column, message, hint, detail = _row(row, _PROBLEM)
    return Problem(rule, Location(path, line, column), message, hint, detail)


_HEADING = _shape(int, str, str, int, str)
_BLOCK = _shape(str, int)
_BODY_MAP = _shape(list, list, list, bool)
_SPAN = _shape(int, int)


def _body_map_row(body_map: BodyMap | None) -> list[Any] | None:
    if body_map is None:
        return None
    return [
        list(body_map.block_starts), [list(pair) for pair in body_map.code_and_headings],
        list(body_map.comments), body_map.site_blocks,
    ]  # fmt: skip


def _body_map_of(row: Any) -> BodyMap | None:
    if row is None:
        return None
    starts, spans, comments, site_blocks = _row(row, _BODY_MAP)
    pairs = tuple((first, end) for first, end in (_row(span, _SPAN) for span in _list(spans)))
    return BodyMap(_ints(starts), pairs, _ints(comments), site_blocks)


_PAGE = _shape(
    str, str, str, str, str, (str, _NONE), list, list, list, str, str, (str, _NONE),
    (str, _NONE), dict, str, int, list, list, list, list, str, dict, list, bool, (list, _NONE),
    str,
)  # fmt: skip


def page_row(page: Page) -> list[Any] | None:
    """The page's list; None when its frontmatter holds a value JSON cannot give back (the page
    is then not cached: it is read again, which is only a cost)."""
    if not plain(page.extra):
        return None
    return [
        page.key, str(page.path), page.rel_path, page.doc_path, page.title, page.summary,
        list(page.tags), [_link_row(link) for link in page.refs], list(page.aliases),
        page.usage_mode, page.kind, page.stale_since, page.archived_since, page.extra, page.body,
        page.body_line, [_link_row(link) for link in page.links],
        [_citation_row(citation) for citation in page.citations],
        [[h.level, h.text, h.slug, h.line, h.source] for h in page.headings],
        [_problem_row(problem) for problem in page.problems], page.content_hash,
        page.field_lines, [[block.id, block.line] for block in page.blocks],
        page.summary_derived, _body_map_row(page.body_map), page.scope,
    ]  # fmt: skip


def page_of(row: Any) -> Page:
    (
        key, path, rel_path, doc_path, title, summary, tags, refs, aliases, usage_mode, kind,
        stale_since, archived_since, extra, body, body_line, links, citations, headings,
        problems, content_hash, field_lines, blocks, summary_derived, body_map, scope,
    ) = _row(row, _PAGE)  # fmt: skip
    if usage_mode not in ("always", "auto", "never"):
        raise CacheUnreadable(f"no usage mode {usage_mode!r:.40}")
    if not plain(extra):
        raise CacheUnreadable("frontmatter values that are not plain")
    return Page(
        key=key,
        path=Path(path),
        rel_path=rel_path,
        doc_path=doc_path,
        title=title,
        summary=summary,
        tags=_strs(tags),
        refs=tuple(_link_of(link) for link in refs),
        aliases=_strs(aliases),
        usage_mode=usage_mode,
        kind=kind,
        stale_since=stale_since,
        archived_since=archived_since,
        extra=extra,
        body=body,
        body_line=body_line,
        links=tuple(_link_of(link) for link in links),
        citations=tuple(_citation_of(citation) for citation in citations),
        headings=tuple(Heading(*_row(h, _HEADING)) for h in headings),
        problems=tuple(_problem_of(problem) for problem in problems),
        content_hash=content_hash,
        field_lines=_str_map(field_lines, int),
        blocks=tuple(Block(*_row(block, _BLOCK)) for block in blocks),
        summary_derived=summary_derived,
        body_map=_body_map_of(body_map),
        scope=scope,
    )


_SOURCE = _shape(str, str, str, (str, _NONE), (str, _NONE), list, (str, _NONE), (str, _NONE))


def source_row(source: Source) -> list[Any]:
    return [
        source.path, str(source.abs_path), source.format, source.text, source.content_hash,
        sorted(source.heading_lines), source.problem, source.hint,
    ]  # fmt: skip


def source_of(row: Any) -> Source:
    path, abs_path, form, text, content_hash, heading_lines, problem, hint = _row(row, _SOURCE)
    return Source(
        path, Path(abs_path), form, text, content_hash, frozenset(_ints(heading_lines)), problem,
        hint,
    )  # fmt: skip


_OPTIONAL = (float, _NONE)
_CHUNK = _shape(str, str, int, int, str, str, int, float, int, _OPTIONAL, _OPTIONAL, _OPTIONAL, str)
_PASSAGE = _shape(str, str, str, list, int, int, str, str, int)
_CHUNK_ENTRY = _shape(str, str, str, list)
_PASSAGE_ENTRY = _shape(str, str, str, str, list)
_RENDERED = _shape(str, dict, dict)
_LOCK = _shape(list, bool, list)
_LOCK_RECORD = _shape(str, str, str, (str, _NONE), int)
_LOCK_PROBLEM = _shape(int, str)
_STAMPED = _shape(str, list, (list, _NONE))


def chunks_rows(chunks: ChunkCache) -> list[list[Any]]:
    """Each entry as [path, content hash, policy, [chunk lists]]: JSON keys are strings only."""
    return [
        [*key, [[c.id, c.source, c.start_line, c.end_line, c.text, c.content_hash, c.tokens,
                 c.entropy, c.words, c.letters, c.encoded, c.controls, c.cut_as] for c in cut]]
        for key, cut in chunks.items()
    ]  # fmt: skip


def chunks_of(rows: Any) -> ChunkCache:
    found: ChunkCache = {}
    for row in _list(rows):
        path, content_hash, policy, cut = _row(row, _CHUNK_ENTRY)
        found[(path, content_hash, policy)] = tuple(Chunk(*_row(c, _CHUNK)) for c in cut)
    return found


def passages_rows(passages: PassageCache) -> list[list[Any]]:
    return [
        [*key, [[p.id, p.page, p.path, list(p.heading_path), p.start_line, p.end_line, p.text,
                 p.content_hash, p.tokens] for p in cut]]
        for key, cut in passages.items()
    ]  # fmt: skip


def _passage_of(row: Any) -> Passage:
    ident, page, path, heading_path, start, end, text, content_hash, tokens = _row(row, _PASSAGE)
    return Passage(ident, page, path, _strs(heading_path), start, end, text, content_hash, tokens)


def passages_of(rows: Any) -> PassageCache:
    found: PassageCache = {}
    for row in _list(rows):
        path, key, content_hash, policy, cut = _row(row, _PASSAGE_ENTRY)
        found[(path, key, content_hash, policy)] = tuple(_passage_of(p) for p in cut)
    return found


def renders_rows(renders: dict[str, Any]) -> dict[str, list[Any]]:
    return {
        key: [value.markdown, value.slots, value.late_slots]
        for key, value in renders.items()
        if isinstance(value, Rendered)
    }


def renders_of(rows: Any) -> dict[str, Rendered]:
    if type(rows) is not dict:
        raise CacheUnreadable("expected an object of renders")
    found: dict[str, Rendered] = {}
    for key, row in rows.items():
        markdown, slots, late = _row(row, _RENDERED)
        found[key] = Rendered(markdown, _str_map(slots, str), _str_map(late, str))
    return found


def lock_row(lock: Lock) -> list[Any]:
    records = [
        [page, citation, record.sha256, record.first_line, record.line]
        for (page, citation), record in lock.records.items()
    ]
    return [records, lock.exists, [[p.line, p.message] for p in lock.problems]]


def lock_of(row: Any) -> Lock:
    records, exists, problems = _row(row, _LOCK)
    found: dict[tuple[str, str], LockRecord] = {}
    for record in records:
        page, citation, sha256, first_line, line = _row(record, _LOCK_RECORD)
        found[(page, citation)] = LockRecord(sha256, first_line, line)
    return Lock(found, exists, tuple(LockProblem(*_row(p, _LOCK_PROBLEM)) for p in problems))


# --- a long-running process's whole CompileCache (the sidecar's) --------------------------------


def _stamped_rows(cache: StampedCache[T], row: Callable[[T], Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for path, (at, value) in cache.entries.items():
        encoded = row(value)
        if encoded is not None:
            rows.append([str(path), list(at), encoded])
    return rows


def _stamped_of(rows: Any, decode: Callable[[Any], T]) -> StampedCache[T]:
    cache: StampedCache[T] = StampedCache()
    for row in _list(rows):
        path, at, value = _row(row, _STAMPED)
        cache.entries[Path(path)] = (_stamp(at), decode(value))
    return cache


def compile_cache_document(cache: CompileCache) -> dict[str, Any]:
    """A CompileCache as one JSON-ready object."""
    return {
        "pages": _stamped_rows(cache.pages, page_row),
        "sources": _stamped_rows(cache.sources, source_row),
        "chunks": chunks_rows(cache.chunks),
        "lock": _stamped_rows(cache.lock, lock_row),
        "passages": passages_rows(cache.passages),
        "renders": renders_rows(cache.renders),
    }


def compile_cache_of(document: Any) -> CompileCache:
    """The CompileCache a document holds, every value checked (for `read_document`)."""
    if type(document) is not dict or set(document) != _PARTS:
        raise CacheUnreadable("not a compile cache")
    return CompileCache(
        pages=_stamped_of(document["pages"], page_of),
        sources=_stamped_of(document["sources"], source_of),
        chunks=chunks_of(document["chunks"]),
        lock=_stamped_of(document["lock"], lock_of),
        passages=passages_of(document["passages"]),
        renders=dict(renders_of(document["renders"])),
    )


_PARTS = {"pages", "sources", "chunks", "lock", "passages", "renders"}


def rows_of(rows: Any, *kinds: type | tuple[type, ...]) -> Iterable[list[Any]]:
    """Each row of a list of rows, checked against `kinds` (a type, or alternatives, each)."""
    shape = _shape(*kinds)
    return (_row(row, shape) for row in _list(rows))
