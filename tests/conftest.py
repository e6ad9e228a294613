"""What every test folder shares: the `make_wiki` fixture, and the order modules are handed to
pytest-xdist's workers in. Each folder's own conftest marks its tests (core, cli, site, sidecar,
browser, scale); helpers live in tests/helpers/."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from groundwiki.core import Wiki, compile_wiki, load_config
from helpers.wikis import MakeWiki, write_wiki

# pytest's own fixture for running a pytest session inside a test (the fast-lane guard's test).
pytest_plugins = ["pytester"]


@pytest.fixture
def make_wiki(tmp_path: Path) -> MakeWiki:
    def build(
        pages: dict[str, str],
        sources: dict[str, str | bytes] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Wiki:
        config_file = write_wiki(tmp_path, pages, sources, options)
        return compile_wiki(load_config(config_file))

    return build


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules marked `long` first, then the others with the most tests first; a module's tests
    stay together and in order. `make test` hands modules to the workers in this order
    (`--dist loadfile --no-loadscope-reorder`): xdist's own order, most tests first, left two
    long modules of two tests each to run alone at the end while the other worker sat idle."""
    for item in items:
        if item.get_closest_marker("serial") and "pytest.mark.serial" not in item.path.read_text():
            # `make test` runs the serial tests of the modules that say `pytest.mark.serial`.
            raise pytest.UsageError(
                f"{item.nodeid} is marked serial, but its module does not say "
                "`pytest.mark.serial`: mark it in the module, where `make test` looks"
            )
    count = Counter(item.path for item in items)
    first = {}
    for index, item in enumerate(items):
        first.setdefault(item.path, (index, item.get_closest_marker("long") is None))
    items.sort(key=lambda item: (first[item.path][1], -count[item.path], first[item.path][0]))
