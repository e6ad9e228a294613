"""`groundwiki init FOLDER`: the mkdocs.yml that builds a folder of notes (an Obsidian vault,
say) as a groundwiki site, written beside the folder, not inside it.

Beside it, because MkDocs refuses a site folder inside the docs folder, and because a vault
should not hold the site built from it (Obsidian would index the HTML). The file names its
folder relative to itself, so the pair can move together.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config

CONFIG_NAME = "mkdocs.yml"


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    init = commands.add_parser(
        "init",
        parents=[common],
        help="write the mkdocs.yml that builds a folder of notes",
        description="Write mkdocs.yml beside FOLDER (in its parent folder): the folder as the "
        "wiki, the site built beside it, groundwiki and mkdocs-material on, Obsidian's own "
        "folders left out. Refuses to overwrite an mkdocs.yml that is there.",
    )
    init.add_argument("folder", metavar="FOLDER", type=Path, help="the notes: a vault, a wiki/")
    init.add_argument("--site-name", help="the site's name (default: the folder's name)")
    init.set_defaults(run=run, needs_config=False)


def run(args: argparse.Namespace, config: Config | None) -> int:
    folder = args.folder.resolve()
    if not folder.is_dir():
        raise GroundwikiError(f"{args.folder} is no folder: give the folder of your notes")
    parent = folder.parent
    if parent == folder:
        raise GroundwikiError("the notes must be in a folder of their own, not at /")
    target = parent / CONFIG_NAME
    if target.exists():
        raise GroundwikiError(
            f"{target} exists already; build with it (mkdocs build -f {target}) or move it away "
            "and run groundwiki init again"
        )
    text = config_text(folder, args.site_name or folder.name)
    target.write_text(text, encoding="utf-8")
    shown = os.path.relpath(target)
    if not args.quiet:
        print(f"wrote {shown}")
        print(f"  check the notes:   groundwiki -f {shown} lint")
        print(f"  read them:         mkdocs serve -f {shown}   (http://127.0.0.1:8000)")
        print(f"  build the site:    mkdocs build -f {shown}   (into {parent / 'site'})")
    return 0


def config_text(folder: Path, site_name: str) -> str:
    """The mkdocs.yml for `folder`, written in its parent folder."""
    lines = [
        f"# Written by `groundwiki init {folder.name}`: the notes in {folder.name}/, the site built",
        "# into site/ beside them (MkDocs refuses a site folder inside the notes).",
        f"site_name: {json.dumps(site_name)}",
        f"docs_dir: {json.dumps(folder.name)}",
        "site_dir: site",
        "theme:",
        "  name: material",
        "  font: false  # the system's fonts: no request to Google Fonts, the site works offline",
        "  features:",
        "    - navigation.instant",
        "    - search.highlight",
        "plugins:",
        "  - search",
        "  - groundwiki",
    ]
    excluded = _excluded(folder)
    if excluded:
        lines += [
            "# Kept out of the site: MkDocs already leaves out every file and folder whose name",
            "# starts with a dot (.obsidian/, .trash/).",
            "exclude_docs: |",
            *(f"  /{name}/" for name in excluded),
        ]
    return "\n".join(lines) + "\n"


def _excluded(folder: Path) -> list[str]:
    """Obsidian's templates folder, when the vault names one that exists: templates hold
    placeholders (`{{date}}`), not pages."""
    settings = folder / ".obsidian" / "templates.json"
    names: list[str] = []
    try:
        named = json.loads(settings.read_text(encoding="utf-8")).get("folder")
    except (OSError, ValueError, AttributeError):
        named = None
    if isinstance(named, str) and named.strip("/") and (folder / named.strip("/")).is_dir():
        names.append(named.strip("/"))
    elif (folder / "Templates").is_dir():
        names.append("Templates")
    return names
