"""The layering rules of groundwiki's two import packages, read from their source: the order of
their folders, every import a module makes, and the rules an import, a module or a folder can
break. tests/core/test_layers.py applies them to the real packages and to small ones written to
disk.

An import is one wherever it stands (in a function, under `TYPE_CHECKING`) and however it is
spelled: `import`, `from`, relative, or `importlib.import_module` / `__import__` with literal
names. A string is read as Python joins it (`"[" + "["`) and as a regex spells it (`\\[\\[`,
`\\[{2}`, `%{2}`).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import inspect
import itertools
import re
import tomllib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGES = (ROOT / "plugins" / "groundwiki", ROOT / "sidecar" / "groundwiki_sidecar")
PACKAGE_NAMES = tuple(package.name for package in PACKAGES)

# The folders bottom to top. A module may import from its own folder and the folders before it,
# never from a later one ("up"), and no chain of imports may come back to where it started
# ("around"). A module's place is its folder; a module listed by name (`__main__`) stands alone.
ORDER = (
    # The package's `__init__` (a docstring and the version) and the helpers beside it that any
    # layer may use (`progress`): the standard library only.
    "groundwiki",
    # The compiler core.
    "groundwiki.core.config",
    "groundwiki.core.files",
    "groundwiki.core.model",
    "groundwiki.core.sources",
    "groundwiki.core.read",
    "groundwiki.core.evidence",
    "groundwiki.core.links",
    # A page body rewritten for the site needs one page, its anchors and where things land, not
    # the compiled wiki; the compile cache (wiki/cache_codec) stores its rendered slots.
    "groundwiki.core.render.body",
    "groundwiki.core.wiki",
    "groundwiki.core.lint",
    "groundwiki.core.edit",
    "groundwiki.core.render",
    # The core's front door (`from groundwiki.core import Wiki`): above every core folder, so
    # that no core module imports through it.
    "groundwiki.core",
    # The MkDocs plugin: below the sidecar, so that a site builds without it.
    "groundwiki.mkdocs_plugin",
    # The language server: the core's answers over the protocol (pygls), beside the plugin.
    "groundwiki.editor",
    # The sidecar: its package's `__init__` (a docstring only), then its folders.
    "groundwiki_sidecar",
    "groundwiki_sidecar.lanes",
    "groundwiki_sidecar.base",
    "groundwiki_sidecar.embedding",
    "groundwiki_sidecar.index",
    "groundwiki_sidecar.search",
    "groundwiki_sidecar.api",
    "groundwiki_sidecar.evaluation",
    # The command line: the top, it may import anything.
    "groundwiki.cli",
    "groundwiki.__main__",
)

# Modules of the top folder that are no helper: the package's own `__init__` is the core's
# (importing any core module runs it), `__main__` is the command line.
CORE_PACKAGE = "groundwiki"
CORE = "groundwiki.core"
# What the adapters run on: the core takes folders and options, never a MkDocs config, a
# sidecar's index or an evaluation's measures. The sidecar's and the evaluation's libraries are
# those their extras install.
HOST_EXTRAS = ("sidecar", "eval")
HOSTS_BY_NAME = ("mkdocs", "material")
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


ImportNode = ast.Import | ast.ImportFrom | ast.Call
StringNode = ast.Constant | ast.BinOp


@dataclass(frozen=True)
class Module:
    """One module as the rules read it: its imports, and its strings but the docstrings."""

    name: str
    path: Path
    imports: tuple[ImportNode, ...]
    strings: tuple[StringNode, ...]

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def folder(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def module_name(package: Path, path: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# The fields of a statement that hold statements: an import statement stands in one of them.
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _nodes(tree: ast.AST, statements_only: bool) -> Iterator[ast.AST]:
    """The nodes of `tree`, parents before children; only the statements if `statements_only`.
    Faster than `ast.walk`, which the whole packages' trees make count: expression contexts
    (`Load`, `Store`) are left out."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for name in _STATEMENT_FIELDS if statements_only else node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST) and name != "ctx":
                stack.append(value)


def is_core(name: str) -> bool:
    return name in (CORE_PACKAGE, CORE) or name.startswith(f"{CORE}.")


def read_module(name: str, path: Path) -> Module:
    """The module at `path`: its imports and its strings (those of a core module, where wiki
    syntax belongs, are not read), in one walk of its syntax tree."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, str(path))
    strings_wanted = not is_core(name)
    # Only a call can import in an expression, and only by its name: without one, the
    # statements hold every import.
    calls_wanted = any(called in text for called in DYNAMIC_IMPORTS)
    imports: list[ImportNode] = []
    strings: list[StringNode] = []
    skip: set[int] = set()  # the docstrings
    for node in _nodes(tree, statements_only=not (strings_wanted or calls_wanted)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(node)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called in DYNAMIC_IMPORTS:
                imports.append(node)
        elif not strings_wanted:
            continue
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)) or (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult)
        ):
            strings.append(node)
        elif isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    kept = sorted((n for n in strings if id(n) not in skip), key=_position)
    return Module(name, path, tuple(sorted(imports, key=_position)), tuple(kept))


def _position(node: ast.expr | ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


def read_modules(packages: Iterable[Path]) -> dict[str, Module]:
    return {
        name: read_module(name, path)
        for package in packages
        for path in sorted(package.rglob("*.py"))
        for name in (module_name(package, path),)
    }


@functools.cache
def real_modules() -> dict[str, Module]:
    """The real packages' modules, read once per test process (two tests read them)."""
    return read_modules(PACKAGES)


