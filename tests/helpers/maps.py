"""The maps of the code that README.md and the handbook's architecture page show, made from the
code itself, and the checks that keep them equal to it.

- README.md's folder map: every package folder, bottom to top, with its `__init__` docstring
  (what the folder holds and what it may import);
- README.md's test map: every test folder, its marker and its conftest's docstring;
- README.md's rule list: the lint rules `groundwiki rules` prints (the core's `RULES`);
- the architecture page's module map: every folder again, each followed by its modules with the
  first sentence of their docstrings;
- and beside the maps, every source path (`plugins/...`, `core/lint/rules.py`, `tests/core/`)
  and module name (`groundwiki.core.read`) the README and the handbook spell in backticks must
  exist, as must each path of the README's top-level table.

A map is the table under a fixed header line (the `*_HEADER` constants below), or for the rules
the paragraph after `RULES_INTRO`; the rest of each file is prose and is left alone. Rewrite
every map from the code with

    .venv/bin/python tests/helpers/maps.py

`tests/core/test_maps.py` fails when a map and the code disagree.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import sys
import textwrap
import tomllib
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "wiki/design/architecture.md"
PACKAGE_ROOTS = ("plugins/groundwiki", "sidecar/groundwiki_sidecar")

# The layer order, bottom to top, is the one tests/core/test_layers.py enforces: `ORDER` in
# this file, dotted names of folders (and of modules that stand alone, such as `__main__`).
LAYER_ORDER = ROOT / "tests/core/import_layers.py"
# The test folders in the order the README lists them: the fast lane first, then by what the
# tests need. A folder not named here comes last.
TEST_ORDER = ("core", "cli", "site", "sidecar", "browser", "scale")

TOP_HEADER = "| path | what it holds |"
FOLDER_HEADER = "| folder, bottom to top | what it holds, and what it may import |"
TESTS_HEADER = "| test folder | marker | what its tests run |"
MODULE_HEADER = "| module | what it holds |"
RULES_INTRO = "The lint rules, as `groundwiki rules` lists them with their severities:"
WIDTH = 100  # the README's and the wiki's line width, for the rule list

# A path a text names in backticks that must exist: from the repository root (`plugins/...`,
# `tests/core/...`) or from a package root (`core/lint/rules.py`, `api/catalog.py`). Bare names
# (`rules.py`) only mean something in a map's context, and a map is checked as a whole.
SOURCE_PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]*)`")
SOURCE_TOPS = ("plugins", "sidecar", "tests", "bench")
# A module a text names by its import name: `groundwiki.core.read`, `groundwiki_sidecar.api.app`.
MODULE_NAME = re.compile(r"`((?:groundwiki|groundwiki_sidecar)(?:\.\w+)*)`")


class MapError(Exception):
    """The code cannot be mapped as it is: a folder the layer order does not place."""


# The code


def folders() -> list[str]:
    """Every package folder (one holding `__init__.py`), repository-relative, ending in `/`."""
    found = set()
    for top in PACKAGE_ROOTS:
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(init.parent.relative_to(ROOT).as_posix() + "/")
    return sorted(found)


def modules() -> list[str]:
    """Every module of both packages but the `__init__.py` files, repository-relative. A
    folder's `__init__` is mapped as the folder: its docstring is the folder's line."""
    return sorted(
        path.relative_to(ROOT).as_posix()
        for top in PACKAGE_ROOTS
        for path in (ROOT / top).rglob("*.py")
        if path.name != "__init__.py"
    )


def layer_order() -> list[str]:
    """The folders in the order the layering test enforces, bottom to top, as repository paths
    ending in `/`. A module the order names by itself (`__main__`) is mapped in its folder."""
    tree = ast.parse(LAYER_ORDER.read_text(encoding="utf-8"))
    order = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "ORDER" for t in node.targets)
    )
    roots = {Path(top).name: top for top in PACKAGE_ROOTS}
    paths = []
    for name in order:
        package, *rest = name.split(".")
        path = "/".join([roots[package], *rest])
        if not (ROOT / f"{path}.py").exists():  # `__main__` is a module: its folder maps it
            paths.append(f"{path}/")
    return paths


def ordered_folders() -> list[str]:
    """The package folders in layer order; a MapError names any folder the order lacks."""
    order = layer_order()
    actual = set(folders())
    unplaced = sorted(actual - set(order))
    gone = sorted(set(order) - actual)
    if unplaced or gone:
        where = LAYER_ORDER.relative_to(ROOT)
        raise MapError(
            f"ORDER in {where} does not match the folders: "
            + "; ".join(
                [f"place {f}" for f in unplaced] + [f"{f} does not exist any more" for f in gone]
            )
        )
    return order


# A module's docstring: its first statement, after comments and blank lines. Read with a pattern
# rather than a parse of the whole file: the maps read every module, in the fast lane.
DOCSTRING = re.compile(
    r'(?:[ \t]*(?:#[^\n]*)?\n)*(?P<literal>[rR]?("""|\'\'\').*?(?<!\\)\2)', re.DOTALL
)


