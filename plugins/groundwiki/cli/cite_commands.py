"""`groundwiki cite`: the provenance comment for a quote, from the lines where it stands."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groundwiki.cli.common import compile_for, finish
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import wiki_edits
from groundwiki.core.evidence.cite import cite_in_page, comment, locate
from groundwiki.core.model.records import Source
from groundwiki.core.sources.raw_sources import source_named


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    cite = commands.add_parser(
        "cite",
        parents=[common],
        help="print the provenance comment for a quote from a raw source",
        description="Find where TEXT stands in SOURCE (line breaks and runs of spaces aside) "
        "and print the provenance comment that cites those lines. When it does not stand "
        "verbatim, show the closest lines instead and exit 1. With --page, the comment goes "
        "after the page's sentence that shares the most of TEXT's words (at least half of "
        "them, common short words aside), or at the end of --after LINE; else at the end of "
        "the page, and the output says so.",
    )
    cite.add_argument("source", help="the raw source, as citations spell it: raw-sources/a.md")
    cite.add_argument("text", help="the exact text to cite")
    cite.add_argument(
        "--page", metavar="KEY", help="add the comment to this page, after the claim it supports"
    )
    cite.add_argument(
        "--after",
        metavar="LINE",
        type=int,
        help="with --page: put the comment at the end of this line of the page file (from 1)",
    )
    cite.add_argument(
        "--dry-run", action="store_true", help="with --page: show the change as a diff only"
    )
    cite.set_defaults(run=run)


def run(args: argparse.Namespace, config: Config) -> int:
    if args.after is not None and args.page is None:
        raise GroundwikiError("--after goes with --page (the page the line is in)")
    source = cited_source(config, args.source)
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
    name = config.rel(page.path)
    edits = wiki_edits(config)
    try:
        text, spot = cite_in_page(edits.read(page.path), cited, name, args.text, args.after)
    except ValueError as exc:
        raise GroundwikiError(f"{exc}; nothing was changed") from None
    edits.write(page.path, text)
    if spot is None:
        print(
            f"groundwiki: no sentence of {name} shares half of the quote's words: the comment "
            "goes at the end of the page; move it after the claim it supports, or give "
            "--after LINE",
            file=sys.stderr,
        )
        return finish(edits, args, f"appended {cited} to the end of {name}")
    where = f"{name}:{spot.line}"
    if args.after is None:
        where += f", after the sentence sharing {spot.shared} of the quote's {spot.wanted} words"
    return finish(edits, args, f"added {cited} at {where}: {excerpt(spot.sentence)}")


def cited_source(config: Config, given: str) -> Source:
    """A raw source named as citations spell it (`raw-sources/a.md`, a member of an archive
    `raw-sources/b.zip!/c.md`) or from its folder."""
    text = given.replace("\\", "/")
    prefix = config.raw_prefix.rstrip("/") + "/"
    inside = text[len(prefix) :] if text.startswith(prefix) else text
    source = source_named(config, inside)
    if source is None:
        raise GroundwikiError(
            f"no raw source '{given}' in {config.raw_prefix}/: give its path as a citation "
            f"spells it, e.g. {config.raw_prefix}/notes.md"
        )
    return source
