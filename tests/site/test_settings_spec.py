"""Settings are declared once (core/settings_spec.py): one validator, one shape of message
(file, line, setting, fix), used by the groundwiki command, the sidecar and the MkDocs plugin."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.settings_spec import Block, Number, Weights, parse, setting
from groundwiki.core.config.wiki_config import ConfigError, Options, load_config
from groundwiki_sidecar import lanes
from groundwiki_sidecar.base.settings import SidecarSettings, load_sidecar, settings_from_mapping
from helpers.commands import groundwiki, mkdocs
from helpers.wikis import page, write_wiki

BIN = Path(sys.executable).parent


def mkdocs_yml(tmp_path: Path, block: str) -> Path:
    """A wiki whose mkdocs.yml holds `block` under the groundwiki plugin (indented 6)."""
    config = write_wiki(tmp_path, {"index.md": page()})
    config.write_text(
        "site_name: fixture\ndocs_dir: wiki\nplugins:\n  - search\n  - groundwiki:\n" + block
    )
    return config


def mkdocs_build(config: Path, **env: str) -> subprocess.CompletedProcess[str]:
    args = ["build", "-f", str(config), "-d", str(config.parent / "site")]
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    if env:  # a setting a process reads once (the tokenizer's path): a new interpreter reads it
        return subprocess.run(
            [str(BIN / "mkdocs"), *args], capture_output=True, text=True, timeout=300,
            env=environment,
        )  # fmt: skip
    return mkdocs(*args, env=environment)


def test_a_typo_in_the_sidecar_block_fails_the_site_build(tmp_path):
    config = mkdocs_yml(
        tmp_path, "      sidecar:\n        port: 8800\n        wieghts: {token: 0}\n"
    )
    result = mkdocs_build(config)
    assert result.returncode != 0
    assert "mkdocs.yml:8: unknown sidecar setting 'wieghts'" in result.stderr
    assert "did you mean 'weights'?" in result.stderr and "Traceback" not in result.stderr


def test_a_core_option_error_names_its_line(tmp_path):
    config = mkdocs_yml(tmp_path, "      raw_sources: evidence\n      max_pointers: 0\n")
    with pytest.raises(
        ConfigError, match="^" + re.escape("mkdocs.yml:7: groundwiki option 'max_pointers'")
    ):
        load_config(config)


def test_a_sidecar_setting_error_names_its_line(tmp_path):
    config = mkdocs_yml(tmp_path, "      sidecar:\n        host: 0.0.0.0\n        port: http\n")
    message = "mkdocs.yml:8: sidecar setting 'port' must be an integer from 1 to 65535, got 'http'"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        load_sidecar(config)


def test_an_unknown_setting_suggests_the_one_meant():
    with pytest.raises(ConfigError, match="unknown sidecar setting 'embed_chunk'; did you mean"):
        settings_from_mapping({"embed_chunk": False})


def test_the_core_leaves_other_layers_keys_alone():
    assert parse(Options, {"sidecar": {}, "graph": False}, Block("x", "option"), others=True)


def test_a_blank_optional_setting_keeps_its_default():
    settings = settings_from_mapping({"chroma_url": None, "token": None})
    assert (settings.chroma_url, settings.token) == (None, None)


def test_a_boolean_is_no_integer():
    with pytest.raises(ConfigError, match="'rrf_k' must be an integer from 1 to 10000, got True"):
        settings_from_mapping({"rrf_k": True})


def test_the_default_weights_are_the_lane_registrys():
    assert dict(SidecarSettings().weights) == lanes.default_weights()
    assert set(SidecarSettings().weights) == set(lanes.names())


def test_a_weight_for_a_lane_not_in_the_registry_names_the_registrys_lanes():
    with pytest.raises(
        ConfigError, match=f"unknown lane 'vector'; lanes: {', '.join(lanes.names())}"
    ):
        settings_from_mapping({"weights": {"vector": 1}})


def test_a_new_lane_is_a_weight_setting_without_touching_the_settings():
    registry = {"lexical": 1.0}

    @dataclasses.dataclass(frozen=True)
    class Toy:
        weights: Mapping[str, float] = setting(Weights(lambda: registry), "w", factory=dict)

    registry["toy"] = 0.5  # a lane registered after the settings were declared
    assert parse(Toy, {"weights": {"toy": 2}}, Block("x", "toy setting")).weights == {
        "lexical": 1.0,
        "toy": 2.0,
    }


@pytest.mark.parametrize(
    "where",
    [
        "groundwiki.core.config.wiki_config:ConfigError",
        "groundwiki.core.lint.baseline:BaselineError",
        "groundwiki.core.sources.tokens:TokenizerUnavailable",
        "groundwiki_sidecar.base.settings:IndexUnusable",
        "groundwiki_sidecar.index.state_store:StoreDamaged",
        "groundwiki_sidecar.embedding.embedders:EmbedderUnavailable",
        "groundwiki_sidecar.index.chroma_index:VectorStoreUnavailable",
        "groundwiki.cli.sidecar_commands:SidecarNotInstalled",
        "groundwiki_sidecar.evaluation.collection:CollectionError",
    ],
)
def test_every_domain_error_is_a_groundwiki_error(where):
    import importlib

    module, name = where.split(":")
    assert issubclass(getattr(importlib.import_module(module), name), GroundwikiError)


def test_groundwiki_settings_lists_every_setting_with_its_default():
    result = groundwiki("settings")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for declared in (Options(), SidecarSettings()):
        for field in dataclasses.fields(declared):
            assert any(line.startswith(f"  {field.name}: ") for line in lines), field.name
    assert "  port: 8765" in lines and "  max_pointers: 5" in lines
    assert "  weights: {lexical: 1.0, semantic: 0.7, token: 0.5}" in lines


def test_a_missing_tokenizer_stops_the_build_with_one_line(tmp_path):
    pages = {"index.md": page(body="<!-- from: raw-sources/n.md -->\n")}
    config = write_wiki(tmp_path, pages, {"n.md": "Evidence.\n"})
    result = mkdocs_build(config, GROUNDWIKI_TOKENIZER=str(tmp_path / "no-tokenizer.json"))
    assert result.returncode != 0
    assert "groundwiki: cannot read the tokenizer" in result.stderr
    assert "Traceback" not in result.stderr


def test_what_the_site_shows_keeps_its_defaults():
    options = Options()
    shown = ("backlinks", "sources", "graph", "raw_source_pages", "redirects")
    assert all(getattr(options, name) is True for name in shown)
    assert (options.navigation, options.compact_above) == ("auto", 300)


def test_the_mkdocs_options_are_the_declared_ones_with_their_defaults():
    from groundwiki.mkdocs_plugin.plugin_options import GroundwikiConfig

    assert dict(GroundwikiConfig()) == {**dataclasses.asdict(Options()), "sidecar": {}}


def test_groundwiki_settings_lists_what_the_site_shows():
    result = groundwiki("settings")
    lines = result.stdout.splitlines()
    assert "  backlinks: true" in lines and "  compact_above: 300" in lines
    navigation = lines.index("  navigation: auto")
    assert lines[navigation + 2] == "      values: auto | full | compact"


def test_the_groundwiki_command_checks_the_site_options_too(tmp_path):
    config = mkdocs_yml(tmp_path, "      compact_above: -1\n")
    message = "mkdocs.yml:6: groundwiki option 'compact_above' must be an integer >= 0, got -1"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        load_config(config)


def test_a_blank_option_keeps_its_default_in_the_command_as_in_the_build(tmp_path):
    config = load_config(mkdocs_yml(tmp_path, "      max_pointers:\n      strict:\n"))
    assert (config.max_pointers, config.strict) == (5, False)


@pytest.mark.parametrize("weight", [float("nan"), float("inf")])
def test_a_weight_that_is_no_finite_number_is_refused(weight):
    # A nan weight made every fused score nan, and every search a 500 (JSON has no nan).
    with pytest.raises(
        ConfigError, match=re.escape(f"gives lane 'semantic' {weight!r}; use a finite number")
    ):
        settings_from_mapping({"weights": {"semantic": weight}})


def test_a_nan_weight_fails_the_site_build_at_its_line(tmp_path):
    config = mkdocs_yml(tmp_path, "      sidecar:\n        weights: {semantic: .nan}\n")
    result = mkdocs_build(config)
    assert result.returncode != 0
    assert "mkdocs.yml:7: sidecar setting 'weights' gives lane 'semantic' nan" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_number_setting_refuses_what_is_no_finite_number(value):
    @dataclasses.dataclass(frozen=True)
    class Open:
        # No upper bound: the range alone would let infinity through.
        wait: float = setting(Number(0, math.inf, "seconds"), "w", default=1.0)

    with pytest.raises(
        ConfigError, match=re.escape(f"'wait' must be 0 to inf seconds, got {value!r}")
    ):
        parse(Open, {"wait": value}, Block("x", "toy setting"))


def test_a_nan_debounce_names_the_setting_and_its_range():
    with pytest.raises(
        ConfigError, match=re.escape("'debounce_s' must be 0 to 10 seconds, got nan")
    ):
        settings_from_mapping({"debounce_s": float("nan")})


def test_every_unknown_sidecar_setting_is_named_at_the_first_ones_line(tmp_path):
    config = mkdocs_yml(
        tmp_path,
        "      sidecar:\n        port: 8800\n        embed_chunk: false\n"
        "        prot: 1\n        colour: blue\n",
    )
    with pytest.raises(ConfigError) as error:
        load_sidecar(config)
    message = str(error.value)
    assert message.startswith(
        "mkdocs.yml:8: unknown sidecar settings 'embed_chunk' (did you mean 'embed_chunks'?), "
        "'prot' (did you mean 'port'?), 'colour'; known: "
    )


def test_a_sidecar_block_that_is_no_mapping_names_its_line(tmp_path):
    config = mkdocs_yml(tmp_path, "      max_pointers: 3\n      sidecar: 8765\n")
    message = "mkdocs.yml:7: groundwiki option 'sidecar' must be a mapping of settings"
    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        load_sidecar(config)


def test_an_unknown_rule_fails_the_site_build_at_its_line(tmp_path):
    config = mkdocs_yml(
        tmp_path, "      rules:\n        orphan-page: off\n        no-such-rule: error\n"
    )
    result = mkdocs_build(config)
    assert result.returncode != 0
    assert "mkdocs.yml:8: unknown lint rule 'no-such-rule' under 'rules'" in result.stderr
