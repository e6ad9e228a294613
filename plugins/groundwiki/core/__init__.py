"""The compiler core: reads wiki/ and raw-sources/ into one model. Its front door imports its folders;
no core module imports through it, and it never imports MkDocs, the sidecar or the command line."""

from groundwiki.core.config.wiki_config import Config, ConfigError, load_config
from groundwiki.core.lint import Finding, LintReport, run_lint
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import compile_wiki
from groundwiki.core.wiki.graph import Graph, build_graph

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
