"""Where the wiki lives and how it is checked, read from the `groundwiki` block of mkdocs.yml.

The CLI, the MkDocs plugin and the sidecar all build a `Config` from the same block, so they
agree on paths, lint rules and the pointer cap without a second configuration file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from groundwiki.core.config.exclusions import is_draft, is_excluded
from groundwiki.core.config.junk_rules import DEFAULT_JUNK_RULES, JunkRules
from groundwiki.core.config.settings_spec import (
    Block,
    Choice,
    ConfigError,
    Custom,
    Flag,
    Integer,
    Number,
    Text,
    parse,
    setting,
    unknown_setting,
)
from groundwiki.core.config.site_options import SiteOptions

CONFIG_FILENAMES = ("mkdocs.yml", "mkdocs.yaml")
SEVERITIES = ("error", "warning", "info")
RULE_SETTINGS = (*SEVERITIES, "off")
# What a page without a summary gets: its body's first sentence and an info finding (`derive`),
# an error and no summary (`require`, for wikis that write one on every page), or neither.
MISSING_SUMMARY = ("derive", "require", "ignore")
# Where a page without `title:` gets its title: its file name, as Obsidian and Quartz title a
# note (a `# ` heading on the body's first line that spells the file name, `# Getting started`
# in getting-started.md, is the same title written better, and kept), or its first `# `
# heading, wherever it is.
TITLE_FROM = ("file_name", "heading")
_MISSING_SUMMARY_RULE = {"require": "error", "ignore": "off"}


class RuleSettings(dict[str, str]):
    """Rule settings as `{name: severity or off}` that remember where each is written. Whether a
    rule exists is lint's to check (the config does not know the rules), and lint's message
    names the rule's line in mkdocs.yml through `where`."""

    def __init__(self, settings: Mapping[str, str] | None = None, at: Block | None = None) -> None:
        super().__init__(settings or {})
        self.at = at

    def where(self, name: str, source: str = "mkdocs.yml") -> str:
        """`mkdocs.yml:12` for a rule written on line 12; `source` when nothing says where."""
        return self.at.where(name) if self.at else source


def _rule_settings(rules: Any, name: str, at: Block) -> RuleSettings:
    # Each rule is a key inside `rules:`, on its own line (or `rules:`'s, for a flow mapping).
    lines = at.line_of.inside(name) if isinstance(at.line_of, SettingLines) else None
    return validate_rule_settings(rules, Block(at.source, "lint rule", lines), at.where(name))


@dataclass(frozen=True)
class CompilerOptions:
    """The options the compiler core reads: where the wiki's parts are, lint, the pointer cap."""

    raw_sources: str = setting(
        Text("a path string", empty=True),
        "the folder of raw sources that pages cite, from the wiki root",
        default="raw-sources",
        blank_is_default=True,
    )
    lock: str = setting(
        Text("a path string", empty=True),
        "the lock file: the hash of every cited passage (groundwiki lock writes it)",
        default="wiki.lock",
        blank_is_default=True,
    )
    max_pointers: int = setting(
        Integer(1),
        "the most source pointers a page lists in pages.json and search",
        default=5,
        blank_is_default=True,
    )
    rules: Mapping[str, str] = setting(
        Custom(_rule_settings, "{rule name: error | warning | info | off}"),
        "lint rule severities, overriding the defaults (groundwiki rules lists them)",
        factory=dict,
        blank_is_default=True,
    )
    baseline: str = setting(
        Text("a path string", empty=True),
        "the lint findings accepted so far (groundwiki lint --write-baseline)",
        default="lint-baseline.json",
        blank_is_default=True,
    )
    page_template: str = setting(
        Text("a path string", empty=True),
        "the template `groundwiki new` writes pages from, from the wiki root (groundwiki's own "
        "when the file does not exist)",
        default="templates/page.md",
        blank_is_default=True,
    )
    strict: bool = setting(
        Flag(),
        "lint warnings fail the build too, not only errors",
        default=False,
        blank_is_default=True,
    )
    redirects_from_git: bool = setting(
        Flag(),
        "pages renamed in git history get redirects from their former paths, and lint asks for "
        "the former name as an alias (missing-rename-alias)",
        default=False,
        blank_is_default=True,
    )
    missing_summary: str = setting(
        Choice(MISSING_SUMMARY),
        "a page without a summary: derive its first sentence (an info finding), "
        "require one (an error), or ignore it",
        default="derive",
        blank_is_default=True,
    )
    dedupe_sources: bool = setting(
        Flag(),
        "a raw source whose text is another's (a copy under a second name) is searched as that "
        "one: its chunks are neither embedded nor ranked twice; both paths stay citable",
        default=True,
        blank_is_default=True,
    )
    skip_junk_chunks: bool = setting(
        Flag(),
        "raw-source chunks that are binary data, encoded blobs (base64, hex) or near-empty are "
        "cut but neither embedded nor ranked (an info finding per source says which)",
        default=True,
        blank_is_default=True,
    )
    junk_entropy_above: float = setting(
        Number(0, 32, "bits per character"),
        "a chunk above this entropy that is not mostly letters is binary data",
        default=DEFAULT_JUNK_RULES.entropy_above,
        blank_is_default=True,
    )
    junk_entropy_below: float = setting(
        Number(0, 32, "bits per character"),
        "a chunk below this entropy with fewer than junk_words_below words is near-empty",
        default=DEFAULT_JUNK_RULES.entropy_below,
        blank_is_default=True,
    )
    junk_words_below: int = setting(
        Integer(0),
        "the words under which a chunk below junk_entropy_below is near-empty",
        default=DEFAULT_JUNK_RULES.words_below,
        blank_is_default=True,
    )
    title_from: str = setting(
        Choice(TITLE_FROM),
        "a page without a frontmatter title: file_name titles it by its file name (a `# ` heading "
        "on the body's first line that spells that name, capitals and punctuation aside, is "
        "kept as written); heading titles it by its first `# ` heading, wherever it is",
        default="file_name",
        blank_is_default=True,
    )