@functools.cache
def docstring(path: Path) -> str:
    """A module's docstring, cleaned as `ast.get_docstring` cleans it, or '' when it has none."""
    found = DOCSTRING.match(path.read_text(encoding="utf-8"))
    return inspect.cleandoc(ast.literal_eval(found.group("literal"))) if found else ""


def first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def first_sentence(text: str) -> str:
    paragraph = first_paragraph(text)
    return re.split(r"(?<=[.!?])\s+(?=[A-Z`])", paragraph, maxsplit=1)[0]


def testing_folders() -> list[str]:
    """Every test folder: one with a conftest.py that marks its tests."""
    found = [conftest.parent.name for conftest in (ROOT / "tests").glob("*/conftest.py")]
    ranked = sorted(
        found,
        key=lambda name: (TEST_ORDER.index(name) if name in TEST_ORDER else len(TEST_ORDER), name),
    )
    return [f"tests/{name}/" for name in ranked]


def markers() -> set[str]:
    """The markers pyproject.toml declares."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        declared = tomllib.load(file)["tool"]["pytest"]["ini_options"]["markers"]
    return {line.split(":")[0].strip() for line in declared}


def rules() -> list[str]:
    """The lint rules `groundwiki rules` prints, in the order they are declared."""
    from groundwiki.core.lint.rules import RULES

    return list(RULES)


# The maps drawn


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def folder_rows() -> list[str]:
    return [
        f"| `{folder}` | {cell(first_paragraph(docstring(ROOT / folder / '__init__.py')))} |"
        for folder in ordered_folders()
    ]


def module_rows() -> list[str]:
    rows = []
    for folder in ordered_folders():
        init = ROOT / folder / "__init__.py"
        rows.append(f"| **`{folder}`** | {cell(first_paragraph(docstring(init)))} |")
        for path in sorted((ROOT / folder).glob("*.py")):
            if path.name != "__init__.py":
                rows.append(f"| `{path.name}` | {cell(first_sentence(docstring(path)))} |")
    return rows


def tests_rows() -> list[str]:
    rows = []
    for folder in testing_folders():
        name = folder.split("/")[1]
        holds = first_sentence(docstring(ROOT / folder / "conftest.py"))
        rows.append(f"| `{folder}` | `{name}` | {cell(holds)} |")
    return rows


def rules_paragraph() -> str:
    names = ", ".join(f"`{name}`" for name in rules()) + "."
    return textwrap.fill(names, WIDTH, break_on_hyphens=False, break_long_words=False)


# The maps read back


def table(text: str, header: str) -> list[list[str]]:
    """The rows of the table under `header`, as lists of cells; [] when there is none."""
    lines = text.splitlines()
    if header not in lines:
        return []
    rows = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        rows.append([c.strip() for c in cells])
    return rows


def named(first_cell: str) -> str:
    """The path a map's first cell names: `x`, **`x`**."""
    return first_cell.strip("*").strip("`")


def folder_map(text: str) -> list[str]:
    return [named(row[0]) for row in table(text, FOLDER_HEADER)]


def tests_map(text: str) -> list[tuple[str, str]]:
    return [(named(row[0]), named(row[1])) for row in table(text, TESTS_HEADER)]


def module_map(text: str) -> list[str]:
    """Every folder and module the module map names, repository-relative: a folder row (a path
    ending in `/`) is the folder of the module rows under it."""
    entries: list[str] = []
    folder = ""
    for row in table(text, MODULE_HEADER):
        name = named(row[0])
        if name.endswith("/"):
            folder = name
            entries.append(name)
        else:
            entries.append(folder + name)
    return entries


def rules_list(text: str) -> list[str]:
    """The rule names in the paragraph after RULES_INTRO."""
    _, found, after = text.partition(RULES_INTRO)
    if not found:
        return []
    paragraph = after.lstrip("\n").split("\n\n")[0]
    return re.findall(r"`([a-z]+(?:-[a-z]+)+)`", paragraph)


# The checks


