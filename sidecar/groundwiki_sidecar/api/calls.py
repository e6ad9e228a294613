"""One path from a surface to an operation: the HTTP routes (`http_routes.py`), the MCP tools
(`mcp_tools.py`) and `groundwiki audit replay` all answer through `answer`, so whatever must
happen around every answer (the audit trail) happens in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groundwiki_sidecar.api.catalog import Answer, Operation
from groundwiki_sidecar.api.parameters import Args

if TYPE_CHECKING:
    from groundwiki_sidecar.api.operations import Operations


def answer(operation: Operation, ops: Operations, args: Args) -> Answer:
    """`operation`'s answer to `args`, for the viewer `ops` serves (`Operations.viewing`); an
    audited operation's answer is recorded in the audit trail once it is made."""
    audit = ops.service.audit if operation.audited else None
    if audit is None:
        return operation.run(ops, args)
    # The record keeps each hit's rank in each lane, which the hits carry only when explained.
    wanted = bool(args.get("explain"))
    result = operation.run(ops, {**args, "explain": True} if "explain" in args else args)
    audit.record(record(operation, ops, args, result))
    if "explain" in args and not wanted:
        for hit in result.get("hits", ()):
            hit.pop("explain", None)
    return result


def record(operation: Operation, ops: Operations, args: Args, result: Answer) -> dict[str, Any]:
    """What the audit trail keeps of one answer: who asked what, what came back (IDs in order,
    with each hit's rank per lane), and the state of the indexes it came from."""
    indexer = ops.service.indexer
    snapshot = indexer.snapshot
    hits = result.get("hits")
    if hits is not None:
        returned = [hit.get("key", hit.get("id")) for hit in hits]
        lanes: list[dict[str, int]] | None = [
            {lane: part["rank"] for lane, part in hit.get("explain", {}).items()} for hit in hits
        ]
    else:
        listed = result.get("pages") if operation.name == "pages" else result.get("chunks", [])
        returned = [item.get("key", item.get("id")) for item in listed or []]
        lanes = None
    asked = {
        name: list(value) if isinstance(value, tuple) else value
        for name, value in args.items()
        if name != "explain" and value not in (None, (), [])
    }
    return {
        "user": ops.user or "global",
        "op": operation.name,
        "args": asked,
        "returned": returned,
        **({"lanes": lanes} if lanes is not None else {}),
        "generation": result.get("generation", result.get("freshness", {}).get("generation")),
        "model": indexer.embedder.identity if indexer.embedder else "",
        # A replay can differ only because more vectors exist now: the record says how many.
        **({"vectors": vectors} if (vectors := result.get("freshness", {}).get("vectors")) else {}),
        "policy": snapshot.wiki.policy.identity if snapshot is not None else "",
    }
