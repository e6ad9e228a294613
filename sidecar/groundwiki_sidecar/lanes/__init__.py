"""The search lanes: this tuple is the only list of them.

Everything that knows the lanes derives from it: the query engine's runs and fusion, the
default weights and the `weights` setting, `/status`, the API's `lanes` enum and the
evaluation's columns. Adding a lane is one module under `lanes/` and one line here.

Light to import (no index library): a site build checks the `sidecar:` block with it (through
the `groundwiki.blocks` entry point). The bottom of the sidecar: it imports only the compiler
core; what a lane reads of the indexer and its snapshots is a Protocol (`reading.py`).
"""

from __future__ import annotations

from typing import Any

from groundwiki_sidecar.lanes.base import (
    FUSION_METHODS,
    KINDS,
    LANE_STATES,
    NORMALISATIONS,
    RUN_STATES,
    BaseLane,
    Filters,
    Fused,
    Fusion,
    Lane,
    LaneQuery,
    LaneRun,
    LaneState,
    Scored,
    fuse,
    fuse_convex,
)
from groundwiki_sidecar.lanes.lexical_lane import LEXICAL
from groundwiki_sidecar.lanes.reading import LaneIndexer, LaneView
from groundwiki_sidecar.lanes.semantic_lane import SEMANTIC
from groundwiki_sidecar.lanes.token_lane import TOKEN

LANES: tuple[Lane, ...] = (LEXICAL, SEMANTIC, TOKEN)


def prepare(snapshot: Any) -> None:
    """What each lane derives from a batch's records (a lane with a `prepare`), made now, in
    the sync's thread once it has published them, instead of in the first query after it."""
    for lane in LANES:
        made = getattr(lane, "prepare", None)
        if made is not None:
            made(snapshot)


__all__ = [
    "FUSION_METHODS",
    "KINDS",
    "LANES",
    "LANE_STATES",
    "NORMALISATIONS",
    "RUN_STATES",
    "BaseLane",
    "Filters",
    "Fused",
    "Fusion",
    "Lane",
    "LaneQuery",
    "LaneRun",
    "LaneState",
    "Scored",
    "default_weights",
    "fuse",
    "fuse_convex",
    "get",
    "names",
    "prepare",
    "status",
]


def names(kind: str | None = None) -> tuple[str, ...]:
    """The lanes that rank `kind` (page, chunk), in registry order; every lane for None."""
    return tuple(lane.name for lane in LANES if kind is None or kind in lane.kinds)


def default_weights() -> dict[str, float]:
    return {lane.name: lane.weight for lane in LANES}


def get(name: str) -> Lane:
    for lane in LANES:
        if lane.name == name:
            return lane
    raise KeyError(name)


def status(indexer: LaneIndexer, view: LaneView | None = None) -> dict[str, dict[str, Any]]:
    """What `/status` reports per lane: its state as a whole, and under `kinds` its state for
    searches of each kind it ranks, from the state function the searches ask (with
    `embed_chunks: false` the semantic lane is `ok` for pages and `unavailable` for chunks).
    For `view`'s viewer, as their searches find it (None: the whole index)."""
    return {
        lane.name: {
            **_json(lane.status(indexer, None, view)),
            "kinds": {kind: _json(lane.status(indexer, kind, view)) for kind in lane.kinds},
        }
        for lane in LANES
    }


def _json(state: LaneState) -> dict[str, str]:
    return {"state": state.state, "reason": state.reason}
