"""The lint rules' registry: `RULES` by name, the `@rule` decorator that registers a rule, the
`finding` a rule yields, and what the rule families share.

A rule is a function that reads the compiled `Wiki` and yields findings at its default severity;
the runner applies the severities configured in mkdocs.yml and the baseline. The rules live in
families, one module each: contract_rules (the page contract), link_rules (links and embeds),
scope_rules (the shared scope and each user's), site_rules (what the site shows of a page or a
source) and evidence_rules (citations, raw sources and the lock). A family registers its rules
as it is imported, and runner.py imports every family, so `RULES` holds them all once the lint
package is loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from groundwiki.core.config.excerpt import detail_key, excerpt
from groundwiki.core.lint.findings import Finding
from groundwiki.core.model.records import Link, Location, Page
from groundwiki.core.wiki.compiled import Wiki

Check = Callable[[Wiki], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    name: str
    severity: str
    summary: str
    check: Check
    # Each finding is on the page file it checks and follows from that page and what it
    # depends on (core/wiki/dependencies.py): after a change, the rule runs on the stale pages
    # only (the runner narrows `all_pages`, `resolved_links` and `citation_states` to them).
    per_page: bool = False


RULES: dict[str, Rule] = {}


def rule(
    name: str, severity: str, summary: str, *, per_page: bool = False
) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES[name] = Rule(name, severity, summary, check, per_page)
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


def page_at(page: Page, line: int = 1) -> Location:
    return Location(page.rel_path, line, 1)


def recorded(wiki: Wiki, name: str) -> Iterator[Finding]:
    """Problems found while reading page files, on every file: a duplicate-key one included, so
    that renaming it later does not reveal a second round of problems."""
    for page in wiki.all_pages:
        for problem in page.problems:
            if problem.rule == name:
                yield finding(name, problem.at, problem.message, problem.hint, problem.detail)


def link_kind(link: Link) -> str:
    """How a finding names a link's kind."""
    return {"wikilink": "wikilink", "link": "Markdown link", "ref": "ref"}[link.kind]
