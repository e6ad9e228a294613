"""The command line run as a user runs it: subprocesses of `groundwiki`, hooks and packaging. Every test in this folder is marked `cli`."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.cli)
