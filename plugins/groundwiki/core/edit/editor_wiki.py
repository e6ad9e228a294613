"""The wiki as an editor sees it (`groundwiki lsp`): the files on disk, with the page files open
in the editor read from their buffers, compiled by the incremental core after every change; and
what is under the cursor in a page.

Positions are the compiler's: 1-based lines and columns counted in characters. The language
server converts them to the protocol's 0-based ones (editor/server.py).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from groundwiki.core.config.wiki_config import Config
from groundwiki.core.lint.findings import Finding
from groundwiki.core.lint.runner import collect_findings
from groundwiki.core.model.records import Citation, Link, Page
from groundwiki.core.read.page_reader import Buffers
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki


@dataclass(frozen=True)
class Compiled:
    wiki: Wiki
    findings: tuple[Finding, ...]
    stale: frozenset[str] | None  # doc paths this change affected; None: every page

    @property
    def by_doc(self) -> dict[str, Page]:
        """Every page file by doc path: asked on every definition, hover and reference."""
        return self.wiki.pages_by_doc

    def findings_of(self, rel_path: str) -> tuple[Finding, ...]:
        """One file's findings (a path from the wiki root), for the quick fixes asked of it."""
        return self._by_path.get(rel_path, ())

    @cached_property
    def _by_path(self) -> dict[str, tuple[Finding, ...]]:
        found: dict[str, list[Finding]] = {}
        for finding in self.findings:
            found.setdefault(finding.path, []).append(finding)
        return {path: tuple(items) for path, items in found.items()}


class EditorWiki:
    """One wiki, kept compiled across the editor's changes (the incremental core recompiles
    what a change reaches)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.cache = CompileCache()
        self.buffers = Buffers()
        self._lock = threading.Lock()
        self.compiled: Compiled | None = None

    def open(self, path: Path, text: str) -> None:
        self.buffers.texts[path] = text

    def close(self, path: Path) -> None:
        self.buffers.texts.pop(path, None)

    def compile(self, rescan: bool = True) -> Compiled:
        """`rescan`: look at the files on disk again (on open, save and close); a keystroke
        changes only a buffer, and the files are taken as the last compile found them."""
        with self._lock:
            wiki = compile_wiki(self.config, files=self.cache, buffers=self.buffers, rescan=rescan)
            findings = tuple(collect_findings(wiki))
            self.compiled = Compiled(wiki, findings, wiki.stale)
            return self.compiled

    @property
    def wiki(self) -> Wiki:
        return self._compiled().wiki

    def _compiled(self) -> Compiled:
        return self.compiled or self.compile()

    def page_at(self, path: Path) -> Page | None:
        """The page file at `path`, as compiled."""
        try:
            doc = path.resolve().relative_to(self.config.docs_dir.resolve()).as_posix()
        except ValueError:
            return None
        return self._compiled().by_doc.get(doc)


_CITATION_END = re.compile(r"-->")


def link_at(page: Page, lines: list[str], line: int, column: int) -> Link | None:
    """The link (wikilink, embed, Markdown link) whose text covers the 1-based position."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    for link in page.links:
        if link.at.line != line:
            continue
        start = link.at.column
        if link.kind == "link":  # `[text](target)`: up to its closing parenthesis
            close = text.find(")", start - 1)
            end = close + 1 if close >= 0 else len(text)
        else:
            end = start + len(link.raw) - 1
        if start <= column <= end:
            return link
    return None


def citation_at(page: Page, lines: list[str], line: int, column: int) -> Citation | None:
    """The provenance comment whose text covers the 1-based position."""
    for citation in page.citations:
        if citation.origin != "inline" or citation.at.line != line:
            continue
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        start = citation.at.column
        found = _CITATION_END.search(text, start - 1)
        end = found.end() if found else len(text)
        if start <= column <= end:
            return citation
    return None