@dataclass(frozen=True)
class Options(SiteOptions, CompilerOptions):
    """The `groundwiki` block of mkdocs.yml but its `sidecar:` mapping, declared once: the
    compiler's options, then what the site shows (listed in that order: fields follow the bases
    from the last). The CLI, the plugin and the sidecar parse the same block, so a bad value
    stops each of them with the same message."""


# Every key the block may hold: `sidecar:` is a mapping the sidecar declares (sidecar/settings.py).
OPTION_NAMES = (*(f.name for f in fields(Options)), "sidecar")


@dataclass(frozen=True)
class Config:
    """The options as the compiler uses them: paths resolved, the summary rule folded into
    `rules`. Built by `build_config` from `Options`, whose declaration holds the defaults."""

    root: Path
    docs_dir: Path
    raw_dir: Path
    lock_path: Path
    baseline_path: Path
    max_pointers: int
    rules: Mapping[str, str]
    strict: bool
    missing_summary: str  # one of MISSING_SUMMARY
    page_template: Path  # for `groundwiki new`; groundwiki's own when the file does not exist
    redirects_from_git: bool
    title_from: str  # one of TITLE_FROM
    dedupe_sources: bool  # a copy of another source is indexed as that one
    config_file: Path | None = None
    use_directory_urls: bool = True  # MkDocs' setting, so page URLs match the built site
    # The most lines a raw-source page shows (lint's large-source); None when no such pages
    # are built.
    source_page_cap: int | None = None
    # mkdocs.yml's `exclude_docs`, a gitignore pattern per line: files of the docs folder that
    # are no pages (core/config/exclusions.py).
    exclude_docs: tuple[str, ...] = ()
    # mkdocs.yml's `draft_docs`: left out like `exclude_docs`, but empty under `mkdocs serve`,
    # which previews drafts.
    draft_docs: tuple[str, ...] = ()
    # Which raw-source chunks are junk, not indexed (the skip_junk_chunks options).
    junk_rules: JunkRules = DEFAULT_JUNK_RULES

    def left_out(self, relative: str) -> bool:
        """Whether the file at `relative` (from the docs folder) is no page: excluded or a
        draft (core/config/exclusions.py)."""
        return is_excluded(self.exclude_docs, relative) or is_draft(self.draft_docs, relative)

    @property
    def reading(self) -> str:
        """The options a page's parse depends on besides its file: pages parsed under other
        values (a cache kept across runs) are read again."""
        return f"title_from={self.title_from} missing_summary={self.missing_summary}"

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


LineOf = Callable[[str], int | None]


@dataclass(frozen=True)
class SettingLines:
    """Where each setting of one block of a mkdocs.yml is written: a `LineOf` that can also
    point inside a setting (a rule under `rules:`) and at the block's own key (`sidecar:`).
    A dataclass, not a closure, so a `Config` that carries one still pickles for the workers."""

    path: Path
    within: tuple[str, ...] = ()

    def __call__(self, name: str) -> int | None:
        return setting_line(self.path, *self.within, name)

    def inside(self, name: str) -> SettingLines:
        return SettingLines(self.path, (*self.within, name))

    def outside(self) -> SettingLines:
        """The lines of the block around this one: where `sidecar:` itself is written."""
        return SettingLines(self.path, self.within[:-1])


