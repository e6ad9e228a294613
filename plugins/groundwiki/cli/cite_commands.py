"""`groundwiki cite`: the provenance comment for a quote, from the lines where it stands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from groundwiki.cli.common import compile_for, finish
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import wiki_edits
from groundwiki.core.evidence.cite import comment, locate
from groundwiki.core.sources.raw_sources import read_source


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    cite = commands.add_parser(
        "cite",
        parents=[common],
        help="print the provenance comment for a quote from a raw source",
        description="Find where TEXT stands in SOURCE (line breaks and runs of spaces aside) "
        "and print the provenance comment that cites those lines. When it does not stand "
        "verbatim, show the closest lines instead and exit 1.",
    )
    cite.add_argument("source", help="the raw source, as citations spell it: raw-sources/a.md")
    cite.add_argument("text", help="the exact text to cite")
    cite.add_argument("--page", metavar="KEY", help="append the comment to this page")
    cite.add_argument(
        "--dry-run", action="store_true", help="with --page: show the change as a diff only"
    )
    cite.set_defaults(run=run)


def run(args: argparse.Namespace, config: Config) -> int:
    source = read_source(cite_path(config, args.source), config)
    shown = f"{config.raw_prefix}/{source.path}"
    try:
        located = locate(source, args.text)
    except ValueError as exc:
        raise GroundwikiError(str(exc)) from None
    if located.found is None:
        print(f"groundwiki: the text does not stand verbatim in {shown}", file=sys.stderr)
        if not located.candidates:
            print("  no line shares a word with it: is it the right source?", file=sys.stderr)
        for place in located.candidates:
            lines = " ".join(source.lines[place.start - 1 : place.end])
            print(
                f"  {comment(place.spec(shown))}  closeness {place.score:.2f}: {excerpt(lines)}",
                file=sys.stderr,
            )
        return 1
    cited = comment(located.found.spec(shown))
    if located.occurrences > 1:
        print(
            f"groundwiki: the text stands {located.occurrences} times in {shown}; cited the "
            "first (quote more words to cite another)",
            file=sys.stderr,
        )
    if args.page is None:
        print(cited)
        return 0
    wiki = compile_for(config, args.quiet)
    resolution = wiki.resolver.resolve_name(args.page)
    if resolution is None:
        raise GroundwikiError(f"no page with key or alias '{args.page}'; nothing was changed")
    page = wiki.pages[resolution.key]
    edits = wiki_edits(config)
    before = edits.read(page.path)
    edits.write(
        page.path, before + ("" if before.endswith("\n") or not before else "\n") + cited + "\n"
    )
    return finish(edits, args, f"appended {cited} to {config.rel(page.path)}")


def cite_path(config: Config, given: str) -> Path:
    """A raw source named as citations spell it (`raw-sources/a.md`) or from its folder."""
    text = given.replace("\\", "/")
    prefix = config.raw_prefix.rstrip("/") + "/"
    inside = text[len(prefix) :] if text.startswith(prefix) else text
    path = (config.raw_dir / inside).resolve()
    if not path.is_relative_to(config.raw_dir) or not path.is_file():
        raise GroundwikiError(
            f"no raw source '{given}' in {config.raw_prefix}/: give its path as a citation "
            f"spells it, e.g. {config.raw_prefix}/notes.md"
        )
    return path
