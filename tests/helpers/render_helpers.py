"""Real `mkdocs build` runs for the rendering tests: a small wiki written to disk, its HTML read."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from helpers.commands import mkdocs
from helpers.wikis import write_wiki


def build_site(
    root: Path,
    pages: dict[str, Any],
    yaml_tail: str = "",
    sources: dict[str, str | bytes] | None = None,
    **config: Any,
) -> Path:
    """Write the pages (text, or bytes for attachments) and build them with mkdocs-material;
    extra keyword arguments go into mkdocs.yml, `yaml_tail` is appended to it as written (for
    tags such as `!!python/name:`)."""
    texts = {name: content for name, content in pages.items() if isinstance(content, str)}
    write_wiki(root, texts, sources)
    for name, content in pages.items():
        if isinstance(content, bytes):
            (root / "wiki" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "wiki" / name).write_bytes(content)
    path = root / "mkdocs.yml"
    data = yaml.safe_load(path.read_text())
    data["theme"] = {"name": "material"}
    data["plugins"] = ["search", {"groundwiki": {}}]
    data.update(config)
    path.write_text(yaml.safe_dump(data) + yaml_tail)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = mkdocs("build", "-f", str(path), "-d", str(root / "site"), env=env)
    assert result.returncode == 0, result.stderr
    return root / "site"


def article(site: Path, url: str) -> str:
    """The page's content: between the `<article>` tag and the local graph (or its end)."""
    text = (site / url / "index.html").read_text()
    start = text.index("<article")
    end = text.find('<div class="gw-local-graph"', start)
    return text[start : end if end > 0 else text.index("</article>", start)]


def outside_code(html: str) -> str:
    """The HTML with <pre> and <code> elements removed: what a reader sees as text."""
    return re.sub(r"<(pre|code)\b.*?</\1>", "", html, flags=re.DOTALL)
