"""`groundwiki audit`: the audit trail's records, printed or exported, and `audit replay N`,
which asks the running sidecar record N's question again and says how the answer changed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.audit import read_records
from groundwiki_sidecar.base.settings import Sidecar

from groundwiki.core.model.scopes import user_scope


def add_command(commands: Any, common: argparse.ArgumentParser, port: Any) -> None:
    audit = commands.add_parser(
        "audit", parents=[common], help="print the audit trail, or replay one record"
    )
    audit.add_argument("--user", help="only this user's records (global: the shared scope)")
    audit.add_argument("--since", help="only records at or after this time (2026-11-24T10:00)")
    audit.add_argument("--op", help="only this operation (search, pages, chunks, verify, ...)")
    audit.add_argument("--json", action="store_true", help="the records as JSON Lines")
    audit.add_argument("replay", nargs="?", choices=["replay"], help=argparse.SUPPRESS)
    audit.add_argument("seq", nargs="?", type=int, help=argparse.SUPPRESS)
    audit.add_argument("--port", type=port, help="the running sidecar's port (for replay)")
    audit.set_defaults(run_sidecar=cmd_audit, needs_libraries=False)


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
    from groundwiki.cli.sidecar_commands import _ask, _target

    record = next((r for r in records if r.get("seq") == args.seq), None)
    if record is None:
        print(
            f"groundwiki: no audit record {args.seq} (it may have been rotated out)",
            file=sys.stderr,
        )
        return 2
    target = _target(sidecar, args.port)
    status = _ask(sidecar, target, "/status", 5, ("generation", "scope"))
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
    reply = _ask(sidecar, target, operation.path, 30, ("freshness",), payload)
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
