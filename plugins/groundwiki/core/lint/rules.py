"""The lint rules. Each is a function named after its rule; `RULES` maps names to rules.

A rule reads the compiled `Wiki` and yields findings at its default severity; the runner applies
the severities configured in mkdocs.yml and the baseline.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundwiki.core.config.excerpt import detail_key, excerpt
from groundwiki.core.evidence.citations import cited_text
from groundwiki.core.links.anchors import Anchors
from groundwiki.core.links.resolver import normalise
from groundwiki.core.lint.findings import Finding
from groundwiki.core.model.records import Link, Location, Page
from groundwiki.core.model.scopes import USER_DIR, USER_PREFIX, scoped_name, user_scope
from groundwiki.core.read.markdown import MAX_INDENT, MAX_LIST_DEPTH, too_deep_lines
from groundwiki.core.wiki.transclusion import first_capped

if TYPE_CHECKING:
    from groundwiki.core.wiki.compiler import ResolvedLink, Wiki

Check = Callable[["Wiki"], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    name: str
    severity: str
    summary: str
    check: Check


RULES: dict[str, Rule] = {}


def rule(name: str, severity: str, summary: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES[name] = Rule(name, severity, summary, check)
        return check

    return register


# A message quotes values through `excerpt`; this bound catches any that slipped past.
_MAX_MESSAGE = 1_000


def finding(
    rule_name: str,
    at: Location,
    message: str,
    hint: str,
    detail: str = "",
    shared: tuple[str, str] | None = None,
) -> Finding:
    """`shared`: the message and detail for readers of the shared scope, when these name what
    only one user may read (see `Finding.shared`)."""
    return Finding(
        rule_name,
        RULES[rule_name].severity,
        at.path,
        at.line,
        at.column,
        excerpt(message, _MAX_MESSAGE),
        excerpt(hint, _MAX_MESSAGE),
        detail_key(detail),
        None if shared is None else (excerpt(shared[0], _MAX_MESSAGE), detail_key(shared[1])),
    )


def _page_at(page: Page, line: int = 1) -> Location:
    return Location(page.rel_path, line, 1)


# --- The page contract ----------------------------------------------------------------------


def _recorded(wiki: Wiki, name: str) -> Iterator[Finding]:
    """Problems found while reading page files, on every file: a duplicate-key one included, so
    that renaming it later does not reveal a second round of problems."""
    for page in wiki.all_pages:
        for problem in page.problems:
            if problem.rule == name:
                yield finding(name, problem.at, problem.message, problem.hint, problem.detail)


@rule("unreadable-page", "error", "A page file that is not readable UTF-8 text.")
def unreadable_page(wiki: Wiki) -> Iterator[Finding]:
    yield from _recorded(wiki, "unreadable-page")


@rule("invalid-frontmatter", "error", "Frontmatter that is not valid YAML or not a mapping.")
def invalid_frontmatter(wiki: Wiki) -> Iterator[Finding]:
    yield from _recorded(wiki, "invalid-frontmatter")


@rule(
    "schema-violation", "error", "A frontmatter field that breaks the page contract (JSON Schema)."
)
def schema_violation(wiki: Wiki) -> Iterator[Finding]:
    yield from _recorded(wiki, "schema-violation")


@rule(
    "missing-summary",
    "info",
    "A page without a one-line `summary` (or `tldr`, or `description`): by default its first "
    "sentence stands in (option missing_summary).",
)
def missing_summary(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        problems = {(p.rule, p.detail) for p in page.problems}
        unparsed = any(
            rule in {"invalid-frontmatter", "unreadable-page", "page-outside-wiki"}
            for rule, _ in problems
        )
        already = problems & {
            ("schema-violation", name) for name in ("summary", "tldr", "description")
        }
        if (page.summary and not page.summary_derived) or unparsed or already:
            continue
        if page.summary_derived:
            message = f"page '{page.key}' has no summary: its first sentence stands in"
        elif wiki.config.missing_summary == "derive":
            message = (
                f"page '{page.key}' has no summary, and no paragraph of prose to take one from"
            )
        else:
            message = f"page '{page.key}' has no summary"
        yield finding(
            "missing-summary",
            _page_at(page),
            message,
            "add a one-line 'summary:' (or 'description:') to the frontmatter saying what the "
            "page is for",
            page.key,
        )


@rule("duplicate-key", "error", "Two page files whose names differ only in case, in one folder.")
def duplicate_key(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        first = wiki.pages[page.key]
        if first is not page:
            yield finding(
                "duplicate-key",
                _page_at(page),
                f"key '{page.key}' is already used by {first.rel_path}",
                "rename or merge one of the files: links cannot tell them apart (names are "
                "compared without case, as Obsidian does)",
                page.key,
            )


@rule(
    "alias-collision",
    "warning",
    "A link by an alias that several pages claim.",
)
def alias_collision(wiki: Wiki) -> Iterator[Finding]:
    """Shared aliases are common in real vaults (two people called Chen) and harmless until a
    link uses one: only then is the target a guess, so only then is it reported, at the link.
    A page's own name always wins over an alias (in Obsidian aliases are no link targets at
    all), so an alias that is another page's name is no collision."""
    claims: dict[str, list[Page]] = defaultdict(list)
    for page in sorted(wiki.pages.values(), key=lambda p: p.rel_path):
        for alias in page.aliases:
            claims[normalise(alias)].append(page)
    if not claims:
        return
    for item in wiki.resolved_links:
        resolution = item.resolution
        if resolution is None or resolution.via != "alias":
            continue
        claimants = [
            p for p in claims.get(normalise(item.link.target), ()) if p.key != resolution.key
        ]
        if not claimants:
            continue
        chosen = wiki.pages[resolution.key]
        others = ", ".join(p.rel_path for p in claimants[:3])
        yield finding(
            "alias-collision",
            item.link.at,
            f"'{excerpt(item.link.target)}' is an alias of {chosen.rel_path} (followed) and "
            f"of {others}",
            "link by the page's key or path, or keep the alias on one page only",
            item.link.target,
        )


