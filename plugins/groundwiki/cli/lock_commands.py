"""`groundwiki lock`: record the hash of what every page cites; check it; correct moved ranges."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groundwiki.cli.common import add_dry_run, compile_for, finish, plural
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config
from groundwiki.core.edit.edits import wiki_edits
from groundwiki.core.edit.moved import fix_moved
from groundwiki.core.evidence.lock import LockChange, plan_lock, write_lock
from groundwiki.core.wiki.compiled import Wiki


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    lock = commands.add_parser(
        "lock",
        parents=[common],
        help="record the hash of everything the pages cite",
        description="Record the sha256 of every cited text in the lock file. Changed text is "
        "accepted (lint reports it as drift until then); text that moved keeps its old record "
        "until its citation is corrected, which --fix-moved does.",
    )
    mode = lock.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the lock is out of date (for CI and pre-commit)",
    )
    mode.add_argument(
        "--fix-moved",
        action="store_true",
        help="rewrite each citation whose text moved to the lines where it now stands, and "
        "refresh the lock; changed text is only reported",
    )
    add_dry_run(lock)
    lock.set_defaults(run=run)


def run(args: argparse.Namespace, config: Config) -> int:
    if args.dry_run and not args.fix_moved:
        raise GroundwikiError(
            "--dry-run goes with --fix-moved (use --check to see whether the lock is current)"
        )
    wiki = compile_for(config, args.quiet)
    if args.check:
        return _check(wiki, config)
    if args.fix_moved:
        return _fix_moved(wiki, config, args)
    change = write_lock(config.lock_path, wiki.lock_entries(), config.root)
    _report_states(wiki)
    _report_change(config, change)
    return 0


def _check(wiki: Wiki, config: Config) -> int:
    change, _ = plan_lock(config.lock_path, wiki.lock_entries())
    name = config.rel(config.lock_path)
    if not change.written:
        print(f"{name}: up to date", file=sys.stderr)
        return 0
    drifted = [s for s in wiki.all_citation_states if s.status == "drifted"]
    if not drifted:
        print(
            f"{name}: out of date ({_counts(change)}); run `groundwiki lock` and commit the lock",
            file=sys.stderr,
        )
        return 1
    # Relocking accepts the changed text: what the pages claim from it is read again first.
    print(
        f"{name}: out of date ({_counts(change)}); the text of "
        f"{plural(len(drifted), 'citation')} changed since it was locked (drift):",
        file=sys.stderr,
    )
    for state in drifted:
        at = state.citation.at
        print(f"  {at.path}:{at.line}: {state.name}", file=sys.stderr)
    print(
        "Re-read each changed source at the cited lines and the claims that cite it, correct "
        "the pages where a claim no longer holds (or cite other lines), and only then run "
        f"`groundwiki lock`, which accepts the changed text, and commit {name}",
        file=sys.stderr,
    )
    return 1


def _fix_moved(wiki: Wiki, config: Config, args: argparse.Namespace) -> int:
    edits = wiki_edits(config)
    fixes = fix_moved(wiki, edits)
    corrected = {(fix.state.page.uid, fix.state.name): fix.citation for fix in fixes}
    _, text = plan_lock(
        config.lock_path, wiki.lock_entries(accept_drift=False, corrected=corrected)
    )
    edits.write(config.lock_path, text)
    for fix in fixes:
        at = fix.state.citation.at
        print(f"{at.path}:{at.line}: {fix.old} -> {fix.new}", file=sys.stderr)
    drifted = [s for s in wiki.all_citation_states if s.status == "drifted"]
    for state in drifted:
        at = state.citation.at
        print(
            f"{at.path}:{at.line}: left {state.name} as it is: its text changed (drift); "
            "check the page against the source, then run `groundwiki lock`",
            file=sys.stderr,
        )
    status = finish(edits, args, f"corrected {plural(len(fixes), 'moved citation')}")
    return 1 if drifted and status == 0 else status


def _report_states(wiki: Wiki) -> None:
    for state in wiki.all_citation_states:
        at = f"{state.citation.at.path}:{state.citation.at.line}"
        if state.status == "drifted" and state.current is not None:
            print(f"{at}: accepted the changed text of {state.name}", file=sys.stderr)
        elif state.status == "moved" and state.moved_to:
            start, end = state.moved_to
            print(
                f"{at}: kept the old hash of {state.name}: its text moved to lines "
                f"{start}-{end}; run `groundwiki lock --fix-moved` to correct the citation",
                file=sys.stderr,
            )


def _report_change(config: Config, change: LockChange) -> None:
    name = config.rel(config.lock_path)
    if change.written:
        print(f"{name}: {_counts(change)}", file=sys.stderr)
    else:
        print(f"{name}: up to date", file=sys.stderr)


def _counts(change: LockChange) -> str:
    return f"{change.added} added, {change.changed} changed, {change.removed} removed"
