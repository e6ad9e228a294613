"""The MkDocs plugin alone pulls in none of the sidecar's libraries; `groundwiki[sidecar]` does."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib

from groundwiki.cli.sidecar_commands import SIDECAR_MODULES
from helpers.wikis import ROOT, page, write_wiki

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def python(code: str, *args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
        cwd=cwd,
    )


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    return {normalised(re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0]) for r in requirements}


def sidecar_extra() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return requirement_names(project["optional-dependencies"]["sidecar"])


def installed_from(modules: tuple[str, ...]) -> set[str]:
    """The distributions (as PyPI names them) that installed these top-level modules."""
    found = importlib.metadata.packages_distributions()
    return {normalised(dist) for module in modules for dist in found.get(module, [])}


def test_a_site_build_imports_none_of_the_sidecars_libraries(tmp_path):
    config = write_wiki(
        tmp_path,
        {"index.md": page(body="[[a]]\n"), "a.md": page(body="<!-- from: raw-sources/n.md -->\n")},
        {"n.md": "Evidence.\n"},
        {"sidecar": {"port": 8800, "weights": {"token": 0}}},  # validated at build time
    )
    result = python(
        "import json, sys\n"
        "from mkdocs.commands.build import build\n"
        "from mkdocs.config import load_config\n"
        "build(load_config(sys.argv[1]))\n"
        "print(json.dumps(sorted(sys.modules)))\n",
        str(config),
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site/a/index.html").is_file()
    loaded = {name.split(".")[0] for name in json.loads(result.stdout.splitlines()[-1])}
    assert "groundwiki" in loaded
    assert loaded.isdisjoint(SIDECAR_MODULES), sorted(loaded & set(SIDECAR_MODULES))


def test_the_sidecars_module_list_is_the_sidecar_extra():
    """`groundwiki serve` checks these modules to say the extra is missing: each comes from a
    package of the extra, and each package of the extra is checked."""
    assert len(installed_from(SIDECAR_MODULES)) == len(SIDECAR_MODULES), SIDECAR_MODULES
    assert installed_from(SIDECAR_MODULES) == sidecar_extra()


def test_the_base_dependencies_hold_none_of_the_sidecars_libraries():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert requirement_names(project["dependencies"]).isdisjoint(sidecar_extra())
    extras = project["optional-dependencies"]
    # `make install` installs .[dev]: everything, the sidecar included.
    assert any(r.startswith("groundwiki[") and "sidecar" in r for r in extras["dev"])


def test_a_sidecar_command_without_the_extra_says_what_to_install(tmp_path):
    write_wiki(tmp_path, {"index.md": page()})
    # As if installed without the extra: importing chromadb fails, as it would.
    result = python(
        "import sys\n"
        "sys.modules['chromadb'] = None\n"
        "from groundwiki.cli import main\n"
        "raise SystemExit(main(['serve']))\n",
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "groundwiki: groundwiki serve needs the sidecar's libraries (chromadb missing); "
        "install them with pip install 'groundwiki[sidecar]'"
    ]


def test_lint_runs_without_the_sidecars_libraries(tmp_path):
    write_wiki(tmp_path, {"index.md": page()})
    result = python(
        "import sys\n"
        f"for name in {list(SIDECAR_MODULES)!r}:\n"
        "    sys.modules[name] = None  # as if not installed\n"
        "from groundwiki.cli import main\n"
        "raise SystemExit(main(['lint', '-q']))\n",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
