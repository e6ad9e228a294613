"""One compile per build: the wiki, its lint report (all of it, and what the site may show of
it), its link graph and backlinks, and every published page by the path MkDocs knows it by."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from mkdocs.exceptions import PluginError

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.lint import LintReport
from groundwiki.core.lint.runner import collect_findings, report_of, shared_report
from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import user_of
from groundwiki.core.model.site_paths import LINT_PAGE
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki
from groundwiki.core.wiki.graph import Graph, build_graph

log = logging.getLogger("mkdocs.plugins.groundwiki")

Backlinks = dict[str, tuple[str, ...]]  # page key -> keys of the pages linking to it


@dataclass
class CompiledSite:
    wiki: Wiki
    report: LintReport  # every finding: the build log and --strict
    site_report: LintReport  # what the site's readers may read of it
    graph: Graph
    backlinks: Backlinks
    # A user's page is rendered as that user sees the wiki, with their backlinks.
    user_backlinks: dict[str, Backlinks]
    pages_by_doc: dict[str, Page]  # src_uri -> the page, users' pages included

    def backlinks_of(self, page: Page) -> Backlinks:
        """The backlinks of the view `page` is rendered in."""
        user = user_of(page.scope)
        return self.backlinks if user is None else self.user_backlinks[user]

    def view_of(self, page: Page) -> Wiki:
        """The wiki as `page`'s owner sees it (the shared wiki for a shared page)."""
        return self.wiki.scopes.view(user_of(page.scope))


def compile_site(
    config: Config, scopes: str, cache: CompileCache, changed: Collection[Path] | None = None
) -> CompiledSite:
    """The wiki compiled (reusing `cache`) and linted; `scopes` is the site's option: "all"
    publishes users' pages too, "global" keeps them and their findings out. `changed`: the
    paths changed since the last compile of `cache`, when file events named them all."""
    wiki = compile_wiki(config, files=cache, changed=changed)
    findings = collect_findings(wiki)
    report = report_of(wiki, findings)
    # A site of the shared scope carries no user's findings (nor their pages, their paths).
    private = wiki.scoped and scopes == "global"
    site_report = shared_report(wiki, findings) if private else report
    graph = build_graph(wiki)
    backlinks = graph.backlinks()
    pages_by_doc = {page.doc_path: page for page in wiki.all_pages}
    user_backlinks: dict[str, Backlinks] = {}
    if scopes == "all":
        for user in wiki.scopes.users:
            user_backlinks[user] = build_graph(wiki.scopes.view(user)).backlinks()
            for page in wiki.scopes.pages_of(user):
                pages_by_doc[page.doc_path] = page
    return CompiledSite(wiki, report, site_report, graph, backlinks, user_backlinks, pages_by_doc)


def log_findings(site: CompiledSite, strict: bool, per_rule: int = 0) -> None:
    """The build log's findings: each error and warning on its line, up to `per_rule` of one
    rule (0: all), then one line counting that rule's rest; the infos counted on one line (a
    wiki of thousands of pages has thousands; the site's lint report lists them). Under the
    core's `strict`, a report that fails it stops the build."""
    report = site.report
    report_url = site.wiki.layout.url(LINT_PAGE)
    logged: Counter[str] = Counter()
    for finding in report.shown("warning"):
        logged[finding.rule] += 1
        if per_rule and logged[finding.rule] > per_rule:
            continue
        text = (
            f"{finding.path}:{finding.line}:{finding.column}: {finding.rule}: "
            f"{finding.message} ({finding.hint})"
        )
        # MkDocs' --strict fails on warnings: only lint errors are logged at that level.
        (log.warning if finding.severity == "error" else log.info)(text)
    for rule, count in sorted(logged.items()):
        if per_rule and count > per_rule:
            rest = count - per_rule
            log.info(
                f"groundwiki: {rest} more {rule} finding{'s' if rest != 1 else ''} not listed "
                f"here ({count} in all): the site's lint report ({report_url}) and "
                "`groundwiki lint --min-severity warning` list them (log_per_rule: 0 logs all)"
            )
    infos = report.not_shown("warning")["info"]
    if infos:
        log.info(
            f"groundwiki: {infos} lint info{'s' if infos != 1 else ''} ({_by_rule(report)}) "
            f"not listed here: the site's lint report ({report_url}) "
            "and `groundwiki lint --min-severity info` list them"
        )
    if strict and report.failed(strict=True):
        counts = report.counts
        raise PluginError(
            f"groundwiki strict: {counts['error']} errors and {counts['warning']} warnings"
        )


def _by_rule(report: LintReport, most: int = 3) -> str:
    """The infos' rules, the commonest first: `6556 missing-summary, 4 orphan-page`."""
    counted = Counter(f.rule for f in report.findings if f.severity == "info")
    rules = sorted(counted.items(), key=lambda item: (-item[1], item[0]))
    text = ", ".join(f"{count} {rule}" for rule, count in rules[:most])
    more = len(rules) - most
    return text + (f" and {more} more rule{'s' if more != 1 else ''}" if more > 0 else "")


def fail_quiet_strict(report: LintReport, strict: bool) -> None:
    """Under MkDocs' `strict`, a report with errors stops the build even when the log shows no
    warnings: MkDocs' --strict counts only the warnings its logger lets through, so under -q
    none reach it, and a wiki with broken links would pass."""
    errors = report.counts["error"]
    if strict and errors and not log.isEnabledFor(logging.WARNING):
        raise PluginError(
            f"groundwiki: {errors} lint error{'s' if errors != 1 else ''} in strict mode "
            "(run `groundwiki lint` to list them)"
        )
