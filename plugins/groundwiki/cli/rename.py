"""`groundwiki rename`: move a page and rewrite every link to it, keeping its citations locked."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.config import Config
from ..core.edits import Edits
from ..core.rename import plan_rename
from ..core.rename_scope import scoped_wiki
from .common import add_dry_run, finish


def add_command(commands: Any, common: argparse.ArgumentParser) -> None:
    rename = commands.add_parser(
        "rename",
        parents=[common],
        help="rename or move a page and rewrite every link to it",
        description="Move the page OLD names (a key, alias, file name or path) to NEW (a name: "
        "same folder; or a path in the wiki folder: guide/new-name), with git mv when the file "
        "is tracked. Every wikilink, embed, Markdown link and refs entry that reached the page "
        "by its name or path is rewritten in its own style (labels, anchors, relative paths, "
        "encoding kept); links by an alias or title stay. The old name joins the page's aliases "
        "and its lock records move to the new key. Refuses, changing nothing, when NEW is "
        "already a page's file name, key or alias.",
    )
    rename.add_argument("old", metavar="OLD", help="the page: key, alias, file name or path")
    rename.add_argument(
        "new", metavar="NEW", help="its new name (new-name) or path in the wiki (guide/new-name)"
    )
    add_dry_run(rename)
    rename.set_defaults(run=run)


def run(args: argparse.Namespace, config: Config) -> int:
    wiki = scoped_wiki(config, args.old, args.new)
    edits = Edits(config.root)
    plan = plan_rename(wiki, args.old, args.new, edits)
    links = f"{plan.links} link{'' if plan.links == 1 else 's'}"
    files = f"{plan.linking_files} file{'' if plan.linking_files == 1 else 's'}"
    status = finish(
        edits, args, f"renamed {plan.old_path} -> {plan.new_path}, {links} rewritten in {files}"
    )
    if plan.alias:
        print(
            f"  '{plan.alias}' added to its aliases: old links and URLs still lead to it",
            file=sys.stderr,
        )
    if plan.lock_rows:
        print(
            f"  {plan.lock_rows} lock records moved from '{plan.old_key}' to '{plan.new_key}'",
            file=sys.stderr,
        )
    for left in plan.left:
        print(
            f"  left as written: {left.path}:{left.line}: {left.written} ({left.reason})",
            file=sys.stderr,
        )
    return status