def setting_line(path: Path, *keys: str) -> int | None:
    """The 1-based line of a key in the `groundwiki` plugin block of a mkdocs.yml (`"sidecar",
    "port"` for a sidecar setting); None when it cannot be found. Read again only to point an
    error at its line."""
    try:
        node: yaml.Node | None = yaml.compose(path.read_text(encoding="utf-8"), _TolerantLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    plugins = _value(node, "plugins")
    entries = plugins.value if isinstance(plugins, yaml.SequenceNode) else [plugins]
    block = None
    for entry in entries:
        block = _value(entry, "groundwiki")
        if block is not None:
            break
    line = None
    for key in keys:
        line = _line(block, key)
        block = _value(block, key)
    return line


def _pair(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if isinstance(node, yaml.MappingNode):
        for name, value in node.value:
            if isinstance(name, yaml.ScalarNode) and name.value == key:
                return name, value
    return None


def _value(node: yaml.Node | None, key: str) -> yaml.Node | None:
    pair = _pair(node, key)
    return pair[1] if pair else None


def _line(node: yaml.Node | None, key: str) -> int | None:
    pair = _pair(node, key)
    return pair[0].start_mark.line + 1 if pair else None


def lines_of(path: Path, *within: str) -> SettingLines:
    """Where each setting of a block (the core's, or `"sidecar"`'s) is written in `path`."""
    return SettingLines(path, within)


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


def options_from_mapping(
    raw: Mapping[str, Any], source: str = "mkdocs.yml", line_of: LineOf | None = None
) -> Options:
    """Validate the block's options; `sidecar:` is the sidecar's to check, and an unknown key is
    left to the caller (MkDocs warns about it, see `unknown_option`)."""
    return parse(Options, raw, _block(source, line_of), others=True)


def unknown_option(name: str, source: str = "mkdocs.yml", line_of: LineOf | None = None) -> str:
    """What to say of a key in the block that nothing declares: its line and the option a typo
    meant. MkDocs only warns about such a key, so this is a warning's text, not an error."""
    return str(unknown_setting(name, OPTION_NAMES, _block(source, line_of)))


def _block(source: str, line_of: LineOf | None) -> Block:
    return Block(source, "groundwiki option", line_of)


def validate_rule_settings(rules: Any, at: Block, source: str) -> RuleSettings:
    """Rule settings as `{name: severity or off}`, each rule's line found through `at`;
    `source` says where `rules:` is. Whether the names exist is lint's to check."""
    if not isinstance(rules, Mapping):
        raise ConfigError(f"{source}: groundwiki option 'rules' must map rule names to a severity")
    settings = RuleSettings(at=at)
    for name, given in rules.items():
        # YAML reads a bare `off` as False.
        value = "off" if given is False else str(given).lower()
        if value not in RULE_SETTINGS:
            raise ConfigError(
                f"{at.where(str(name))}: rule '{name}' is set to {given!r}; "
                f"use one of {', '.join(RULE_SETTINGS)}"
            )
        settings[str(name)] = value
    return settings


def build_config(
    root: Path,
    docs_dir: str,
    options: Options,
    config_file: Path | None,
    use_directory_urls: bool = True,
    exclude_docs: tuple[str, ...] = (),
    draft_docs: tuple[str, ...] = (),
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
        exclude_docs=exclude_docs,
        draft_docs=draft_docs,
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
        page_template=root / options.page_template,
        redirects_from_git=options.redirects_from_git,
        source_page_cap=options.source_page_lines if options.raw_source_pages else None,
        title_from=options.title_from,
        dedupe_sources=options.dedupe_sources,
        junk_rules=JunkRules(
            enabled=options.skip_junk_chunks,
            entropy_above=options.junk_entropy_above,
            entropy_below=options.junk_entropy_below,
            words_below=options.junk_words_below,
        ),
    )


def _with_summary_rule(options: Options) -> RuleSettings:
    """The rule settings, with the severity that `missing_summary` gives the missing-summary
    rule (info, its default, when derived); a setting of the rule under `rules` still wins."""
    given = options.rules
    rules = RuleSettings(given, given.at if isinstance(given, RuleSettings) else None)
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
    options = options_from_mapping(plugin_block(data), path.name, lines_of(path))
    docs_dir = str(data.get("docs_dir", "docs"))
    directory_urls = bool(data.get("use_directory_urls", True))
    return build_config(
        path.parent,
        docs_dir,
        options,
        path,
        directory_urls,
        _patterns(data.get("exclude_docs")),
        _patterns(data.get("draft_docs")),
    )


def _patterns(written: Any) -> tuple[str, ...]:
    """A gitignore-style setting of mkdocs.yml (`exclude_docs`, `draft_docs`): one per line."""
    return tuple(written.splitlines()) if isinstance(written, str) else ()
