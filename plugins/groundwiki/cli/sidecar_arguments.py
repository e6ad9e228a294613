"""The arguments the sidecar's commands share, checked as the sidecar checks them: a port, a
user ID, a number of hits, and their help lines."""

from __future__ import annotations

import argparse
import dataclasses

from groundwiki_sidecar.api.identity import USER_ID
from groundwiki_sidecar.api.parameters import LIMIT, OperationError
from groundwiki_sidecar.base.settings import SidecarSettings

from groundwiki.core.config.settings_spec import SPEC, Integer

USER_HELP = (
    "answer in this user's scope (their pages, then the shared ones they do not shadow); on "
    "loopback without tokens only"
)
PORT_HELP = (
    "the running sidecar's port (default: where the running sidecar recorded it listens, "
    "else sidecar.port)"
)


def user_argument(raw: str) -> str:
    if not USER_ID.fullmatch(raw):
        raise argparse.ArgumentTypeError(
            f"'{raw}' is no user ID: a folder name under wiki/user/ (letters, digits, . _ -)"
        )
    return raw


def _port_range() -> tuple[int, int]:
    """The ports `sidecar.port` takes, as its setting declares them."""
    (port,) = (f for f in dataclasses.fields(SidecarSettings) if f.name == "port")
    kind = port.metadata[SPEC].kind
    assert isinstance(kind, Integer) and kind.high is not None, kind
    return kind.low, kind.high


def port_argument(text: str) -> int:
    low, high = _port_range()
    if not text.isdigit() or not low <= int(text) <= high:
        raise argparse.ArgumentTypeError(f"a port is a number from {low} to {high}, not {text!r}")
    return int(text)


# argparse names the type in its message when int() raises ValueError on a digit that isdigit()
# accepts (`--port ²`: "invalid _port value"); the name stays the one the message always showed.
port_argument.__name__ = "_port"


def limit_argument(text: str) -> int:
    """`--limit`: the hits the API's `limit` takes, checked as the API checks it."""
    assert LIMIT.decode is not None
    try:
        return int(LIMIT.decode(text))
    except OperationError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message}, not {text!r}") from None
