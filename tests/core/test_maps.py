"""The maps of the code in README.md and on the handbook's architecture page are the code's:
every package folder, every module, every test folder and every lint rule, none missing and none
that is gone. Each check is also shown to catch a deliberate miss, made on a copy of the text.

Which modules a map must name: every `.py` file of both packages (`plugins/groundwiki/`,
`sidecar/groundwiki_sidecar/`), `__main__.py` included. A folder's `__init__.py` is mapped as
the folder itself: its docstring is the folder's line, and in the folders where it holds code
(`cli/`, `lanes/`) that line is what a newcomer needs first.

`.venv/bin/python tests/helpers/maps.py` rewrites the maps from the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import maps

README = maps.README.read_text(encoding="utf-8")
ARCHITECTURE = maps.ARCHITECTURE.read_text(encoding="utf-8")
FIX = "run .venv/bin/python tests/helpers/maps.py"


# The deliberate misses are made on the texts with their maps drawn from the code as it is now,
# so that each shows its check and nothing else.


@pytest.fixture(scope="module")
def readme() -> str:
    return maps.refreshed_readme(README)


@pytest.fixture(scope="module")
def architecture() -> str:
    return maps.refreshed_architecture(ARCHITECTURE)


def without_line(text: str, containing: str) -> str:
    """The text without the first line that contains `containing`."""
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if containing in line)
    return "".join(lines[:index] + lines[index + 1 :])


def with_line_after(text: str, containing: str, new: str) -> str:
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if containing in line)
    return "".join([*lines[: index + 1], new + "\n", *lines[index + 1 :]])


def test_every_module_and_folder_has_the_docstring_its_map_line_comes_from():
    missing = maps.undocumented()
    assert not missing, "no docstring: " + ", ".join(missing)


def test_the_layer_order_places_every_folder():
    assert maps.ordered_folders()


def test_the_layer_order_check_catches_a_folder_it_does_not_place(monkeypatch):
    real = maps.folders()
    monkeypatch.setattr(maps, "folders", lambda: [*real, "plugins/groundwiki/core/newfolder/"])
    with pytest.raises(maps.MapError, match="place plugins/groundwiki/core/newfolder/"):
        maps.ordered_folders()


def test_the_architecture_page_maps_every_folder_and_module():
    problems = maps.module_map_problems(ARCHITECTURE)
    assert not problems, "\n".join([*problems, FIX])


def test_the_module_map_check_catches_a_missing_and_a_stale_module(architecture: str):
    missing = without_line(architecture, "| `tokens.py` |")
    assert maps.module_map_problems(missing) == [
        "the architecture page's module map lacks plugins/groundwiki/core/sources/tokens.py"
    ]
    stale = with_line_after(architecture, "| `tokens.py` |", "| `gone.py` | a module moved away |")
    assert maps.module_map_problems(stale) == [
        "the architecture page's module map names plugins/groundwiki/core/sources/gone.py, "
        "which is no folder or module of the code"
    ]
    # a module under the wrong folder is both: missing where it is, named where it is not
    moved = without_line(architecture, "| `tokens.py` |")
    moved = with_line_after(moved, "| `resolver.py` |", "| `tokens.py` | word pieces |")
    assert len(maps.module_map_problems(moved)) == 2


def test_the_readme_maps_every_folder_bottom_to_top():
    problems = maps.folder_map_problems(README)
    assert not problems, "\n".join([*problems, FIX])


def test_the_folder_map_check_catches_a_missing_a_stale_and_a_misplaced_folder(readme: str):
    row = "| `plugins/groundwiki/core/links/` |"
    assert maps.folder_map_problems(without_line(readme, row)) == [
        "README.md's folder map lacks plugins/groundwiki/core/links/"
    ]
    stale = with_line_after(readme, row, "| `plugins/groundwiki/sidecar/` | the old sidecar |")
    assert maps.folder_map_problems(stale) == [
        "README.md's folder map names plugins/groundwiki/sidecar/, which is no package folder "
        "of the code"
    ]
    line = next(line for line in readme.splitlines() if line.startswith(row))
    misplaced = with_line_after(without_line(readme, row), "| `plugins/groundwiki/cli/` |", line)
    assert maps.folder_map_problems(misplaced) == [
        "README.md's folder map is not in the layer order, bottom to top"
    ]


def test_the_readme_maps_every_test_folder_and_its_marker():
    problems = maps.tests_map_problems(README)
    assert not problems, "\n".join([*problems, FIX])


def test_the_test_map_check_catches_a_missing_folder_and_a_wrong_marker(readme: str):
    assert maps.tests_map_problems(without_line(readme, "| `tests/site/` |")) == [
        "README.md's test map lacks tests/site/"
    ]
    wrong = readme.replace("| `tests/site/` | `site` |", "| `tests/site/` | `slow` |")
    assert maps.tests_map_problems(wrong) == [
        "README.md's test map gives tests/site/ the marker slow, which it does not apply"
    ]


def test_the_readmes_rule_list_is_what_groundwiki_rules_prints():
    problems = maps.rules_problems(README)
    assert not problems, "\n".join([*problems, FIX])


def test_the_rule_list_check_catches_a_missing_and_an_unknown_rule(readme: str):
    assert maps.rules_problems(readme.replace("`scope-leak`,", "")) == [
        "README.md's rule list lacks scope-leak"
    ]
    assert maps.rules_problems(readme.replace("`deep-list`,", "`deep-list`, `no-such-rule`,")) == [
        "README.md's rule list names no-such-rule, which is no lint rule of the code"
    ]


def test_the_readmes_top_level_paths_exist():
    problems = maps.top_level_problems(README)
    assert not problems, "\n".join(problems)
    gone = with_line_after(README, "| `sidecar/` |", "| `plugins/groundwiki/cli.py` | gone |")
    assert maps.top_level_problems(gone) == [
        "README.md's layout names plugins/groundwiki/cli.py, which does not exist"
    ]


@pytest.mark.parametrize(
    "doc",
    [maps.README, *sorted((maps.ROOT / "wiki").rglob("*.md"))],
    ids=lambda doc: doc.relative_to(maps.ROOT).as_posix(),
)
def test_no_text_names_a_source_path_that_is_gone(doc: Path):
    stale = maps.stale_paths(doc.read_text(encoding="utf-8"))
    assert not stale, "gone: " + ", ".join(stale)


def test_the_path_check_catches_paths_that_are_gone():
    text = (
        "`plugins/groundwiki/cli.py`, `tests/test_layers.py`, `core/extract.py`, `sidecar/lanes/`"
        ", `groundwiki.sidecar.app`, `groundwiki_sidecar.sync`; but not `core/sources/extract.py`,"
        " `api/catalog.py`, `tests/core/`, `site/`, `wiki/`, `groundwiki.core.read`,"
        " `groundwiki_sidecar.api.app`, `groundwiki`"
    )
    assert maps.stale_paths(text) == [
        "core/extract.py",
        "groundwiki.sidecar.app",
        "groundwiki_sidecar.sync",
        "plugins/groundwiki/cli.py",
        "sidecar/lanes/",
        "tests/test_layers.py",
    ]