def differences(
    mapped: Iterable[str], actual: Iterable[str], where: str, what: str = "module"
) -> list[str]:
    """What a map lacks, what it names that does not exist, and what it names twice."""
    mapped, actual = list(mapped), set(actual)
    problems = [f"{where} lacks {name}" for name in sorted(actual - set(mapped))]
    problems += [
        f"{where} names {name}, which is no {what} of the code"
        for name in sorted(set(mapped) - actual)
    ]
    problems += [
        f"{where} names {name} twice" for name in sorted(set(mapped)) if mapped.count(name) > 1
    ]
    return problems


def folder_map_problems(readme: str) -> list[str]:
    """The README's folder map against the package folders, in layer order."""
    mapped = folder_map(readme)
    problems = differences(mapped, folders(), "README.md's folder map", "package folder")
    if not problems and mapped != ordered_folders():
        problems.append("README.md's folder map is not in the layer order, bottom to top")
    return problems


def tests_map_problems(readme: str) -> list[str]:
    """The README's test map against the test folders and the markers pyproject.toml declares."""
    mapped = tests_map(readme)
    where = "README.md's test map"
    problems = differences([f for f, _ in mapped], testing_folders(), where, "test folder")
    for folder, marker in mapped:
        if marker != folder.split("/")[1] or marker not in markers():
            problems.append(f"{where} gives {folder} the marker {marker}, which it does not apply")
    return problems


def rules_problems(readme: str) -> list[str]:
    """The README's rule list against the rules `groundwiki rules` prints."""
    return differences(rules_list(readme), rules(), "README.md's rule list", "lint rule")


def module_map_problems(architecture: str) -> list[str]:
    """The architecture page's module map against every folder and module of both packages."""
    return differences(
        module_map(architecture),
        folders() + modules(),
        "the architecture page's module map",
        "folder or module",
    )


def top_level_problems(readme: str) -> list[str]:
    """Paths the README's top-level map names that do not exist."""
    return [
        f"README.md's layout names {named(row[0])}, which does not exist"
        for row in table(readme, TOP_HEADER)
        if not (ROOT / named(row[0])).exists()
    ]


def undocumented() -> list[str]:
    """Modules and folders without a docstring, which the maps draw from."""
    paths = modules() + [folder + "__init__.py" for folder in folders()]
    return [path for path in paths if not docstring(ROOT / path)]


def stale_paths(text: str) -> list[str]:
    """Source paths a text names in backticks that exist neither from the repository root nor
    from a package root, and modules it names by import name that do not exist."""
    bases = [ROOT, *(ROOT / top for top in PACKAGE_ROOTS)]
    stale = []
    for path in SOURCE_PATH.findall(text):
        top = path.split("/")[0]
        package_relative = path.endswith(".py") or any((base / top).is_dir() for base in bases[1:])
        if top not in SOURCE_TOPS and not package_relative:
            continue  # a folder the running tools make (`.groundwiki/`, `site/`), not source
        if not any((base / path).exists() for base in bases):
            stale.append(path)
    roots = {Path(top).name: ROOT / top for top in PACKAGE_ROOTS}
    for name in MODULE_NAME.findall(text):
        package, *rest = name.split(".")
        path = roots[package].joinpath(*rest)
        if not (path.is_dir() or path.with_suffix(".py").exists()):
            stale.append(name)
    return sorted(set(stale))


# The maps rewritten


def replace_table(text: str, header: str, rows: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == header]
    if len(starts) != 1:
        raise MapError(f"expected one table headed {header!r}, found {len(starts)}")
    body = starts[0] + 2  # after the header and its separator
    end = body
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:body] + [row + "\n" for row in rows] + lines[end:])


def replace_rules(text: str) -> str:
    before, found, after = text.partition(RULES_INTRO)
    if not found:
        raise MapError(f"no paragraph after {RULES_INTRO!r}")
    rest = after.lstrip("\n")
    _, blank, tail = rest.partition("\n\n")
    return before + found + "\n" + rules_paragraph() + blank + tail


def refreshed_readme(text: str) -> str:
    text = replace_table(text, FOLDER_HEADER, folder_rows())
    text = replace_table(text, TESTS_HEADER, tests_rows())
    return replace_rules(text)


def refreshed_architecture(text: str) -> str:
    return replace_table(text, MODULE_HEADER, module_rows())


def main() -> int:
    try:
        for path, refresh in ((README, refreshed_readme), (ARCHITECTURE, refreshed_architecture)):
            text = path.read_text(encoding="utf-8")
            new = refresh(text)
            if new != text:
                path.write_text(new, encoding="utf-8")
                print(f"rewrote the maps in {path.relative_to(ROOT)}")
            else:
                print(f"{path.relative_to(ROOT)}: maps up to date")
    except MapError as error:
        print(f"maps: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
