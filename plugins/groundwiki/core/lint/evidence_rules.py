"""The evidence rules: citations that escape raw-sources, cannot be read or cite a missing
source; raw sources that cannot be read or that no page cites; citations the lock does not
record, whose text changed or moved since it was locked; lock lines that cannot be read and
records of pages that are gone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.evidence.citations import cited_text
from groundwiki.core.lint.findings import Finding
from groundwiki.core.lint.kept import changed_paths, counted, every_page, kept_while
from groundwiki.core.lint.rules import finding, recorded, rule
from groundwiki.core.model.records import Location, Page
from groundwiki.core.model.scopes import USER_PREFIX, scoped_name
from groundwiki.core.sources.hygiene import JUNK_KINDS
from groundwiki.core.wiki.compiled import Wiki


@rule(
    "source-outside-raw",
    "error",
    "A citation whose path escapes the raw-sources folder.",
    per_page=True,
)
def source_outside_raw(wiki: Wiki) -> Iterator[Finding]:
    yield from recorded(wiki, "source-outside-raw")


@rule(
    "invalid-citation",
    "error",
    "A citation that cannot be read, or whose lines are past the end.",
    per_page=True,
)
def invalid_citation(wiki: Wiki) -> Iterator[Finding]:
    yield from recorded(wiki, "invalid-citation")
    moved = {id(s.citation) for s in wiki.citation_states if s.status == "moved"}
    locked = {id(s.citation) for s in wiki.citation_states if s.record is not None}
    for page in wiki.all_pages:
        for citation in page.citations:
            source = wiki.sources.get(citation.source)
            if source is None or id(citation) in moved:
                continue
            if source.text is None:
                yield finding(
                    "invalid-citation",
                    citation.at,
                    f"citation '{excerpt(citation.raw)}' cites a source that cannot be read: "
                    f"{source.problem}",
                    "restore the source, or cite readable evidence"
                    + ("; the lock keeps its recorded hash" if id(citation) in locked else ""),
                    citation.raw,
                )
            elif citation.is_range and cited_text(citation, source) is None:
                yield finding(
                    "invalid-citation",
                    citation.at,
                    f"citation '{excerpt(citation.raw)}' ends at line {citation.end}, "
                    f"but the source has {source.line_count} lines",
                    "cite lines that exist in the source",
                    citation.raw,
                )


@rule(
    "missing-source",
    "error",
    "A citation of a file that does not exist in raw-sources.",
    per_page=True,
)
def missing_source(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        for citation in page.citations:
            if citation.source in wiki.sources:
                continue
            # Made on the first missing source, and kept while the sources are.
            by_name = kept_while(
                wiki, "missing-source-names", (wiki.sources,), lambda: _names(wiki)
            )
            close = by_name.get(citation.source.rsplit("/", 1)[-1], [])[:3]
            prefix = wiki.config.raw_prefix
            hint = (
                f"did you mean {', '.join(f'{prefix}/{path}' for path in close)}?"
                if close
                else f"add the file under {wiki.config.raw_prefix}/ or fix the path"
            )
            yield finding(
                "missing-source",
                citation.at,
                f"cited source '{excerpt(f'{wiki.config.raw_prefix}/{citation.source}')}' "
                "does not exist",
                hint,
                citation.raw,
            )


def _names(wiki: Wiki) -> dict[str, list[str]]:
    """The raw sources by file name, each name's paths in order."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in sorted(wiki.sources):
        by_name[path.rsplit("/", 1)[-1]].append(path)
    return by_name


@rule("unreadable-source", "warning", "A raw source whose text cannot be extracted; it is skipped.")
def unreadable_source(wiki: Wiki) -> Iterator[Finding]:
    for source in wiki.sources.values():
        if source.problem:
            # The location is the archive's file: the message names which member.
            member = f" '{wiki.config.raw_prefix}/{source.path}'" if source.in_archive else ""
            yield finding(
                "unreadable-source",
                Location(wiki.config.rel(source.abs_path), 1, 1),
                f"skipped raw source{member}: {source.problem}",
                source.hint or "remove it, or replace it with a readable copy",
                source.path,
            )


@rule("uncited-source", "info", "A raw source no page cites.")
def uncited_source(wiki: Wiki) -> Iterator[Finding]:
    pages = every_page(wiki)
    cited = counted(wiki, "uncited-source-cited", pages, _sources_cited, changed_paths(wiki))
    for path, source in wiki.sources.items():
        if path not in cited and source.text is not None:
            yield finding(
                "uncited-source",
                Location(wiki.config.rel(source.abs_path), 1, 1),
                f"no page cites '{wiki.config.raw_prefix}/{path}'",
                "cite it from the page it supports, or remove it if it supports nothing",
                path,
            )


def _sources_cited(page: Page) -> set[str]:
    return {citation.source for citation in page.citations}


@rule("unlocked-source", "warning", "A citation the lock file does not record yet.", per_page=True)
def unlocked_source(wiki: Wiki) -> Iterator[Finding]:
    lock_name = wiki.config.rel(wiki.config.lock_path)
    missing = "" if wiki.lock.exists else " (there is no lock file yet)"
    for state in wiki.citation_states:
        if state.status == "unlocked":
            yield finding(
                "unlocked-source",
                state.citation.at,
                f"citation '{excerpt(state.name)}' is not in {lock_name}{missing}",
                "run `groundwiki lock` once you have checked that the cited text supports the page",
                state.name,
            )


