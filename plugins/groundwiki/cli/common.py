"""What the commands share: compiling with progress, counting nouns, a closed standard output,
and showing or making a planned change."""

from __future__ import annotations

import argparse
import os
import sys

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import Edits
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import compile_wiki
from groundwiki.progress import Progress


def compile_for(config: Config, quiet: bool) -> Wiki:
    with Progress(enabled=not quiet) as progress:
        return compile_wiki(config, progress=progress.update)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def quiet_stdout() -> None:
    """Point stdout at /dev/null so Python's exit flush does not fail on the closed pipe."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the change as a unified diff (git apply reads it) and change nothing",
    )


def finish(edits: Edits, args: argparse.Namespace, done: str) -> int:
    """Print the diff on `--dry-run`, else make the change (all of it or, refused, none) and say
    which files it wrote. `done` names the change in the report line."""
    if args.dry_run:
        sys.stdout.write(edits.diff())
        return 0
    if not edits:
        print(f"groundwiki: {done}: nothing to change", file=sys.stderr)
        return 0
    edits.apply()
    print(f"groundwiki: {done}:", file=sys.stderr)
    for path in edits.paths():
        print(f"  {path}", file=sys.stderr)
    return 0
