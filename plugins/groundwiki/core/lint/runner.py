"""Run every rule over a compiled wiki, then apply the configured severities and the baseline."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import replace

from groundwiki.core.config.wiki_config import ConfigError, RuleSettings

# Each family registers its rules in RULES as it is imported: these imports are what fill it.
from groundwiki.core.lint import (  # noqa: F401
    contract_rules,
    evidence_rules,
    link_rules,
    scope_rules,
    site_rules,
)
from groundwiki.core.lint.baseline import apply_baseline, read_baseline
from groundwiki.core.lint.findings import Finding, LintReport
from groundwiki.core.lint.rules import RULES
from groundwiki.core.model.scopes import USER_DIR
from groundwiki.core.wiki.compiled import Wiki


def check_rule_names(settings: Mapping[str, str], source: str = "mkdocs.yml") -> None:
    """Fail early on a rule name in the configuration that no rule has (a typo, a removed rule);
    settings read from mkdocs.yml know the rule's line, others are named by `source`."""
    unknown = sorted(set(settings) - set(RULES))
    if unknown:
        where = settings.where(unknown[0], source) if isinstance(settings, RuleSettings) else source
        raise ConfigError(
            f"{where}: unknown lint rule '{unknown[0]}' under 'rules'; known rules: "
            + ", ".join(sorted(RULES))
        )


def collect_findings(wiki: Wiki) -> list[Finding]:
    """Every finding of every enabled rule, at its configured severity, before the baseline.

    A scoped wiki is checked as each of its readers sees it: the shared scope whole, then each
    user's view for the findings on that user's own pages (a link there may land on their page
    or on a shared one)."""
    settings = wiki.config.rules
    check_rule_names(settings)
    findings = _findings(wiki, settings)
    scopes = wiki.scopes
    for user in scopes.users:
        own = {page.rel_path for page in scopes.pages_of(user)}
        seen = _findings(scopes.view(user), settings)
        findings += [finding for finding in seen if finding.path in own]
    return sorted(findings, key=lambda f: f.sort_key)


def _findings(wiki: Wiki, settings: Mapping[str, str]) -> list[Finding]:
    """After a change, the per-page rules run on the stale pages only (`Wiki.stale`), and each
    keeps its findings from the last compile on the other pages; the others run whole."""
    kept = wiki.kept_for(_DERIVED) if wiki.user is None else None
    narrow = wiki if kept is None else _narrowed(wiki, kept[1])
    keeps = _keeps(wiki, kept[1]) if kept is not None else None
    findings: list[Finding] = []
    per_page: dict[str, list[Finding]] = {}
    for name, rule in RULES.items():
        setting = settings.get(name, rule.severity)
        if setting == "off":
            continue
        found = [
            replace(finding, severity=setting)
            for finding in rule.check(narrow if rule.per_page else wiki)
        ]
        if rule.per_page:
            if kept is not None and keeps is not None:
                found += [f for f in kept[0].get(name, ()) if keeps(f.path)]
            per_page[name] = found
        findings += found
    if wiki.user is None:
        wiki.derived[_DERIVED] = per_page
    return findings


_DERIVED = "lint"


def _keeps(wiki: Wiki, stale: frozenset[str]) -> Callable[[str], bool]:
    """Whether a per-page finding of the last compile, on the file at this path (from the wiki
    root), is kept: the file is there and not stale. With the same files as then (a keystroke),
    only the stale ones are looked up, not every page file."""
    if wiki.changed_pages is not None:
        by_doc = wiki.pages_by_doc
        redone = {by_doc[doc].rel_path for doc in stale if doc in by_doc}
        return lambda path: path not in redone
    keep = {page.rel_path for page in wiki.all_pages if page.doc_path not in stale}
    return keep.__contains__


def _narrowed(wiki: Wiki, stale: frozenset[str]) -> Wiki:
    """The compile as the per-page rules see it when only the `stale` page files need checking:
    everything else (pages by key, the resolver, sources, the lock) is the whole compile's."""
    if wiki.changed_pages is not None:
        by_doc = wiki.pages_by_doc
        pages = [by_doc[doc] for doc in sorted(stale) if doc in by_doc]
    else:
        pages = [page for page in wiki.all_pages if page.doc_path in stale]
    by_page, states = wiki.links_by_page, wiki.states_by_doc
    narrow = copy.copy(wiki)
    object.__setattr__(narrow, "all_pages", pages)
    narrow.__dict__["resolved_links"] = tuple(
        item for page in pages for item in by_page[page.doc_path]
    )
    narrow.__dict__["citation_states"] = tuple(
        state for page in pages for state in states.get(page.doc_path, ())
    )
    return narrow


def run_lint(wiki: Wiki, use_baseline: bool = True) -> LintReport:
    return report_of(wiki, collect_findings(wiki), use_baseline)


def report_of(wiki: Wiki, findings: list[Finding], use_baseline: bool = True) -> LintReport:
    """The report of these findings, those in the baseline silenced."""
    if not use_baseline:
        return LintReport(tuple(findings), 0)
    active, silenced = apply_baseline(findings, read_baseline(wiki.config.baseline_path))
    return LintReport(tuple(active), silenced)


def shared_report(wiki: Wiki, findings: list[Finding], use_baseline: bool = True) -> LintReport:
    """The report a reader of the shared scope may read, as a site that publishes no user's
    pages shows it: no finding on a file under user/ (a user's page, a page of no one's), and
    each other finding in its shared form (a scope leak that does not name the user's page).
    The command line's report keeps them all: whoever runs it has every file."""
    private = wiki.config.rel(wiki.config.docs_dir / USER_DIR) + "/"
    report = report_of(wiki, [f for f in findings if not f.path.startswith(private)], use_baseline)
    # After the baseline, which matches each finding as the command line writes it.
    return LintReport(tuple(f.for_shared_scope() for f in report.findings), report.baselined)
