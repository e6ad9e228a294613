"""The compiler core: reads wiki/ and raw-sources/ into one model. It never imports MkDocs."""

from .config import Config, ConfigError, load_config
from .graph import Graph, build_graph
from .lint import Finding, LintReport, run_lint
from .wiki import Wiki, compile_wiki

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
