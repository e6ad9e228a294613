"""Small wikis written to disk for the tests: mkdocs.yml, pages and raw sources."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from groundwiki.core import Wiki

ROOT = Path(__file__).resolve().parents[2]


def write_wiki(
    root: Path,
    pages: dict[str, str],
    sources: dict[str, str | bytes] | None = None,
    options: dict[str, Any] | None = None,
) -> Path:
    """Write mkdocs.yml, wiki/<name> pages and raw-sources/<name> files; return mkdocs.yml."""
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "site_name": "fixture",
        "docs_dir": "wiki",
        "plugins": [{"groundwiki": options or {}}],
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for name, text in pages.items():
        path = root / "wiki" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    (root / "raw-sources").mkdir(exist_ok=True)
    for name, content in (sources or {}).items():
        path = root / "raw-sources" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root / "mkdocs.yml"


def page(summary: str | None = "A page.", body: str = "", **fields: Any) -> str:
    """A page file: frontmatter from keyword arguments, then the body."""
    data = dict(fields)
    if summary is not None:
        data["summary"] = summary
    front = yaml.safe_dump(data, sort_keys=False) if data else ""
    return f"---\n{front}---\n{textwrap.dedent(body).lstrip(chr(10))}"


MakeWiki = Callable[..., Wiki]
