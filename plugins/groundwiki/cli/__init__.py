"""The `groundwiki` command. This module only starts it: the parser and the dispatch are in
`dispatch`, imported when the command runs, after the one thing that must come first (the MCP
session's early `initialize` answer, which cannot wait for the imports)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

# The global options that take a value, so that the command after them can be found without
# the parser (whose imports are what the early answer must not wait for).
_VALUED = ("-f", "--config-file")


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None and command_of(sys.argv[1:]) == "mcp":
        from groundwiki_sidecar.api import mcp_handshake

        mcp_handshake.answer_early()
    from groundwiki.cli.dispatch import main as dispatch

    return dispatch(argv)


def command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names, when it is plain to see: None with --help, or an option the
    parser would have to read."""
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help"):
            return None
        if word in _VALUED:
            next(words, None)
        elif word.startswith("-"):
            if not (word in ("-q", "--quiet") or word.startswith(("--config-file=", "-f"))):
                return None
        else:
            return None if any(w in ("-h", "--help") for w in words) else word
    return None


def __getattr__(name: str) -> Any:
    if name in ("build_parser", "GROUPS"):
        from groundwiki.cli import dispatch

        return getattr(dispatch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    raise SystemExit(main())
