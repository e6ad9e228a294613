"""The `sidecar:` key of the `groundwiki` block as the core sees it: the folder of the indexes,
beside which a site build keeps its state, and the check of the whole key at build time.

The sidecar declares its settings (`groundwiki_sidecar.base.settings`) and registers their check
under the `groundwiki.blocks` entry point group (pyproject.toml), so that a typo there fails the
site build, not the next `groundwiki serve`, without the core or the MkDocs plugin importing the
sidecar: they stand below it.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from groundwiki.core.config.wiki_config import lines_of

SIDECAR = "sidecar"
INDEX_DIR = ".groundwiki"  # `sidecar.index_dir` by default: the sidecar's declaration says so
BLOCKS_GROUP = "groundwiki.blocks"  # key of the groundwiki block -> the function checking it


def check_blocks(block: Mapping[str, Any], config_file: Path) -> None:
    """Check each key of the `groundwiki` block that another layer declares with the check it
    registered: `check(value, source, line_of)` raises `ConfigError` naming mkdocs.yml's line."""
    for entry in entry_points(group=BLOCKS_GROUP):
        check = entry.load()
        check(block.get(entry.name), config_file.name, lines_of(config_file, entry.name))


def index_dir(block: Mapping[str, Any]) -> str:
    """The folder of the sidecar's indexes, from the wiki root, as the `sidecar:` key of a
    checked block (`check_blocks`) names it."""
    settings = block.get(SIDECAR)
    value = settings.get("index_dir") if isinstance(settings, Mapping) else None
    return value if isinstance(value, str) else INDEX_DIR
