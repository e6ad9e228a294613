"""The sidecar's real components: Whoosh and Chroma on disk, watchdog, the model, a process on
127.0.0.1. Every test in this folder is marked `sidecar`."""

from __future__ import annotations

from pathlib import Path

import pytest

# Autouse, once per session: the int8 graph derived before any worker embeds (not once per process).
from helpers.sidecar_fixtures import derived_model  # noqa: F401

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.sidecar)
