"""`groundwiki audit` and `groundwiki token`: what was asked of the sidecar (the audit trail's
records, printed or exported, and `audit replay N`, which asks the running sidecar record N's
question again and says how the answer changed) and who may ask it (user tokens, made and
revoked in the tokens file)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.audit import read_records
from groundwiki_sidecar.api.identity import (
    DEFAULT_FILE,
    TOKENS_FILE_ENV,
    exposed,
    new_token,
    parse_tokens,
    revoke,
    token_hash,
)
from groundwiki_sidecar.base.settings import Sidecar

from groundwiki.cli.sidecar_arguments import port_argument, user_argument
from groundwiki.cli.sidecar_client import ask, target_for
from groundwiki.core.model.scopes import user_scope


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    audit = commands.add_parser(
        "audit", parents=[common], help="print the audit trail, or replay one record"
    )
    audit.add_argument("--user", help="only this user's records (global: the shared scope)")
    audit.add_argument("--since", help="only records at or after this time (2026-11-24T10:00)")
    audit.add_argument("--op", help="only this operation (search, pages, chunks, verify, ...)")
    audit.add_argument("--json", action="store_true", help="the records as JSON Lines")
    audit.add_argument("replay", nargs="?", choices=["replay"], help=argparse.SUPPRESS)
    audit.add_argument("seq", nargs="?", type=int, help=argparse.SUPPRESS)
    audit.add_argument("--port", type=port_argument, help="the running sidecar's port (for replay)")
    audit.set_defaults(run_sidecar=cmd_audit, needs_libraries=False)
    token = commands.add_parser("token", parents=[common], help="make user tokens")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    new = token_commands.add_parser(
        "new", parents=[common], help="make a token for a user; prints it once"
    )
    new.add_argument("user", type=user_argument, help="the user ID (their folder under wiki/user/)")
    new.add_argument(
        "--file", help=f"the tokens file (default: sidecar.tokens, else {DEFAULT_FILE})"
    )
    new.set_defaults(run_sidecar=cmd_token_new, needs_libraries=False)
    gone = token_commands.add_parser(
        "revoke",
        parents=[common],
        help="remove a user's token; a running sidecar refuses it from the next request",
    )
    gone.add_argument("user", type=user_argument, help="the user ID whose token goes")
    gone.add_argument(
        "--file", help=f"the tokens file (default: sidecar.tokens, else {DEFAULT_FILE})"
    )
    gone.set_defaults(run_sidecar=cmd_token_revoke, needs_libraries=False)


def _tokens_file(args: argparse.Namespace, sidecar: Sidecar) -> tuple[str, Path | None]:
    """(what the tokens setting names, the file it is or None for `env:NAME`)."""
    named = args.file or sidecar.settings.tokens or os.environ.get(TOKENS_FILE_ENV) or DEFAULT_FILE
    if named.startswith("env:"):
        return named, None
    path = Path(named).expanduser()
    return named, path if path.is_absolute() else sidecar.config.root / path


# What a running sidecar does with a changed file (identity.TokenSource); a variable is read once.
FOLLOWS = "a running sidecar follows the file from its next request on, no restart needed"


def cmd_token_new(args: argparse.Namespace, sidecar: Sidecar) -> int:
    """A new token for a user: its hash appended to the tokens file, the token printed once."""
    named, path = _tokens_file(args, sidecar)
    text = ""
    if path is None:
        print(
            f"groundwiki: sidecar.tokens is {named}: add the line printed below to that variable "
            "and restart the sidecar (a variable is read once, at start)",
            file=sys.stderr,
        )
    else:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if args.user in parse_tokens(text, str(path)).hashes:
            print(
                f"groundwiki: {path} has a token for {args.user} already; to replace it, run "
                f"`groundwiki token revoke {args.user}` (the old token stops working at once) "
                "and run this again",
                file=sys.stderr,
            )
            return 2
    token = new_token()
    line = f"{args.user}: {token_hash(token)}\n"
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            # A last line saved without its newline would be glued to this one.
            out.write(("\n" if text and not text.endswith("\n") else "") + line)
        print(f"added {args.user} to {path}; {FOLLOWS}", file=sys.stderr)
        if warning := exposed(path):
            print(f"groundwiki: warning: {warning}", file=sys.stderr)
        if not sidecar.settings.tokens and not args.file:
            print(f"  point sidecar.tokens at it in mkdocs.yml: tokens: {named}", file=sys.stderr)
    else:
        print(line, end="", file=sys.stderr)
    print(f"  {args.user}'s token (shown once; send it as Authorization: Bearer <token>):")
    print(token)
    return 0


def cmd_token_revoke(args: argparse.Namespace, sidecar: Sidecar) -> int:
    """Remove a user's token from the tokens file, in one step (`identity.revoke`)."""
    named, path = _tokens_file(args, sidecar)
    if path is None:
        print(
            f"groundwiki: sidecar.tokens is {named}: remove the line `{args.user}: sha256:...` "
            "from that variable and restart the sidecar (a variable is read once, at start)",
            file=sys.stderr,
        )
        return 2
    try:
        removed = revoke(path, args.user)
    except FileNotFoundError:
        removed = 0
    if not removed:
        print(f"groundwiki: no token for {args.user} in {path}; nothing to revoke", file=sys.stderr)
        return 2
    print(f"revoked {args.user}'s token in {path}; {FOLLOWS}", file=sys.stderr)
    if warning := exposed(path):
        print(f"groundwiki: warning: {warning}", file=sys.stderr)
    return 0


