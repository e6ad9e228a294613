"""The search lanes: this tuple is the only list of them.

Everything that knows the lanes derives from it: the query engine's runs and fusion, the
default weights and the `weights` setting, `/status`, the API's `lanes` enum and the
evaluation's columns. Adding a lane is one module under `lanes/` and one line here.

Light to import (no index library): the MkDocs plugin validates the `sidecar:` block with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import (
    KINDS,
    RUN_STATES,
    BaseLane,
    Filters,
    Fused,
    Lane,
    LaneQuery,
    LaneRun,
    LaneState,
    fuse,
)
from .lexical import LEXICAL
from .semantic import SEMANTIC
from .token import TOKEN

if TYPE_CHECKING:
    from ..sync import Indexer

LANES: tuple[Lane, ...] = (LEXICAL, SEMANTIC, TOKEN)

__all__ = [
    "KINDS",
    "LANES",
    "RUN_STATES",
    "BaseLane",
    "Filters",
    "Fused",
    "Lane",
    "LaneQuery",
    "LaneRun",
    "LaneState",
    "default_weights",
    "fuse",
    "get",
    "names",
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


def status(indexer: Indexer) -> dict[str, LaneState]:
    """What `/status` reports per lane."""
    return {lane.name: lane.status(indexer) for lane in LANES}