def place(module: Module, order: Sequence[str] = ORDER) -> int | None:
    """The index of the module's folder in the order (or of the module, listed by name)."""
    for name in (module.name, module.folder):
        if name in order:
            return order.index(name)
    return None


def rank(target: str, order: Sequence[str] = ORDER) -> int:
    """The place of what an import names: the longest listed name it starts with (a module, its
    folder, or the module an imported attribute belongs to)."""
    parts = target.split(".")
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        if prefix in order:
            return order.index(prefix)
    return -1


def kind(module: Module) -> str:
    """`core`, `helper` (a module beside the core package's `__init__`) or `adapter`."""
    if is_core(module.name):
        return "core"
    if module.folder == CORE_PACKAGE and module.name not in ORDER:
        return "helper"
    return "adapter"


def top_level_modules(distribution: str) -> frozenset[str]:
    """The top-level import names an installed distribution provides, as
    `importlib.metadata.packages_distributions` finds them (which reads every distribution
    installed: this reads one)."""
    found = importlib.metadata.distribution(distribution)
    declared = found.read_text("top_level.txt")
    if declared:
        return frozenset(declared.split())
    names = {
        path.parts[0] if len(path.parts) > 1 else inspect.getmodulename(str(path)) or str(path)
        for path in found.files or ()
    }
    return frozenset(name for name in names if "." not in name)


def requirement_names(requirements: Iterable[str]) -> set[str]:
    """The distributions some requirements name, but this project's own (`groundwiki[sidecar]`)."""
    names = {canonicalize_name(Requirement(text).name) for text in requirements}
    return names - {canonicalize_name("groundwiki")}


@functools.cache
def hosts(pyproject: Path = PYPROJECT) -> frozenset[str]:
    """The import names of what the adapters run on: MkDocs and its theme, and the top-level
    modules of the distributions the sidecar's and the evaluation's extras install."""
    extras = tomllib.loads(pyproject.read_text("utf-8"))["project"]["optional-dependencies"]
    wanted = requirement_names(text for extra in HOST_EXTRAS for text in extras[extra])
    installed = set().union(*map(top_level_modules, sorted(wanted)))
    return frozenset(installed - set(PACKAGE_NAMES)) | frozenset(HOSTS_BY_NAME)


# --- imports ------------------------------------------------------------------------------------


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


def from_import(stem: str, names: Sequence[str], module: str, known: set[str]) -> list[str]:
    """What `from stem import names` imports: each name that is a module of its own, and `stem`
    itself, unless every name is a module and the importing module already sits inside `stem`
    (`from . import sibling` runs no `__init__` that is not running already)."""
    targets = [f"{stem}.{name}" for name in names if f"{stem}.{name}" in known]
    names_attribute = len(targets) < len(names)
    if stem != module and (names_attribute or not module.startswith(f"{stem}.")):
        targets.insert(0, stem)
    return targets


def dynamic_import(node: ast.Call, module: str, here: list[str], known: set[str]) -> list[str]:
    """The modules an `importlib.import_module` or `__import__` call names by literals."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in DYNAMIC_IMPORTS:
        return []
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    name = string_value(node.args[0] if node.args else keywords.get("name"))
    if name is None:
        return []
    if called == "import_module":
        level = len(name) - len(name.lstrip("."))
        package_node = node.args[1] if len(node.args) > 1 else keywords.get("package")
        package = string_value(package_node)
        # `__package__`, or anything else computed: the calling module's own package.
        return [resolve(name[level:], level, package.split(".") if package else here)]
    level_node = node.args[4] if len(node.args) > 4 else keywords.get("level")
    level = level_node.value if isinstance(level_node, ast.Constant) else 0
    level = level if isinstance(level, int) else 0
    stem = resolve(name, level, here)
    fromlist = node.args[3] if len(node.args) > 3 else keywords.get("fromlist")
    names = [alias for e in getattr(fromlist, "elts", ()) if (alias := string_value(e))]
    return from_import(stem, names, module, known) if names else [stem]


def imported(module: Module, known: set[str]) -> Iterator[tuple[str, int]]:
    """Every module an import names (absolute, relative ones resolved), wherever it stands:
    at the top, in a function, under `TYPE_CHECKING`, or in an `importlib` call. A name that is
    no module of ours (`from x import function`) stands for its module."""
    here = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    for node in module.imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            stem = resolve(node.module or "", node.level, here)
            names = [alias.name for alias in node.names]
            for target in from_import(stem, names, module.name, known):
                yield target, node.lineno
        else:
            for target in dynamic_import(node, module.name, here, known):
                yield target, node.lineno


Imports = dict[str, list[tuple[str, int]]]


def all_imports(modules: dict[str, Module]) -> Imports:
    """Module → what each of its imports names, and the line."""
    known = set(modules)
    return {name: list(imported(module, known)) for name, module in modules.items()}


def import_graph(imports: Imports) -> dict[str, dict[str, int]]:
    """Module → the modules of ours it imports → the line of the first such import."""
    graph: dict[str, dict[str, int]] = {name: {} for name in imports}
    for name, targets in imports.items():
        for target, line in targets:
            if target in graph and target != name:
                graph[name].setdefault(target, line)
    return graph


def knots(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def shortest_cycle(graph: dict[str, dict[str, int]], start: str, knot: set[str]) -> list[str]:
    """The shortest chain of imports inside `knot` from `start` back to it."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if successor in knot and successor not in came_from:
                came_from[successor] = node
                queue.append(successor)
    return [start]


