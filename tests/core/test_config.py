"""Configuration comes from the groundwiki block of mkdocs.yml; bad values fail early and clearly."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields

import pytest
from groundwiki.core.config.wiki_config import Config, ConfigError, Options, load_config
from groundwiki.core.lint.runner import check_rule_names


def write(tmp_path, text):
    for folder in ("docs", "wiki"):
        (tmp_path / folder).mkdir(exist_ok=True)
    path = tmp_path / "mkdocs.yml"
    path.write_text(text)
    return path


def test_defaults(tmp_path):
    config = load_config(write(tmp_path, "site_name: x\nplugins:\n  - groundwiki\n"))
    assert config.docs_dir == tmp_path / "docs"
    assert config.raw_dir == tmp_path / "raw-sources"
    assert config.lock_path == tmp_path / "wiki.lock"
    assert (config.max_pointers, config.strict, dict(config.rules)) == (5, False, {})


def test_options_from_the_plugin_block(tmp_path):
    text = (
        "site_name: x\ndocs_dir: wiki\nplugins:\n  - search\n  - groundwiki:\n"
        "      raw_sources: evidence\n      lock: locks/wiki.lock\n      max_pointers: 3\n"
        "      rules:\n        orphan-page: off\n        drifted-source: ERROR\n"
    )
    config = load_config(write(tmp_path, text))
    assert config.docs_dir == tmp_path / "wiki"
    assert config.raw_dir == tmp_path / "evidence"
    assert config.raw_prefix == "evidence"
    assert config.lock_path == tmp_path / "locks/wiki.lock"
    assert config.max_pointers == 3
    assert dict(config.rules) == {"orphan-page": "off", "drifted-source": "error"}


def test_material_style_tags_do_not_break_reading(tmp_path):
    text = (
        "site_name: x\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "extra:\n  key: !ENV [HOME, x]\nplugins:\n  - groundwiki\n"
    )
    assert load_config(write(tmp_path, text)).max_pointers == 5


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("max_pointers: 0", "positive integer"),
        ("rules: {orphan-page: loud}", "use one of error, warning, info, off"),
        ("strict: maybe", "true or false"),
    ],
)
def test_bad_options_say_what_to_write(tmp_path, block, message):
    path = write(tmp_path, f"site_name: x\nplugins:\n  - groundwiki:\n      {block}\n")
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_a_missing_mkdocs_yml_says_how_to_point_at_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=re.escape("-f path/to/mkdocs.yml")):
        load_config()


def test_an_unknown_rule_name_is_refused_before_linting(tmp_path):
    config = load_config(
        write(
            tmp_path,
            "site_name: x\nplugins:\n  - groundwiki:\n      rules: {no-such-rule: error}\n",
        )
    )
    with pytest.raises(ConfigError, match="unknown lint rule 'no-such-rule'"):
        check_rule_names(config.rules)


def test_a_missing_docs_dir_is_an_error_naming_it(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: x\ndocs_dir: wikis\n")
    with pytest.raises(ConfigError, match="docs_dir 'wikis' is not a folder"):
        load_config(tmp_path / "mkdocs.yml")


def test_use_directory_urls_is_read_for_page_urls(tmp_path):
    config = load_config(write(tmp_path, "site_name: x\nuse_directory_urls: false\n"))
    assert config.use_directory_urls is False


def test_an_unknown_rule_name_names_its_line(tmp_path):
    config = load_config(
        write(
            tmp_path,
            "site_name: x\nplugins:\n  - groundwiki:\n      max_pointers: 3\n      rules:\n"
            "        orphan-page: off\n        no-such-rule: error\n",
        )
    )
    message = "mkdocs.yml:7: unknown lint rule 'no-such-rule' under 'rules'"
    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        check_rule_names(config.rules)


def test_a_bad_rule_severity_names_the_rules_line(tmp_path):
    path = write(
        tmp_path,
        "site_name: x\nplugins:\n  - groundwiki:\n      rules:\n"
        "        orphan-page: off\n        drifted-source: loud\n",
    )
    with pytest.raises(ConfigError, match="^" + re.escape("mkdocs.yml:6: rule 'drifted-source'")):
        load_config(path)


def test_the_configs_defaults_are_the_declared_options(tmp_path):
    # A default lives in the declaration (Options) only: Config has none of its own to drift.
    config_defaults = {
        f.name
        for f in fields(Config)
        if f.default is not MISSING or f.default_factory is not MISSING
    }
    assert not config_defaults & {f.name for f in fields(Options)}
