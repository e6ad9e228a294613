"""`groundwiki rename`: move a page and rewrite every link to it, keeping its citations locked."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groundwiki.cli.common import add_dry_run, finish
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import wiki_edits
from groundwiki.core.edit.rename import plan_rename
from groundwiki.core.edit.rename_reading import scoped_wiki


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
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
        "already a page's file name, key or alias, lies through a symlink, or is in another "
        "scope (global/, user/ID/) without --across-scopes.",
    )
    rename.add_argument("old", metavar="OLD", help="the page: key, alias, file name or path")
    rename.add_argument(
        "new", metavar="NEW", help="its new name (new-name) or path in the wiki (guide/new-name)"
    )
    rename.add_argument(
        "--across-scopes",
        action="store_true",
        help="allow a move between scopes (global/ and user/ID/): says who sees the page "
        "afterwards and lists the links that can no longer reach it",
    )
    add_dry_run(rename)
    rename.set_defaults(run=run)


def run(args: argparse.Namespace, config: Config) -> int:
    wiki = scoped_wiki(config, args.old, args.new)
    edits = wiki_edits(config)
    plan = plan_rename(wiki, args.old, args.new, edits, across_scopes=args.across_scopes)
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
    if plan.seen_by:
        print(f"  {plan.seen_by}", file=sys.stderr)
    if plan.lock_rows:
        print(
            f"  {plan.lock_rows} lock records moved from '{plan.lock_from}' to '{plan.lock_to}'",
            file=sys.stderr,
        )
    for lost in plan.lost:
        print(
            f"  link lost: {lost.path}:{lost.line}: {lost.written} ({lost.reason})",
            file=sys.stderr,
        )
    for left in plan.left:
        print(
            f"  left as written: {left.path}:{left.line}: {left.written} ({left.reason})",
            file=sys.stderr,
        )
    return status
