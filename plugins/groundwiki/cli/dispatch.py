"""The `groundwiki` command: the parser assembled from the command groups (one module each,
in the order `groundwiki --help` lists them), and the dispatch with its error edge. The top of
both packages: it may import anything, and imports the sidecar inside functions so that
`groundwiki lint` runs without it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from groundwiki_sidecar.base.settings import load_sidecar

from groundwiki.cli import (
    access_commands,
    cite_commands,
    editor_commands,
    eval_commands,
    init_commands,
    lint_commands,
    listing_commands,
    lock_commands,
    new_commands,
    rename_commands,
    sidecar_commands,
)
from groundwiki.cli.common import quiet_stdout
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.lint.runner import check_rule_names

# Each group adds its commands in turn: this order is the order of `groundwiki --help`.
GROUPS = (
    lint_commands,  # lint
    lock_commands,  # lock
    cite_commands,  # cite
    rename_commands,  # rename
    new_commands,  # new
    init_commands,  # init
    listing_commands,  # graph, rules, settings
    sidecar_commands,  # serve, index, status, query, mcp
    access_commands,  # audit, token
    eval_commands,  # eval
    editor_commands,  # lsp
)


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
    for group in GROUPS:
        group.add_commands(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "run_sidecar"):
            return _run_sidecar(args)
        config = load_config(args.config_file) if getattr(args, "needs_config", True) else None
        if config is not None:
            check_rule_names(config.rules)
        return args.run(args, config)
    except GroundwikiError as exc:  # the user can fix it: one line, no traceback
        print(f"groundwiki: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`groundwiki graph | head`): not an error of ours.
        quiet_stdout()
        return 0


def _run_sidecar(args: argparse.Namespace) -> int:
    """A sidecar command: its libraries (unless it only asks a running sidecar), then its
    settings from mkdocs.yml, then the command."""
    if args.needs_libraries:
        sidecar_commands.require_libraries(args.command)
    return int(args.run_sidecar(args, load_sidecar(args.config_file)))
