"""Real `mkdocs build` runs of a wiki written to disk, shared by the site, browser and sidecar
tests: a build of a config as it is, or with mkdocs-material and the search plugin. Each build is
a process of its own (helpers.commands)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from helpers.commands import mkdocs
from helpers.wikis import ROOT

SCHEMAS = ROOT / "plugins/groundwiki/core/schemas"


def build(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mkdocs build` of the config as written, into `site/` beside it."""
    site = config.parent / "site"
    return mkdocs("build", "-f", str(config), "-d", str(site), *args, env=_env())


def with_material(config: Path) -> Path:
    """The config with mkdocs-material as its theme."""
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material"}
    config.write_text(yaml.safe_dump(data))
    return config


def build_material_site(root: Path, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """`mkdocs build` of `root/mkdocs.yml` with mkdocs-material, the search plugin and the
    groundwiki options given (or those written), into `root/site`."""
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["theme"] = {"name": "material"}
    ours = options or next(p["groundwiki"] for p in data["plugins"] if "groundwiki" in p)
    data["plugins"] = ["search", {"groundwiki": ours}]
    config.write_text(yaml.safe_dump(data))
    return mkdocs("build", "-f", str(config), "-d", str(root / "site"), *args, env=_env())


def _env() -> dict[str, str]:
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def html(root: Path, url: str) -> str:
    """The built page at `url` (a directory URL) of the site in `root/site`."""
    return (root / "site" / url / "index.html").read_text()