# --- the rules ----------------------------------------------------------------------------------


def import_rules(module: Module, target: str, host_names: frozenset[str]) -> Iterator[str]:
    """The rules `module` breaks by importing `target`, apart from its place in the order."""
    top = target.split(".")[0]
    where = kind(module)
    # The core and the helpers stand below every adapter and run on none of their hosts.
    if where in ("core", "helper") and top in host_names:
        yield f"{where}-imports-host"
    # Only the core parses.
    if where in ("adapter", "helper") and top in PARSERS:
        yield f"{where}-imports-parser"


def order_violations(
    modules: dict[str, Module], imports: Imports, host_names: frozenset[str]
) -> list[Violation]:
    found: list[Violation] = []
    for module in modules.values():
        where = place(module)
        if where is None:
            detail = f"its folder {module.folder} is in no layer: place it in ORDER first"
            found.append(Violation("module-in-no-layer", module.name, 1, detail))
            continue
        for target, line in imports[module.name]:
            if target.split(".")[0] in PACKAGE_NAMES and rank(target) > where:
                detail = f"{target} stands above {ORDER[where]}"
                found.append(Violation("up", module.name, line, detail))
            for rule in import_rules(module, target, host_names):
                found.append(Violation(rule, module.name, line, target))
    return found


def cycle_violations(imports: Imports) -> list[Violation]:
    """One per module of each knot, with the shortest cycle through it."""
    graph = import_graph(imports)
    found: list[Violation] = []
    for knot in knots(graph):
        for name in knot:
            cycle = shortest_cycle(graph, name, set(knot))
            steps = " → ".join(f"{a}:{graph[a][b]}" for a, b in itertools.pairwise(cycle))
            detail = f"{steps} → {name} (a knot of {len(knot)})"
            found.append(Violation("around", name, graph[name][cycle[1]], detail))
    return found


def folder_violations(packages: Iterable[Path]) -> list[Violation]:
    """Every folder that holds modules says in its `__init__`'s docstring what it holds."""
    found: list[Violation] = []
    for package in packages:
        folders = {path.parent for path in package.rglob("*.py")}
        for folder in sorted(folders):
            init = folder / "__init__.py"
            name = module_name(package, init)
            text = init.read_text(encoding="utf-8") if init.exists() else ""
            if not ast.get_docstring(ast.parse(text)):
                detail = "its __init__.py says in no docstring what the folder holds"
                found.append(Violation("folder-without-docstring", name, 1, detail))
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


def syntax_violations(module: Module) -> Iterator[Violation]:
    """Wiki syntax spelled in a string of a module outside the core (docstrings excepted)."""
    seen: set[tuple[int, str]] = set()
    for node in module.strings:
        text = string_value(node)
        syntax = spelled_syntax(text) if text is not None else None
        # A joined string reports once: its parts are walked too.
        if text is not None and syntax and (node.lineno, syntax) not in seen:
            seen.add((node.lineno, syntax))
            detail = f"{syntax!r} in {text[:60]!r}"
            yield Violation("wiki-syntax-outside-core", module.name, node.lineno, detail)


def violations(packages: Sequence[Path] = PACKAGES, pyproject: Path = PYPROJECT) -> list[Violation]:
    """Every rule each module, folder and import of `packages` breaks."""
    modules = real_modules() if tuple(packages) == PACKAGES else read_modules(packages)
    imports = all_imports(modules)
    found = [
        *folder_violations(packages),
        *order_violations(modules, imports, hosts(pyproject)),
        *cycle_violations(imports),
    ]
    for module in modules.values():
        if place(module) is not None and kind(module) != "core":
            found.extend(syntax_violations(module))
    return sorted(found, key=lambda v: (v.module, v.line, v.rule, v.detail))