@rule("drifted-source", "warning", "Cited text changed since it was locked.", per_page=True)
def drifted_source(wiki: Wiki) -> Iterator[Finding]:
    for state in wiki.citation_states:
        if state.status == "drifted":
            yield finding(
                "drifted-source",
                state.citation.at,
                f"the text cited as '{excerpt(state.name)}' changed since it was locked",
                "re-read the source, update the page if its claim no longer holds, then run "
                "`groundwiki lock`",
                state.name,
            )


@rule(
    "moved-source",
    "warning",
    "Cited text that now stands at other lines of the same source.",
    per_page=True,
)
def moved_source(wiki: Wiki) -> Iterator[Finding]:
    for state in wiki.citation_states:
        if state.status == "moved" and state.moved_to:
            start, end = state.moved_to
            lines = f"L{start}" if start == end else f"L{start}-L{end}"
            new = f"{wiki.config.raw_prefix}/{state.citation.source}#{lines}"
            yield finding(
                "moved-source",
                state.citation.at,
                f"the text cited as '{excerpt(state.name)}' now stands at lines {start}-{end}",
                f"run `groundwiki lock --fix-moved` to change the citation to '{new}' and "
                "relock it",
                state.name,
            )


@rule("invalid-lock", "error", "A line of the lock file that cannot be read.")
def invalid_lock(wiki: Wiki) -> Iterator[Finding]:
    path = wiki.config.rel(wiki.config.lock_path)
    for problem in wiki.lock.problems:
        yield finding(
            "invalid-lock",
            Location(path, problem.line, 1),
            f"cannot read this lock line: {problem.message}",
            "run `groundwiki lock` to rewrite the lock file (after a merge conflict, too)",
            str(problem.line),
        )


def _lock_names(page: Page) -> set[str]:
    """The names the lock may record a page's citations under: its own, and its aliases."""
    return {page.uid} | {scoped_name(page.scope, alias.lower()) for alias in page.aliases}


@rule("stale-lock-entry", "info", "Lock records of a page that no longer exists.")
def stale_lock_entry(wiki: Wiki) -> Iterator[Finding]:
    pages = every_page(wiki)
    known = counted(wiki, "stale-lock-entry-names", pages, _lock_names, changed_paths(wiki))
    path = wiki.config.rel(wiki.config.lock_path)
    lock = wiki.lock
    recorded_pages = kept_while(
        wiki, "stale-lock-entry-pages", (lock,), lambda: sorted(lock.pages().items())
    )
    for key, line in recorded_pages:
        if key not in known:
            # A user's key (`user:bob/...`) is theirs: the shared scope's readers learn only
            # that the lock holds a stale record of some user's page.
            private = key.startswith(USER_PREFIX)
            yield finding(
                "stale-lock-entry",
                Location(path, line, 1),
                f"the lock records citations of '{excerpt(key)}', which is no page or alias",
                "run `groundwiki lock` to drop them; if the page was renamed, add its old key to "
                "the new page's aliases first so its citations stay checked",
                key,
                ("the lock records citations of a user's page that is gone", "")
                if private
                else None,
            )


@rule(
    "junk-chunks",
    "info",
    "Chunks of a raw source that are binary data, encoded blobs or near-empty: cut and "
    "citable, but neither embedded nor ranked.",
)
def junk_chunks(wiki: Wiki) -> Iterator[Finding]:
    for path, junk in wiki.junk_chunks.items():
        source = wiki.sources[path]
        first = junk[0][0]
        shown = "; ".join(
            f"lines {chunk.start_line}-{chunk.end_line}: {JUNK_KINDS[kind]}"
            for chunk, kind in junk[:_SHOWN_JUNK]
        )
        more = f"; and {len(junk) - _SHOWN_JUNK} more" if len(junk) > _SHOWN_JUNK else ""
        total = len(wiki.chunks_of(source))
        # A member's lines are not its archive's: the message names the member instead.
        member = f"'{wiki.config.raw_prefix}/{path}': " if source.in_archive else ""
        yield finding(
            "junk-chunks",
            Location(wiki.config.rel(source.abs_path), 1 if member else first.start_line, 1),
            f"{member}{len(junk)} of {total} chunks are not indexed for search ({shown}{more})",
            "nothing to do if that is junk; if it is text to be found, set skip_junk_chunks: "
            "false (or the junk_ thresholds) in mkdocs.yml",
            path,
        )


_SHOWN_JUNK = 3  # the chunks a junk-chunks finding lists by line


@rule(
    "duplicate-source",
    "info",
    "A raw source whose text is another's: searched as that one, citable as itself.",
)
def duplicate_source(wiki: Wiki) -> Iterator[Finding]:
    prefix = wiki.config.raw_prefix
    for path, original in wiki.copies.items():
        source = wiki.sources[path]
        yield finding(
            "duplicate-source",
            Location(wiki.config.rel(source.abs_path), 1, 1),
            f"'{prefix}/{path}' holds the same text as '{prefix}/{original}': its chunks are "
            "searched as that file's (both stay citable)",
            "nothing to do if the copy is meant; otherwise remove one and cite the other",
            path,
        )
