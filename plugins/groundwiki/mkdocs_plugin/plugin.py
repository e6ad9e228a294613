"""MkDocs events for groundwiki. Every decision is the core's; this file only wires it in."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from ..core.config import ConfigError, Options, build_config, options_from_mapping
from ..core.lint import LintReport, run_lint
from ..core.lint.baseline import BaselineError
from ..core.lint.runner import check_rule_names
from ..core.sources import ChunkCache
from ..core.tokens import TokenizerUnavailable
from ..core.wiki import Wiki, compile_wiki
from .config import GroundwikiConfig

log = logging.getLogger("mkdocs.plugins.groundwiki")


class GroundwikiPlugin(BasePlugin[GroundwikiConfig]):
    def __init__(self) -> None:
        self.wiki: Wiki | None = None
        self.report: LintReport | None = None
        self._chunk_cache: ChunkCache = {}  # survives rebuilds under `mkdocs serve`

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        config_file = Path(config.config_file_path)
        try:
            options: Options = options_from_mapping(dict(self.config), source=config_file.name)
            check_rule_names(options.rules, source=config_file.name)
            self.core_config = build_config(
                config_file.parent,
                config.docs_dir,
                options,
                config_file,
                config.use_directory_urls,
            )
        except ConfigError as exc:
            raise PluginError(str(exc)) from exc
        return config

    def on_pre_build(self, config: MkDocsConfig) -> None:
        try:
            self.wiki = compile_wiki(self.core_config, cache=self._chunk_cache)
            self.report = run_lint(self.wiki)
        except (BaselineError, TokenizerUnavailable) as exc:
            raise PluginError(f"groundwiki: {exc}") from exc
        for finding in self.report.findings:
            text = f"{finding.path}:{finding.line}:{finding.column}: {finding.rule}: {finding.message} ({finding.hint})"
            # MkDocs' --strict fails on warnings: only lint errors are logged at that level.
            (log.warning if finding.severity == "error" else log.info)(text)
        if self.core_config.strict and self.report.failed(strict=True):
            counts = self.report.counts
            raise PluginError(
                f"groundwiki strict: {counts['error']} errors and {counts['warning']} warnings"
            )

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # raw-sources/ and the lock sit outside docs_dir, so MkDocs would not notice their edits.
        for path in (self.core_config.raw_dir, self.core_config.lock_path):
            if path.exists():
                server.watch(str(path))
        return server
