"""The MCP `initialize` answer of `groundwiki mcp`, given before the MCP SDK is imported.

Importing the SDK and the sidecar takes about 2 s on a 2-core machine, and MCP clients time the
handshake. The answer to `initialize` depends only on the server's name, version, instructions
and capabilities (fixed here) and on the protocol version the client asks for, so a thread
started before the imports reads the first line of stdin and answers it when it is an
`initialize` request this module can answer exactly as the SDK would. The line is then handed to
the SDK as if unread (so its session is initialized the same way), and the SDK's own answer to
it is dropped. tests/sidecar/test_mcp_handshake.py pins this answer to the SDK's, byte for byte.

This module imports nothing but the standard library: it runs before everything else.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from groundwiki import __version__

SERVER_NAME = "groundwiki"
SERVER_VERSION = __version__  # the distribution's: the SDK server is given the same

INSTRUCTIONS = (
    "A grounded wiki: every page summarises a topic and points at the raw-source chunks its "
    "claims come from. Read wiki_overview once; then get_context (a prompt-ready block within a "
    "token budget) or search_wiki for a question: pages first (one summary per topic beats many "
    "raw chunks); read chunks with get_chunks when you need exact wording or must verify a claim. Chunk IDs look like "
    "ch_0123456789abcdef: copy them verbatim from the `pointers` of search hits, never invent "
    "or shorten them. Before answering, call verify_citations with the chunks you read."
)

# The SDK's handshake versions (mcp.server.runner.HANDSHAKE_PROTOCOL_VERSIONS), oldest first:
# a client asking for another gets the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}

# The first line is read a byte at a time (the SDK reads the rest through its own file object,
# so nothing past the line may be taken); a line longer than this is left to the SDK.
MAX_LINE_BYTES = 64 * 1024


def initialize_answer(message: Any) -> dict[str, Any] | None:
    """The SDK's reply to `message` when it is an `initialize` request whose parameters the SDK
    accepts as they are; None for anything else (the SDK answers it)."""
    if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
        return None
    request_id, params = message["id"], message["params"]
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize":
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if not _plain_hello(params):
        return None
    asked = params["protocolVersion"]
    version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
    result = {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
    }
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _plain_hello(params: Any) -> bool:
    """Parameters the SDK's model takes without a doubt: the required fields as plain strings
    and objects, nothing else. Any other shape (extra fields, a `_meta`, a capability that is
    no object) is answered by the SDK itself, a second later."""
    if not isinstance(params, dict) or set(params) != {
        "protocolVersion",
        "capabilities",
        "clientInfo",
    }:
        return False
    client = params["clientInfo"]
    return (
        isinstance(params["protocolVersion"], str)
        and isinstance(params["capabilities"], dict)
        and all(_flags(value) for value in params["capabilities"].values())
        and isinstance(client, dict)
        and set(client) <= {"name", "version", "title"}
        and all(isinstance(client.get(key, ""), str) for key in ("name", "version", "title"))
        and "name" in client
        and "version" in client
    )


def _flags(value: Any, depth: int = 0) -> bool:
    """An object of objects whose leaves are true or false (`{"roots": {"listChanged": true}}`,
    `{"sampling": {}}`): the shape of every capability the spec defines for clients."""
    if not isinstance(value, dict) or depth > 3:
        return False
    return all(
        isinstance(inner, bool) or _flags(inner, depth + 1)
        for key, inner in value.items()
        if isinstance(key, str)
    )


class EarlyHandshake:
    """Reads the first line of `fd_in` and answers it on `fd_out` when it is an `initialize`
    request; `handed_over()` gives the line back (to replay to the SDK) and the ID answered."""

    def __init__(self, fd_in: int = 0, fd_out: int = 1) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.line = b""
        self.answered: int | str | None = None
        self._thread = threading.Thread(target=self._run, name="groundwiki-mcp-hello", daemon=True)

    def start(self) -> EarlyHandshake:
        self._thread.start()
        return self

    def handed_over(self) -> tuple[bytes, int | str | None]:
        """Once the first line is read: the bytes taken from stdin and the request ID already
        answered (None when the SDK must answer the line itself)."""
        self._thread.join()
        return self.line, self.answered

    def _run(self) -> None:
        taken = bytearray()
        while len(taken) < MAX_LINE_BYTES:
            try:
                byte = os.read(self.fd_in, 1)
            except OSError:
                break
            if not byte:
                break
            taken += byte
            if byte == b"\n":
                break
        self.line = bytes(taken)
        if not self.line.endswith(b"\n"):
            return  # end of input or a very long line: the SDK reads it whole
        try:
            answer = initialize_answer(json.loads(self.line))
        except (ValueError, RecursionError):
            return
        if answer is None:
            return
        try:
            _write_all(self.fd_out, wire(answer))
        except (OSError, ValueError):  # ValueError: an ID with a lone surrogate, not UTF-8
            return
        self.answered = answer["id"]


def wire(answer: dict[str, Any]) -> bytes:
    """`answer` as the SDK's stdio transport writes a message: compact JSON in UTF-8, a line."""
    return (json.dumps(answer, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


_early: EarlyHandshake | None = None


def answer_early() -> None:
    """Start the early answer for this process's `groundwiki mcp` session."""
    global _early
    if _early is None:
        _early = EarlyHandshake().start()


def taken() -> EarlyHandshake | None:
    """The early answer of this process, if one was started."""
    return _early
