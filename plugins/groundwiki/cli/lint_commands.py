"""`groundwiki lint`: the findings on pages, links, citations and the lock, as text, JSON or
GitHub workflow commands; `--write-baseline` accepts them all."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from groundwiki.cli.common import compile_for, plural, quiet_stdout
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.lint import LintReport, run_lint
from groundwiki.core.lint.baseline import write_baseline
from groundwiki.core.lint.findings import SEVERITY_ORDER
from groundwiki.core.lint.runner import collect_findings


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    lint = commands.add_parser(
        "lint", parents=[common], help="check pages, links, citations and the lock"
    )
    lint.add_argument("--format", choices=["text", "json", "github"], default="text")
    lint.add_argument("--strict", action="store_true", help="fail on warnings too")
    lint.add_argument(
        "--min-severity",
        choices=list(reversed(SEVERITY_ORDER)),
        default="info",
        help="list only findings of this severity or above (the summary counts them all)",
    )
    lint.add_argument(
        "--no-baseline", action="store_true", help="show findings the baseline silences"
    )
    lint.add_argument(
        "--write-baseline",
        action="store_true",
        help="accept every current finding into the baseline",
    )
    lint.set_defaults(run=cmd_lint)


def cmd_lint(args: argparse.Namespace, config: Config) -> int:
    wiki = compile_for(config, args.quiet or args.format != "text")
    if args.write_baseline:
        count = write_baseline(config.baseline_path, collect_findings(wiki))
        print(f"wrote {count} findings to {config.rel(config.baseline_path)}", file=sys.stderr)
        return 0
    report = run_lint(wiki, use_baseline=not args.no_baseline)
    status = 1 if report.failed(args.strict or config.strict) else 0
    try:
        if args.format == "json":
            print(json.dumps(report.to_json(args.min_severity), indent=2))
        elif args.format == "github":
            _print_github(report, args.min_severity)
        else:
            _print_text(report, len(wiki.pages), len(wiki.sources), args.min_severity)
    except BrokenPipeError:
        quiet_stdout()  # `groundwiki lint | head`: the verdict still stands
    return status


def _print_text(report: LintReport, pages: int, sources: int, min_severity: str) -> None:
    for f in report.shown(min_severity):
        print(f"{f.path}:{f.line}:{f.column}: {f.severity} {f.rule}: {f.message}")
        print(f"    hint: {f.hint}")
    counts = report.counts
    summary = (
        f"{plural(pages, 'page')}, {plural(sources, 'raw source')}: "
        f"{plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}, "
        f"{plural(counts['info'], 'info')}"
    )
    if report.baselined:
        summary += f" ({report.baselined} silenced by the baseline)"
    left_out = [plural(n, severity) for severity, n in report.not_shown(min_severity).items() if n]
    if left_out:
        summary += f"; {' and '.join(left_out)} not shown (--min-severity info lists them)"
    print(summary, file=sys.stderr)


def _print_github(report: LintReport, min_severity: str) -> None:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for f in report.shown(min_severity):
        message = _escape_data(f"{f.message} (hint: {f.hint})")
        print(
            f"::{level[f.severity]} file={_escape_property(f.path)},line={f.line},col={f.column},"
            f"title={f.rule}::{message}"
        )


def _escape_data(text: str) -> str:
    """GitHub workflow-command escaping for the message part."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """Property values also end at ',' and ':' unless escaped."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
