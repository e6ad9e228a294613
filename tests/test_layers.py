"""The layering promise, checked on the package's source: layers only look down, and one
compiler core reads Markdown, YAML and sources for everyone.

- the core imports none of its adapters (the MkDocs plugin, the sidecar, the evaluation, the
  CLI), nor what they run on (MkDocs, the sidecar's service and index libraries);
- the adapters import none of the parsing libraries (YAML, Markdown, frontmatter, PDF): they
  ask the core;
- no wiki syntax (`[[`, `![[`, `<!--`, `%%`) is spelled in a string outside the core, so none
  is parsed or written there. Docstrings may name it: they explain, they do not parse.

Each rule is shown to catch a deliberate violation in a small package written to disk, and the
real package to keep them all.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "plugins" / "groundwiki"

ADAPTERS = ("mkdocs_plugin", "sidecar", "evaluation", "cli")
# What the adapters run on: the core takes folders and options, never a MkDocs config or a
# sidecar's index.
HOSTS = ("mkdocs", "whoosh", "chromadb", "onnxruntime", "starlette", "uvicorn", "watchdog", "mcp")
PARSERS = ("yaml", "markdown_it", "mdit_py_plugins", "frontmatter", "pypdf", "markdown")
# As written, and as a regex spells it (`\[\[`).
WIKI_SYNTAX = ("[[", "![[", "<!--", "%%", r"\[\[")


@dataclass(frozen=True)
class Violation:
    rule: str
    module: str
    line: int
    detail: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.rule}: {self.detail}"


def module_name(package: Path, path: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """`core`, an adapter's name, or `other` (the package's own `__init__`, `progress`)."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    return top if top == "core" or top in ADAPTERS else "other"


def imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Every module an import names (absolute, relative ones resolved), wherever it stands:
    at the top, in a function, under `TYPE_CHECKING`."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            stem = ".".join([*base, node.module] if node.module else base)
            yield stem, node.lineno
            for alias in node.names:  # `from .. import sidecar` imports a module by name
                yield f"{stem}.{alias.name}", node.lineno


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def violations(package: Path) -> list[Violation]:
    found: list[Violation] = []
    name = package.name
    for path in sorted(package.rglob("*.py")):
        module = module_name(package, path)
        where = layer(module)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for target, line in imported(tree, module, path.name == "__init__.py"):
            top = target.split(".")[0]
            inner = target.split(".")[1] if target.startswith(f"{name}.") else ""
            if where == "core" and inner in ADAPTERS:
                found.append(Violation("core-imports-adapter", module, line, target))
            if where == "core" and top in HOSTS:
                found.append(Violation("core-imports-host", module, line, target))
            if where in ADAPTERS and top in PARSERS:
                found.append(Violation("adapter-imports-parser", module, line, target))
        if where == "core":
            continue
        skip = docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) not in skip:
                value = node.value
                text = value.decode("latin-1") if isinstance(value, bytes) else value
                if isinstance(text, str):
                    for syntax in WIKI_SYNTAX:
                        if syntax in text:
                            detail = f"{syntax!r} in {text[:60]!r}"
                            found.append(
                                Violation("wiki-syntax-outside-core", module, node.lineno, detail)
                            )
    return found


def test_the_package_keeps_its_layers():
    assert [str(v) for v in violations(PACKAGE)] == []


# --- each rule catches a deliberate violation --------------------------------------------------

CLEAN = {
    "__init__.py": "",
    "core/__init__.py": "",
    "core/markdown.py": 'import yaml\nimport markdown_it\nWIKILINK = r"\\[\\[(.+?)\\]\\]"\n',
    "core/pages.py": "from .markdown import WIKILINK\nfrom . import markdown\n",
    "sidecar/__init__.py": "",
    "sidecar/documents.py": (
        '"""Records of [[pages]] and <!-- comments -->: a docstring may name the syntax."""\n'
        "from ..core.pages import WIKILINK\nfrom groundwiki.core import markdown\n"
        "def lead(body):\n    '''Prose, without [[links]].'''\n    return body\n"
    ),
    "mkdocs_plugin/__init__.py": "",
    "mkdocs_plugin/plugin.py": "from ..core import pages\nimport mkdocs\n",
    "evaluation/__init__.py": "",
    "evaluation/corpus.py": "from ..core.markdown import WIKILINK\nimport json\n",
    "cli.py": "from .core import pages\nfrom .sidecar import documents\n",
    "progress.py": "import sys\n",
}

