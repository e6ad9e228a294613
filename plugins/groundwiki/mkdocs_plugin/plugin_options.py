"""The `groundwiki` plugin's options as MkDocs sees them, derived from their one declaration.

Each option is declared once in the core (`core.config.Options`: the compiler's and what the
site shows; `sidecar:` in `sidecar.settings`). MkDocs gets one pass-through option per declared
name, with its default: it judges no value, so a bad one meets our validator alone
(`checked_settings`, in `on_config`, before any page is built) and its message names
mkdocs.yml's line and the fix. A key that nothing declares stays MkDocs' warning (an error
under --strict), in our words.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, NamedTuple

from mkdocs.config import base
from mkdocs.config.defaults import MkDocsConfig

from groundwiki.core.config.sidecar_block import check_blocks, index_dir
from groundwiki.core.config.wiki_config import (
    Config,
    Options,
    build_config,
    lines_of,
    options_from_mapping,
    unknown_option,
)
from groundwiki.core.lint.runner import check_rule_names


class Passed(base.BaseConfigOption[Any]):
    """An option MkDocs stores as written (its default when absent); groundwiki checks it."""

    def __init__(self, default: Any) -> None:
        super().__init__()
        self.default = default


class DeclaredConfig(base.Config):
    """A MkDocs config class whose options are a settings dataclass's fields."""

    def __init_subclass__(cls, declared: type | None = None, **kwargs: Any) -> None:
        for field in dataclasses.fields(declared) if declared else ():
            if field.default_factory is not dataclasses.MISSING:
                default = field.default_factory()
            else:
                default = field.default
            option = Passed(default)
            option.__set_name__(cls, field.name)
            setattr(cls, field.name, option)
        super().__init_subclass__(**kwargs)  # MkDocs collects the options set above

    def validate(self) -> tuple[base.ConfigErrors, base.ConfigWarnings]:
        failed, warnings = super().validate()
        known = {name for name, _ in base.get_schema(type(self))}
        path = Path(self.config_file_path) if self.config_file_path else None
        source = path.name if path else "mkdocs.yml"
        line_of = lines_of(path) if path else None
        # MkDocs says "Unrecognised configuration name"; say where, and what a typo meant.
        warnings = [
            (key, unknown_option(key, source, line_of) if key not in known else text)
            for key, text in warnings
        ]
        return failed, warnings


class GroundwikiConfig(DeclaredConfig, declared=Options):
    # The sidecar's own settings (host, port, index folder, model...): the plugin checks them
    # with the sidecar's declaration, so a typo fails the build, not the next `groundwiki serve`.
    sidecar = Passed({})


class Settings(NamedTuple):
    options: Options  # checked; the plugin's config keeps the values as written
    core: Config
    state_dir: Path  # build state (timings, the compile cache), beside the sidecar's indexes


def checked_settings(
    block: GroundwikiConfig, config: MkDocsConfig, previews_drafts: bool = False
) -> Settings:
    """The `groundwiki` block of mkdocs.yml checked, and the core's configuration made of it.
    `previews_drafts`: `mkdocs serve`, which shows `draft_docs` as pages."""
    config_file = Path(config.config_file_path)
    options = options_from_mapping(dict(block), config_file.name, lines_of(config_file))
    check_rule_names(options.rules, source=config_file.name)
    # The site does not use them, but a typo there should fail this build, not the next
    # `groundwiki serve`.
    check_blocks(block, config_file)
    drafts = None if previews_drafts else config.draft_docs
    core = build_config(
        config_file.parent,
        config.docs_dir,
        options,
        config_file,
        config.use_directory_urls,
        _pattern_texts(config.exclude_docs),
        _pattern_texts(drafts),
    )
    return Settings(options, core, core.root / index_dir(block) / "build")


def _pattern_texts(spec: Any) -> tuple[str, ...]:
    """MkDocs' parsed gitignore patterns (`exclude_docs`, `draft_docs`); the core keeps their
    text."""
    return tuple(str(p.pattern) for p in spec.patterns) if spec is not None else ()