def cmd_audit(args: argparse.Namespace, sidecar: Sidecar) -> int:
    records = read_records(sidecar.index_dir / "audit")
    if args.replay:
        if args.seq is None:
            print("groundwiki: say which record: groundwiki audit replay N", file=sys.stderr)
            return 2
        return replay(args, sidecar, records)
    since = _moment(args.since) if args.since else ""
    shown = [
        r
        for r in records
        if (args.user is None or r.get("user") == args.user)
        and (args.op is None or r.get("op") == args.op)
        and (not since or _moment(str(r.get("time", ""))) >= since)
    ]
    for record in shown:
        if args.json:
            print(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        else:
            asked = record.get("args", {})
            what = asked.get("query") or asked.get("ids") or asked.get("answer", "")
            returned = record.get("returned", [])
            print(
                f"{record.get('seq'):>6}  {record.get('time', '')[:19]}  {record.get('user', '')}  "
                f"{record.get('op', '')}  {_cut(json.dumps(what, ensure_ascii=False), 60)}  "
                f"-> {len(returned)} ({_cut(', '.join(map(str, returned[:3])), 50)})"
            )
    if not args.json:
        print(f"{len(shown)} of {len(records)} records", file=sys.stderr)
    return 0


def replay(args: argparse.Namespace, sidecar: Sidecar, records: list[dict[str, Any]]) -> int:
    record = next((r for r in records if r.get("seq") == args.seq), None)
    if record is None:
        print(
            f"groundwiki: no audit record {args.seq} (it may have been rotated out)",
            file=sys.stderr,
        )
        return 2
    target = target_for(sidecar, args.port)
    status = ask(sidecar, target, "/status", 5, ("generation", "scope"))
    if status.data is None:
        print(f"groundwiki: {status.problem or target.nobody()}", file=sys.stderr)
        return 2
    user = record.get("user", "global")
    wanted = user_scope(None if user == "global" else user)
    if status.data["scope"] != wanted:
        print(
            f"groundwiki: record {args.seq} was answered for {user}, but the sidecar answers "
            f"this command in {status.data['scope']}; replay it as {user}: "
            "GROUNDWIKI_TOKEN=<their token> groundwiki audit replay N (or, on loopback without "
            f"tokens, a sidecar started with --user {user})",
            file=sys.stderr,
        )
        return 2
    operation = _by_body(record.get("op", ""))
    if operation is None:
        print(
            f"groundwiki: record {args.seq} ({record.get('op')}) cannot be replayed",
            file=sys.stderr,
        )
        return 2
    names = {param.name for param in operation.body}
    payload = {k: v for k, v in record.get("args", {}).items() if k in names}
    reply = ask(sidecar, target, operation.path, 30, ("freshness",), payload)
    if reply.data is None:
        print(f"groundwiki: {reply.problem or 'no answer'}", file=sys.stderr)
        return 2
    now = _returned(reply.data)
    then = [str(i) for i in record.get("returned", [])]
    generation = reply.data.get("generation", reply.data.get("freshness", {}).get("generation"))
    print(
        f"record {args.seq}: {record.get('op')} for {user}, generation {record.get('generation')} -> {generation}"
    )
    before, after = record.get("vectors"), reply.data.get("freshness", {}).get("vectors")
    if before and after and before != after:
        # Same files, more vectors: the semantic lane now ranks texts it could not then.
        shares = ", ".join(
            f"{kind} {before.get(kind, 0):.0%} -> {after.get(kind, 0):.0%}"
            for kind in sorted(after)
        )
        print(f"vectors computed: {shares}")
    if now == then:
        print("unchanged: the same IDs in the same order")
        return 0
    for gone in [i for i in then if i not in now]:
        print(f"  - {gone} (no longer returned)")
    for new in [i for i in now if i not in then]:
        print(f"  + {new} (returned now, at {now.index(new) + 1})")
    for moved in [i for i in now if i in then and now.index(i) != then.index(i)]:
        print(f"  ~ {moved}: {then.index(moved) + 1} -> {now.index(moved) + 1}")
    return 1


def _by_body(name: str) -> catalog.Operation | None:
    """The operation that takes the recorded one's arguments as a JSON body."""
    operations = {op.name: op for op in catalog.operations()}
    found = operations.get(name)
    if found is None:
        return None
    if found.method == "POST":
        return found
    return next(
        (op for op in operations.values() if op.path == found.path and op.method == "POST"), None
    )


def _returned(answer: dict[str, Any]) -> list[str]:
    if "hits" in answer:
        return [str(hit.get("key", hit.get("id"))) for hit in answer["hits"]]
    listed = (
        answer.get("pages")
        if "pages" in answer and "chunks" not in answer
        else answer.get("chunks")
    )
    return [str(item.get("key", item.get("id"))) for item in listed or []]


def _moment(text: str) -> str:
    """A time as records spell it, for comparing: ISO-8601, `T` between date and time, UTC."""
    return text.strip().replace(" ", "T").removesuffix("Z")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
