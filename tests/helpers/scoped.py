"""The scoped example wiki (tests/fixtures/scoped), copied for a test: alice shadows `deploy` and
keeps `scratch`, bob keeps `rollback`; and the words only one user's pages hold."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

FIXTURE = Path(__file__).parents[1] / "fixtures" / "scoped"
# Words only one user's pages hold: finding one where that user is not the viewer is a leak.
ALICE_WORDS = ("tangerine", "quince", "scratchpad")
BOB_WORDS = ("marmalade",)


def scoped_copy(root: Path, **options: object) -> Path:
    """The scoped wiki copied into `root` (its `groundwiki` options replaced when given); its
    mkdocs.yml."""
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    shutil.rmtree(root / "site", ignore_errors=True)
    config = root / "mkdocs.yml"
    if options:
        data = yaml.safe_load(config.read_text())
        data["plugins"] = [{"groundwiki": dict(options)}]
        config.write_text(yaml.safe_dump(data))
    return config