# --- Links --------------------------------------------------------------------------------


def _describe(link: Link) -> str:
    return {"wikilink": "wikilink", "link": "Markdown link", "ref": "ref"}[link.kind]


@rule("broken-link", "error", "A wikilink, embed, ref or Markdown link to no page or file.")
def broken_link(wiki: Wiki) -> Iterator[Finding]:
    suggestions = _KeySuggestions(wiki.pages)
    for item in wiki.resolved_links:
        if item.broken and _leak(wiki, item) is None:
            link = item.link
            what = "page or file" if link.kind == "wikilink" else "page"
            yield finding(
                "broken-link",
                link.at,
                f"{_describe(link)} '{excerpt(link.raw or link.target)}' points to no {what}",
                _link_hint(link, suggestions),
                f"{link.kind}:{link.target}",
            )


@dataclass(frozen=True)
class _Leak:
    path: str  # as findings print paths
    scope: str  # the user's scope
    what: str  # "page" or "file"


def _leak(wiki: Wiki, item: ResolvedLink) -> _Leak | None:
    """Where a shared page's link that lands nowhere in the shared view lands in a user's view:
    on their page (`Wiki.leak_target`), or on a file of their own folder, which the shared view
    does not see either. Only the shared view reports leaks."""
    target = wiki.leak_target(item.link)
    if target is not None:
        return _Leak(target.rel_path, target.scope, "page")
    if wiki.base is not None or item.link.kind != "wikilink":
        return None
    for view in wiki.scope_views[1:]:
        found = view.resolver.attachment(item.link, item.page.doc_path)
        if found is not None:  # none in the shared view, so the user's own
            path = wiki.config.rel(wiki.config.docs_dir / found.path)
            return _Leak(path, user_scope(view.user), "file")
    return None


