"""One path from a surface to an operation: the HTTP routes (`api.py`), the MCP tools
(`mcp_tools.py`) and `groundwiki audit replay` all answer through `answer`, so whatever must
happen around every answer (the audit trail) happens in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .catalog import Answer, Args, Operation

if TYPE_CHECKING:
    from .operations import Operations


def answer(operation: Operation, ops: Operations, args: Args) -> Answer:
    """`operation`'s answer to `args`, for the viewer `ops` serves (`Operations.viewing`)."""
    return operation.run(ops, args)
