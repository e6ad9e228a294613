"""`groundwiki graph`, `rules` and `settings`: the wiki's link graph as JSON, the lint rules
and the settings of mkdocs.yml, each listed from the declarations the build itself uses."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groundwiki_sidecar.base.settings import SidecarSettings

from groundwiki.cli.common import compile_for
from groundwiki.core.config.settings_spec import reference
from groundwiki.core.config.wiki_config import Config, Options
from groundwiki.core.lint.rules import RULES
from groundwiki.core.wiki.graph import build_graph


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
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