@rule(
    "scope-leak",
    "error",
    "A shared page's link that lands only on a user's own page or file: shared pages must not "
    "depend on one user's notes.",
)
def scope_leak(wiki: Wiki) -> Iterator[Finding]:
    for item in wiki.resolved_links:
        leak = _leak(wiki, item) if item.broken else None
        if leak is not None:
            link, what = item.link, leak.what
            quoted = f"{_describe(link)} '{excerpt(link.raw or link.target)}'"
            detail = f"{link.kind}:{link.target}"
            yield finding(
                "scope-leak",
                link.at,
                f"{quoted} lands only on {leak.path}, a {what} of {leak.scope}; other readers "
                f"find no {what} there",
                f"move the {what} (or what the link needs from it) into the shared pages, or "
                "drop the link"
                if what == "page"
                else f"move the file out of {USER_DIR}/ into the shared folders, or drop the link",
                detail,
                # The site of the shared scope names neither the user nor their page or file.
                (
                    f"{quoted} lands only on one user's own {what}; other readers find no {what} "
                    "there",
                    detail,
                ),
            )


@rule(
    "shadowed-page",
    "info",
    "A user's page with the key of a shared page: that user sees theirs in its place.",
)
def shadowed_page(wiki: Wiki) -> Iterator[Finding]:
    for user in wiki.users:
        for page in wiki.user_pages[user]:
            shared = wiki.shadowed(page)
            if shared is None or wiki.view(user).pages.get(page.key) is not page:
                continue
            yield finding(
                "shadowed-page",
                _page_at(page),
                f"{page.rel_path} shadows {shared.rel_path} for {user}: their searches, links "
                "and pages show this one instead",
                "nothing to do if that is meant; rename the page to keep both in view",
                page.key,
            )


@rule(
    "ambiguous-link",
    "warning",
    "A link by name that fits pages in several folders; the site follows the one Obsidian picks.",
)
def ambiguous_link(wiki: Wiki) -> Iterator[Finding]:
    for item in wiki.resolved_links:
        resolution = item.resolution
        if resolution is None or not resolution.candidates:
            continue
        chosen = wiki.pages[resolution.key]
        others = ", ".join(wiki.pages[key].rel_path for key in resolution.candidates[:3])
        more = len(resolution.candidates) - 3
        if more > 0:
            others += f" and {more} more"
        yield finding(
            "ambiguous-link",
            item.link.at,
            f"'{excerpt(item.link.raw or item.link.target)}' fits {chosen.rel_path} "
            f"(followed) and {others}",
            f"write the path to the page you mean, e.g. [[{chosen.doc_path.removesuffix('.md')}]]",
            f"{item.link.target}",
        )