VIOLATIONS = {
    "core imports the sidecar, relative": (
        "core/bad.py",
        "from ..sidecar.documents import lead\n",
        "core-imports-adapter",
    ),
    "core imports the sidecar package by name": (
        "core/bad.py",
        "from .. import sidecar\n",
        "core-imports-adapter",
    ),
    "core imports the plugin, absolute": (
        "core/bad.py",
        "import groundwiki.mkdocs_plugin.plugin\n",
        "core-imports-adapter",
    ),
    "core imports the evaluation inside a function": (
        "core/bad.py",
        "def f():\n    from groundwiki.evaluation import corpus\n",
        "core-imports-adapter",
    ),
    "core imports the CLI under TYPE_CHECKING": (
        "core/render/bad.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ...cli import main\n",
        "core-imports-adapter",
    ),
    "core imports MkDocs": (
        "core/render/bad.py",
        "from mkdocs.config.defaults import MkDocsConfig\n",
        "core-imports-host",
    ),
    "core imports Whoosh inside a function": (
        "core/bad.py",
        "def index():\n    import whoosh.index\n",
        "core-imports-host",
    ),
    "the sidecar imports yaml": ("sidecar/bad.py", "import yaml\n", "adapter-imports-parser"),
    "the plugin imports markdown_it": (
        "mkdocs_plugin/bad.py",
        "from markdown_it import MarkdownIt\n",
        "adapter-imports-parser",
    ),
    "the evaluation imports frontmatter": (
        "evaluation/bad.py",
        "import frontmatter as fm\n",
        "adapter-imports-parser",
    ),
    "the CLI imports pypdf inside a function": (
        "cli.py",
        "def read():\n    import pypdf\n",
        "adapter-imports-parser",
    ),
    "the sidecar imports a Python-Markdown extension": (
        "sidecar/bad.py",
        "import markdown.extensions.toc\n",
        "adapter-imports-parser",
    ),
    "a wikilink regex in the sidecar": (
        "sidecar/bad.py",
        'import re\nLINK = re.compile(r"\\[\\[([^\\]]+)\\]\\]")\n',
        "wiki-syntax-outside-core",
    ),
    "a wikilink written in the sidecar": (
        "sidecar/bad.py",
        'def link(key):\n    return "[[" + key + "]]"\n',
        "wiki-syntax-outside-core",
    ),
    "a comment regex in the plugin": (
        "mkdocs_plugin/bad.py",
        'import re\nCOMMENT = re.compile(r"<!--.*?-->")\n',
        "wiki-syntax-outside-core",
    ),
    "an embed written by an f-string in the evaluation": (
        "evaluation/bad.py",
        'def embed(name):\n    return f"![[{name}]]"\n',
        "wiki-syntax-outside-core",
    ),
    "an Obsidian comment mark in the CLI": (
        "cli.py",
        'def hide(text):\n    return text.replace("%%", "")\n',
        "wiki-syntax-outside-core",
    ),
    "wiki syntax in a bytes literal outside the core": (
        "progress.py",
        'MARK = b"<!-- from:"\n',
        "wiki-syntax-outside-core",
    ),
}


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "groundwiki"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return package


def test_a_package_that_keeps_its_layers_passes(tmp_path):
    assert violations(write_package(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("case", VIOLATIONS, ids=list(VIOLATIONS))
def test_a_violation_is_caught(tmp_path, case):
    name, text, rule = VIOLATIONS[case]
    package = write_package(tmp_path, {**CLEAN, name: CLEAN.get(name, "") + text})
    found = violations(package)
    assert found and {v.rule for v in found} == {rule}
    assert {v.module for v in found} == {module_name(package, package / name)}
