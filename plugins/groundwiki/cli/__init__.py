"""The `groundwiki` command: lint, lock and graph, reading the wiki through the compiler core."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from groundwiki_sidecar.base.settings import SidecarSettings

from groundwiki.cli import cite_commands as cite
from groundwiki.cli import lock_commands as lock
from groundwiki.cli import new_commands as new
from groundwiki.cli import rename_commands as rename
from groundwiki.cli.common import compile_for
from groundwiki.cli.eval_commands import add_command as eval_command
from groundwiki.cli.sidecar_commands import add_commands as sidecar_commands
from groundwiki.cli.sidecar_commands import run as run_sidecar
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.settings_spec import reference
from groundwiki.core.config.wiki_config import Config, Options, load_config
from groundwiki.core.lint import LintReport, run_lint
from groundwiki.core.lint.baseline import write_baseline
from groundwiki.core.lint.rules import RULES
from groundwiki.core.lint.runner import check_rule_names, collect_findings
from groundwiki.core.wiki.graph import build_graph


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
            print(json.dumps(report.to_json(), indent=2))
        elif args.format == "github":
            _print_github(report)
        else:
            _print_text(report, len(wiki.pages), len(wiki.sources))
    except BrokenPipeError:
        _quiet_stdout()  # `groundwiki lint | head`: the verdict still stands
    return status


def _print_text(report: LintReport, pages: int, sources: int) -> None:
    for f in report.findings:
        print(f"{f.path}:{f.line}:{f.column}: {f.severity} {f.rule}: {f.message}")
        print(f"    hint: {f.hint}")
    counts = report.counts
    summary = (
        f"{_plural(pages, 'page')}, {_plural(sources, 'raw source')}: "
        f"{_plural(counts['error'], 'error')}, {_plural(counts['warning'], 'warning')}, "
        f"{_plural(counts['info'], 'info')}"
    )
    if report.baselined:
        summary += f" ({report.baselined} silenced by the baseline)"
    print(summary, file=sys.stderr)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _print_github(report: LintReport) -> None:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for f in report.findings:
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


def cmd_graph(args: argparse.Namespace, config: Config) -> int:
    wiki = compile_for(config, args.quiet)
    text = json.dumps(build_graph(wiki).to_json(), indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_rules(args: argparse.Namespace, config: Config | None) -> int:
    for name, rule in sorted(RULES.items()):
        print(f"{name:20} {rule.severity:8} {rule.summary}")
    return 0


# Where each group of settings is written in mkdocs.yml, and the dataclass that declares them.
SETTINGS = (
    ("plugins: [groundwiki: {...}]", Options),
    ("plugins: [groundwiki: {sidecar: {...}}]", SidecarSettings),
)


def cmd_settings(args: argparse.Namespace, config: Config | None) -> int:
    """The reference of every setting, from the same declarations that validate them."""
    for where, declared in SETTINGS:
        print(f"{where}")
        for row in reference(declared):
            print(f"  {row.name}: {row.default}")
            print(f"      {row.doc}")
            print(f"      values: {row.values}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundwiki",
        description="Compile, check and lock a grounded wiki, and run its search sidecar.",
    )
    parser.add_argument(
        "-f", "--config-file", type=Path, help="mkdocs.yml to read (default: ./mkdocs.yml)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    # -q is accepted after the command too; SUPPRESS keeps it from resetting the global one.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress output"
    )
    # -f after the command too, so tools that append arguments (pre-commit's `args`) can name it.
    common.add_argument(
        "-f",
        "--config-file",
        type=Path,
        default=argparse.SUPPRESS,
        help="mkdocs.yml to read (default: ./mkdocs.yml)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    lint = commands.add_parser(
        "lint", parents=[common], help="check pages, links, citations and the lock"
    )
    lint.add_argument("--format", choices=["text", "json", "github"], default="text")
    lint.add_argument("--strict", action="store_true", help="fail on warnings too")
    lint.add_argument(
        "--no-baseline", action="store_true", help="show findings the baseline silences"
    )
    lint.add_argument(
        "--write-baseline",
        action="store_true",
        help="accept every current finding into the baseline",
    )
    lint.set_defaults(run=cmd_lint)

    lock.add_command(commands, common)

    cite.add_command(commands, common)
    rename.add_command(commands, common)
    new.add_command(commands, common)

    graph = commands.add_parser("graph", parents=[common], help="export the link graph")
    graph.add_argument("--format", choices=["json"], default="json")
    graph.add_argument("-o", "--output", help="write to this file instead of standard output")
    graph.set_defaults(run=cmd_graph)

    rules = commands.add_parser(
        "rules", parents=[common], help="list the lint rules and their default severities"
    )
    rules.set_defaults(run=cmd_rules, needs_config=False)
    settings = commands.add_parser(
        "settings",
        parents=[common],
        help="list the settings of the groundwiki block in mkdocs.yml, with defaults",
    )
    settings.set_defaults(run=cmd_settings, needs_config=False)
    sidecar_commands(commands, common)
    eval_command(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "run_sidecar"):
            return run_sidecar(args)
        config = load_config(args.config_file) if getattr(args, "needs_config", True) else None
        if config is not None:
            check_rule_names(config.rules)
        return args.run(args, config)
    except GroundwikiError as exc:  # the user can fix it: one line, no traceback
        print(f"groundwiki: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`groundwiki graph | head`): not an error of ours.
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so Python's exit flush does not fail on the closed pipe."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    raise SystemExit(main())