class _KeySuggestions:
    """Keys sharing words with a broken target, found through a word index (no scan per link)."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.by_word: dict[str, set[str]] = defaultdict(set)
        for key in keys:
            for word in _words(key):
                self.by_word[word].add(key)

    def close_to(self, target: str, limit: int = 3) -> list[str]:
        shared: Counter[str] = Counter()
        for word in _words(target):
            shared.update(self.by_word.get(word, ()))
        return [key for key, _ in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[\s\-_/.]+", normalise(name)) if w]


def _link_hint(link: Link, suggestions: _KeySuggestions) -> str:
    if link.kind == "link":
        return "fix the relative path to the .md file, or use a [[key]] wikilink"
    close = suggestions.close_to(link.target)
    if close:
        return f"did you mean {', '.join(f'[[{k}]]' for k in close)}? (keys are file names without .md)"
    return "create the page, add the name to a page's 'aliases', or fix the key"


@rule(
    "broken-anchor", "warning", "A link to a heading or block that the target page does not have."
)
def broken_anchor(wiki: Wiki) -> Iterator[Finding]:
    anchors: dict[str, Anchors] = {}  # by key: a page's headings indexed once for all its links
    for item in wiki.resolved_links:
        link = item.link
        if not link.anchor or item.resolution is None:
            continue
        target = wiki.pages[item.resolution.key]
        if target.key not in anchors:
            anchors[target.key] = Anchors(target)
        if anchors[target.key].find(link.anchor) is not None:
            continue
        what = "block" if link.anchor.startswith("^") else "heading"
        yield finding(
            "broken-anchor",
            link.at,
            f"'{target.key}' has no {what} '{excerpt(link.anchor)}'",
            f"link to an existing {what} of that page, or drop the '#...' part",
            f"{target.key}#{link.anchor}",
        )


@rule(
    "deep-list",
    "warning",
    f"A list nested more than {MAX_LIST_DEPTH} levels deep: the site shows the deeper items at "
    "that level.",
)
def deep_list(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        code = page.body_map.code_and_headings if page.body_map else ()
        deep = too_deep_lines(page.body, code)
        if deep:
            yield finding(
                "deep-list",
                _page_at(page, page.body_line + deep[0]),
                f"{len(deep):,} lines are indented more than {MAX_INDENT} columns (a list "
                f"{MAX_LIST_DEPTH} levels deep); the site shows them at that depth",
                "nest less deeply: split the list, or use headings for its outer levels",
            )


@rule(
    "transclusion-capped",
    "warning",
    "A page whose embeds, with the embeds inside them, transclude more than one page may show.",
)
def transclusion_capped(wiki: Wiki) -> Iterator[Finding]:
    for page in wiki.all_pages:
        if not any(link.embed for link in page.links):
            continue
        capped = first_capped(wiki, page)
        if capped is not None:
            link, why = capped
            yield finding(
                "transclusion-capped",
                link.at,
                f"'{excerpt(link.raw, 80)}' reaches the transclusion limit: {why}; the embeds "
                "past it show a note and a link",
                "embed sections (`![[note#Heading]]`) or link (`[[note]]`) instead of embedding "
                "whole notes that embed others",
            )


@rule("link-to-archived", "warning", "A live page linking to an archived page.")
def link_to_archived(wiki: Wiki) -> Iterator[Finding]:
    for item in wiki.resolved_links:
        if item.resolution is None or item.page.archived_since:
            continue
        target = wiki.pages[item.resolution.key]
        if target.archived_since:
            yield finding(
                "link-to-archived",
                item.link.at,
                f"links to '{target.key}', archived since {target.archived_since}",
                "link to the page that replaced it, or remove the link",
                target.key,
            )


@rule("orphan-page", "info", "A page no other page links to.")
def orphan_page(wiki: Wiki) -> Iterator[Finding]:
    inbound = {
        item.resolution.key
        for item in wiki.resolved_links
        if item.resolution is not None and item.resolution.key != item.page.key
    }
    for key, page in wiki.pages.items():
        if key in inbound or page.kind == "overview" or page.doc_path == "index.md":
            continue
        yield finding(
            "orphan-page",
            _page_at(page),
            f"no page links to '{key}'",
            f"link to it with [[{key}]] from a related page, or list it in that page's refs",
            key,
        )


# --- Provenance ---------------------------------------------------------------------------


@rule("source-outside-raw", "error", "A citation whose path escapes the raw-sources folder.")
def source_outside_raw(wiki: Wiki) -> Iterator[Finding]:
    yield from _recorded(wiki, "source-outside-raw")


@rule(
    "invalid-citation", "error", "A citation that cannot be read, or whose lines are past the end."
)
def invalid_citation(wiki: Wiki) -> Iterator[Finding]:
    yield from _recorded(wiki, "invalid-citation")
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


@rule("missing-source", "error", "A citation of a file that does not exist in raw-sources.")
def missing_source(wiki: Wiki) -> Iterator[Finding]:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in sorted(wiki.sources):
        by_name[path.rsplit("/", 1)[-1]].append(path)
    for page in wiki.all_pages:
        for citation in page.citations:
            if citation.source in wiki.sources:
                continue
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


@rule("unreadable-source", "warning", "A raw source whose text cannot be extracted; it is skipped.")
def unreadable_source(wiki: Wiki) -> Iterator[Finding]:
    for source in wiki.sources.values():
        if source.problem:
            yield finding(
                "unreadable-source",
                Location(wiki.config.rel(source.abs_path), 1, 1),
                f"skipped raw source: {source.problem}",
                source.hint or "remove it, or replace it with a readable copy",
                source.path,
            )


@rule("uncited-source", "info", "A raw source no page cites.")
def uncited_source(wiki: Wiki) -> Iterator[Finding]:
    cited = {c.source for page in wiki.every_page for c in page.citations}
    for path, source in wiki.sources.items():
        if path not in cited and source.text is not None:
            yield finding(
                "uncited-source",
                Location(wiki.config.rel(source.abs_path), 1, 1),
                f"no page cites '{wiki.config.raw_prefix}/{path}'",
                "cite it from the page it supports, or remove it if it supports nothing",
                path,
            )


@rule(
    "large-source",
    "warning",
    "A raw source longer than its page shows (option source_page_lines): the page shows its "
    "first lines and the cited ranges, and links the full text.",
)
def large_source(wiki: Wiki) -> Iterator[Finding]:
    cap = wiki.config.source_page_cap
    if cap is None:  # no raw-source pages are built
        return
    for path, source in wiki.sources.items():
        if source.text is not None and source.line_count > cap:
            yield finding(
                "large-source",
                Location(wiki.config.rel(source.abs_path), 1, 1),
                f"'{wiki.config.raw_prefix}/{path}' has {source.line_count:,} lines; its page "
                f"shows lines 1–{cap:,} and the cited ranges, and links the full text",
                "raise source_page_lines in mkdocs.yml to show more, split the file, or set "
                "rules: large-source: off to accept it",
                path,
            )


# --- The lock -----------------------------------------------------------------------------


@rule("unlocked-source", "warning", "A citation the lock file does not record yet.")
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


@rule("drifted-source", "warning", "Cited text changed since it was locked.")
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


@rule("moved-source", "warning", "Cited text that now stands at other lines of the same source.")
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


@rule(
    "missing-rename-alias",
    "info",
    "A page renamed in git history whose former name is not among its aliases.",
)
def missing_rename_alias(wiki: Wiki) -> Iterator[Finding]:
    for old, page in wiki.renamed_from.items():
        former = old.rsplit("/", 1)[-1].removesuffix(".md")
        if normalise(former) == normalise(page.path.stem):
            continue  # moved to another folder under its name: links by name still find it
        if wiki.resolver.resolve_name(former) is not None:
            continue  # the name is an alias already, or another page's now
        yield finding(
            "missing-rename-alias",
            _page_at(page),
            f"'{page.key}' was '{excerpt(old)}' before a rename in git history; links by the "
            f"name '{excerpt(former)}' no longer reach it (its old URL redirects here)",
            f"add it to the page's aliases: aliases: [{excerpt(former)}] (groundwiki rename "
            "does this when it renames)",
            old,
        )


@rule("stale-lock-entry", "info", "Lock records of a page that no longer exists.")
def stale_lock_entry(wiki: Wiki) -> Iterator[Finding]:
    known = {p.uid for p in wiki.every_page} | {
        scoped_name(p.scope, a.lower()) for p in wiki.every_page for a in p.aliases
    }
    path = wiki.config.rel(wiki.config.lock_path)
    for key, line in sorted(wiki.lock.pages().items()):
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
    "page-outside-wiki",
    "error",
    "A page file that is a symlink to a file outside the wiki folder (never read or published).",
)
def page_outside_wiki(wiki: Wiki) -> Iterator[Finding]:
    yield from _recorded(wiki, "page-outside-wiki")


@rule(
    "misplaced-user-page",
    "error",
    "A page file directly under user/, in no user's folder: no one's, so never read or published.",
)
def misplaced_user_page(wiki: Wiki) -> Iterator[Finding]:
    if wiki.user is not None:
        return  # the shared view reports it once; it is in no user's view
    for doc in wiki.refused:
        name = doc.rsplit("/", 1)[-1]
        stem = name.removesuffix(".md")
        yield finding(
            "misplaced-user-page",
            Location(wiki.config.rel(wiki.config.docs_dir / doc), 1, 1),
            f"{doc} is directly under {USER_DIR}/, in no user's folder: it belongs to no one, "
            "so it is left out of the wiki (not shared, searched or published)",
            f"move it to {USER_DIR}/{stem}/{name} if it is {stem}'s own page, or to "
            f"global/{name} to share it",
            doc,
        )
