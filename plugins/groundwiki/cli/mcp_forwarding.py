"""`groundwiki mcp` when a running sidecar keeps the wiki's indexes: the session goes to that
sidecar's MCP endpoint instead of exiting, once the sidecar serves it, and only in the scope
asked for (`--user`, else the shared one) or, with a token, the token's.

The token is the one every command that asks a running sidecar sends: `sidecar.token` in
mkdocs.yml, else GROUNDWIKI_TOKEN. The session is never forwarded in another scope than asked:
a sidecar that would answer it in another one is refused with the fix.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

from groundwiki_sidecar.base import listening
from groundwiki_sidecar.base.settings import TOKEN_ENV, IndexBusy, Sidecar

from groundwiki.cli.sidecar_client import Reply, Target, ask
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.model.scopes import user_scope

log = logging.getLogger("groundwiki_sidecar")

WAIT_S = 120.0  # how long a sidecar that is still starting is waited for
POLL_S = 0.5
TELL_EVERY_S = 10.0  # how often the wait says what the start is doing
FORWARD_HELP = (
    "Serve the MCP tools over stdio. When `groundwiki serve` already runs on this wiki, the "
    "session is forwarded to its MCP endpoint (/mcp/) instead, waiting up to "
    f"{WAIT_S:.0f} s for a sidecar that is still starting. A sidecar with tokens needs one: "
    f"set {TOKEN_ENV} to your token (or sidecar.token in mkdocs.yml); the session then answers "
    "in that token's scope, and with --user only if it is that user's."
)


class NotForwarded(GroundwikiError):
    """The running sidecar cannot take this session as asked; says why and what to do."""


def forward_to_running(args: argparse.Namespace, sidecar: Sidecar, busy: IndexBusy) -> int:
    """Forward the stdio session to the sidecar holding the index folder; `busy` (the claim's
    refusal) when no sidecar holds it (an `index` run does)."""
    found = listening.running(sidecar.index_dir)
    if found is None:
        raise busy
    target = Target(found.url, found.pid)
    token = sidecar.settings.token
    status = _serving(sidecar, target, args.user, quiet=args.quiet)
    _check_scope(status["scope"], args.user, token, target)
    from groundwiki_sidecar.api.mcp_forward import AGAIN, forward

    log.info(
        "forwarding to the sidecar at %s (pid %d), in the %s scope",
        target.url,
        found.pid,
        status["scope"],
    )
    why = forward(f"{target.url}/mcp/", token)
    if why:
        print(f"groundwiki: {_where(target)} {why}; {AGAIN}", file=sys.stderr)
        return 1
    return 0


def _where(target: Target) -> str:
    return f"the sidecar at {target.url} (pid {target.pid})"


def _serving(sidecar: Sidecar, target: Target, user: str | None, quiet: bool) -> dict[str, Any]:
    """The sidecar's /status once it serves its MCP endpoint, a sidecar still starting waited
    for up to WAIT_S; NotForwarded when it refuses, stops or is not ready by then."""
    deadline = time.monotonic() + WAIT_S
    told: float | None = None
    while True:
        reply = ask(sidecar, target, "/status", 5, ("scope", "tokens"))
        if reply.problem:
            raise NotForwarded(_refused(reply, target, sidecar.settings.token, user))
        if reply.data is not None and not _still_warming(reply.data):
            return reply.data
        doing = _doing(reply.data)
        alive = listening.running(sidecar.index_dir)
        if alive is None or alive.pid != target.pid:
            raise NotForwarded(
                f"{_where(target)} stopped while starting: see its log, and start groundwiki "
                "mcp again"
            )
        now = time.monotonic()
        if now >= deadline:
            raise NotForwarded(
                f"{_where(target)} is still starting after {WAIT_S:.0f} s ({doing}); run "
                "groundwiki mcp again once `groundwiki status` says it is ready"
            )
        if told is None:
            log.info(
                "waiting up to %.0f s for %s, which is starting: %s", WAIT_S, _where(target), doing
            )
            told = now
        elif not quiet and now - told >= TELL_EVERY_S:
            log.info("still waiting for %s: %s", _where(target), doing)
            told = now
        time.sleep(POLL_S)


def _still_warming(status: dict[str, Any]) -> bool:
    """Whether /status came from the answers a sidecar gives before its application (and
    /mcp/ with it) is made: they alone say the tokens are `starting` (api/starting.py)."""
    tokens = status.get("tokens")
    return isinstance(tokens, dict) and tokens.get("state") == "starting"


def _doing(status: dict[str, Any] | None) -> str:
    starting = (status or {}).get("starting")
    if not isinstance(starting, dict):
        return "its port is not open yet"
    return f"{starting.get('doing', 'starting')}, {starting.get('percent', 0):.0f}%"


def _refused(reply: Reply, target: Target, token: str | None, user: str | None) -> str:
    if reply.refusal != "unauthorized":
        return reply.problem
    whose = f"{user}'s token" if user else "your token"
    make = f"`groundwiki token new {user or 'USER'}` makes one"
    if token:
        return (
            f"{_where(target)} refused the token this command sends ({TOKEN_ENV}, or "
            f"sidecar.token in mkdocs.yml): revoked, or not one of its tokens; set {TOKEN_ENV} "
            f"to {whose} ({make})"
        )
    if user:
        return f"{_where(target)} requires a token: set {TOKEN_ENV} to {whose} ({make})"
    return (
        f"{_where(target)} requires a token: set {TOKEN_ENV} to your token (a user's, which "
        "`groundwiki token new USER` makes, or the team's sidecar.token)"
    )


def _check_scope(scope: str, user: str | None, token: str | None, target: Target) -> None:
    """Refuse a session the sidecar would answer in another scope than asked: `--user`'s, or
    without a token the shared one (a sidecar started with --user answers in that user's)."""
    asked = user_scope(user) if user or not token else None  # a token alone: its own scope
    if asked is None or scope == asked:
        return
    if token:
        raise NotForwarded(
            f"{_where(target)} answers the token sent in the {scope} scope, not {asked}: set "
            f"{TOKEN_ENV} to {user}'s token, or leave out --user to use the token's scope"
        )
    flag = f" --user {user}" if user else ""
    raise NotForwarded(
        f"{_where(target)} answers in the {scope} scope, not {asked}: restart it as "
        f"`groundwiki serve{flag}`, or stop it and run `groundwiki mcp{flag}` alone"
    )
