"""The compiler core: reads wiki/ and raw-sources/ into one model. Its front door names its
folders' main entries; no core module imports through it, and it never imports MkDocs, the
sidecar or the command line.

The names are loaded on first use (PEP 562): importing one core module (the config, to read a
mkdocs.yml) must not import the whole compiler, or `groundwiki mcp` answers its client's
`initialize` later by the compiler's import time."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from groundwiki.core.config.wiki_config import Config, ConfigError, load_config
    from groundwiki.core.lint import Finding, LintReport, run_lint
    from groundwiki.core.wiki.compiled import Wiki
    from groundwiki.core.wiki.compiler import compile_wiki
    from groundwiki.core.wiki.graph import Graph, build_graph

_WHERE = {
    "Config": "groundwiki.core.config.wiki_config",
    "ConfigError": "groundwiki.core.config.wiki_config",
    "load_config": "groundwiki.core.config.wiki_config",
    "Finding": "groundwiki.core.lint",
    "LintReport": "groundwiki.core.lint",
    "run_lint": "groundwiki.core.lint",
    "Wiki": "groundwiki.core.wiki.compiled",
    "compile_wiki": "groundwiki.core.wiki.compiler",
    "Graph": "groundwiki.core.wiki.graph",
    "build_graph": "groundwiki.core.wiki.graph",
}

__all__ = [
    "Config",
    "ConfigError",
    "Finding",
    "Graph",
    "LintReport",
    "Wiki",
    "build_graph",
    "compile_wiki",
    "load_config",
    "run_lint",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'groundwiki.core' has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)
