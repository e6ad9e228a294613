"""What every test folder shares: the `make_wiki` fixture. Each folder's own conftest marks its
tests (core, cli, site, sidecar, browser, scale); helpers live in tests/helpers/."""

from __future__ import annotations

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
