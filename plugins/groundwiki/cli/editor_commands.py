"""`groundwiki lsp`: the language server for writers' editors (editor/server.py)."""

from __future__ import annotations

import argparse
from typing import Any

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    lsp = commands.add_parser(
        "lsp",
        parents=[common],
        help="run the language server for editors (VS Code, Neovim, Helix, Zed) over stdio",
        description="Serve the Language Server Protocol over stdin and stdout for the wiki "
        "whose mkdocs.yml is in the editor's workspace folder (or -f): lint findings as "
        "diagnostics on every change, go to definition on a wikilink, an embed or a provenance "
        "comment, hovers, completion of keys, aliases, headings, block ids and raw-source "
        "paths, references (backlinks), rename of a page (groundwiki rename, as one workspace "
        "edit the editor applies) and quick fixes for a moved citation and a missing summary. "
        "The editor starts it; the handbook's editor page shows the setup.",
    )
    lsp.set_defaults(run=run_lsp, needs_config=False)


def run_lsp(args: argparse.Namespace, config: Config | None) -> int:
    try:
        from groundwiki.editor.server import main
    except ImportError as exc:  # pygls is the [editor] extra's
        raise GroundwikiError(
            f"the language server needs pygls ({exc.name} is missing): "
            "pip install 'groundwiki[editor]'"
        ) from exc
    return main(getattr(args, "config_file", None))
