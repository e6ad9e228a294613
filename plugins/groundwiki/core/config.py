"""Where the wiki lives and how it is checked, read from the `groundwiki` block of mkdocs.yml.

The CLI, the MkDocs plugin and the sidecar all build a `Config` from the same block, so they
agree on paths, lint rules and the pointer cap without a second configuration file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

CONFIG_FILENAMES = ("mkdocs.yml", "mkdocs.yaml")
SEVERITIES = ("error", "warning", "info")
RULE_SETTINGS = (*SEVERITIES, "off")
# What a page without a summary gets: its body's first sentence and an info finding (`derive`),
# an error and no summary (`require`, for wikis that write one on every page), or neither.
MISSING_SUMMARY = ("derive", "require", "ignore")
_MISSING_SUMMARY_RULE = {"require": "error", "ignore": "off"}


class ConfigError(Exception):
    """A configuration the user wrote that groundwiki cannot use; the message says how to fix it."""


@dataclass(frozen=True)
class Options:
    """The `groundwiki` plugin options that the compiler core understands, with their defaults."""

    raw_sources: str = "raw-sources"
    lock: str = "wiki.lock"
    max_pointers: int = 5
    rules: Mapping[str, str] = field(default_factory=dict)
    baseline: str = "lint-baseline.json"
    strict: bool = False
    missing_summary: str = "derive"


@dataclass(frozen=True)
class Config:
    root: Path
    docs_dir: Path
    raw_dir: Path
    lock_path: Path
    baseline_path: Path
    max_pointers: int = 5
    rules: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    config_file: Path | None = None
    use_directory_urls: bool = True  # MkDocs' setting, so page URLs match the built site
    missing_summary: str = "derive"  # one of MISSING_SUMMARY

    @cached_property
    def raw_prefix(self) -> str:
        """How citations spell the raw-sources folder: its path from the wiki root."""
        return self.rel(self.raw_dir)

    def rel(self, path: Path) -> str:
        """A path as users see it in messages: relative to the wiki root, with forward slashes."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


class _TolerantLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without executing its tags (`!ENV`, `!!python/name:` in material configs)."""


def _ignore_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_TolerantLoader.add_multi_constructor("!", _ignore_tag)
_TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", _ignore_tag)


def find_config_file(start: Path | None = None) -> Path:
    folder = (start or Path.cwd()).resolve()
    for name in CONFIG_FILENAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no mkdocs.yml in {folder}: run groundwiki from the wiki's root, or pass -f path/to/mkdocs.yml"
    )


def plugin_block(mkdocs_config: Mapping[str, Any]) -> dict[str, Any]:
    """The options given to `groundwiki` under `plugins:` (a list of names/mappings, or a mapping)."""
    plugins = mkdocs_config.get("plugins") or []
    entries: list[Any] = list(plugins.items()) if isinstance(plugins, Mapping) else list(plugins)
    for entry in entries:
        if isinstance(entry, tuple):
            name, options = entry
        elif isinstance(entry, Mapping) and len(entry) == 1:
            name, options = next(iter(entry.items()))
        else:
            name, options = entry, None
        if name == "groundwiki":
            return dict(options or {})
    return {}


def options_from_mapping(raw: Mapping[str, Any], source: str = "mkdocs.yml") -> Options:
    """Validate the core's options; unknown keys belong to other layers (plugin, sidecar)."""
    defaults = Options()
    values: dict[str, Any] = {}
    for name, kind in (("raw_sources", str), ("lock", str), ("baseline", str)):
        if name in raw and raw[name] is not None:
            if not isinstance(raw[name], kind):
                raise ConfigError(f"{source}: groundwiki option '{name}' must be a path string")
            values[name] = raw[name]
    if "max_pointers" in raw:
        value = raw["max_pointers"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(
                f"{source}: groundwiki option 'max_pointers' must be a positive integer, got {value!r}"
            )
        values["max_pointers"] = value
    if "strict" in raw:
        if not isinstance(raw["strict"], bool):
            raise ConfigError(f"{source}: groundwiki option 'strict' must be true or false")
        values["strict"] = raw["strict"]
    if "rules" in raw and raw["rules"] is not None:
        values["rules"] = validate_rule_settings(raw["rules"], source)
    if "missing_summary" in raw and raw["missing_summary"] is not None:
        value = raw["missing_summary"]
        if value not in MISSING_SUMMARY:
            raise ConfigError(
                f"{source}: groundwiki option 'missing_summary' is {value!r}; use "
                f"{', '.join(MISSING_SUMMARY[:-1])} or {MISSING_SUMMARY[-1]}"
            )
        values["missing_summary"] = value
    return Options(**{**defaults.__dict__, **values})


def validate_rule_settings(rules: Any, source: str = "mkdocs.yml") -> dict[str, str]:
    """Rule settings as `{name: severity or off}`; whether the names exist is lint's to check."""
    if not isinstance(rules, Mapping):
        raise ConfigError(f"{source}: groundwiki option 'rules' must map rule names to a severity")
    settings: dict[str, str] = {}
    for name, setting in rules.items():
        # YAML reads a bare `off` as False.
        value = "off" if setting is False else str(setting).lower()
        if value not in RULE_SETTINGS:
            raise ConfigError(
                f"{source}: rule '{name}' is set to {setting!r}; use one of {', '.join(RULE_SETTINGS)}"
            )
        settings[str(name)] = value
    return settings


def build_config(
    root: Path,
    docs_dir: str,
    options: Options,
    config_file: Path | None,
    use_directory_urls: bool = True,
) -> Config:
    root = root.resolve()
    pages = (root / docs_dir).resolve()
    if not pages.is_dir():
        where = config_file.name if config_file else "mkdocs.yml"
        raise ConfigError(
            f"{where}: docs_dir '{docs_dir}' is not a folder ({pages}); set docs_dir to the folder "
            "that holds the wiki's pages"
        )
    return Config(
        use_directory_urls=use_directory_urls,
        root=root,
        docs_dir=pages,
        raw_dir=(root / options.raw_sources).resolve(),
        lock_path=root / options.lock,
        baseline_path=root / options.baseline,
        max_pointers=options.max_pointers,
        rules=_with_summary_rule(options),
        strict=options.strict,
        config_file=config_file,
        missing_summary=options.missing_summary,
    )


def _with_summary_rule(options: Options) -> dict[str, str]:
    """The rule settings, with the severity that `missing_summary` gives the missing-summary
    rule (info, its default, when derived); a setting of the rule under `rules` still wins."""
    rules = dict(options.rules)
    if options.missing_summary != "derive":
        rules.setdefault("missing-summary", _MISSING_SUMMARY_RULE[options.missing_summary])
    return rules


def read_config_file(path: Path) -> Mapping[str, Any]:
    """mkdocs.yml as data, its tags left unexecuted."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file; pass -f path/to/mkdocs.yml")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_TolerantLoader) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: expected a mapping of MkDocs settings at the top level")
    return data


def load_config(config_file: Path | None = None) -> Config:
    """Read mkdocs.yml (the one in the current directory unless given) into a `Config`."""
    path = (config_file or find_config_file()).resolve()
    data = read_config_file(path)
    options = options_from_mapping(plugin_block(data), source=path.name)
    docs_dir = str(data.get("docs_dir", "docs"))
    directory_urls = bool(data.get("use_directory_urls", True))
    return build_config(path.parent, docs_dir, options, path, directory_urls)
