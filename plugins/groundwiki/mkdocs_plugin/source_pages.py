"""The raw-source pages and the artifacts, built on the core MkDocs leaves idle.

A raw source's page is groundwiki's own: its Markdown is generated, search leaves it out, and no
other page's HTML depends on it. MkDocs builds pages one after another on one core, so these
pages are built in a forked child while MkDocs builds the wiki's pages, through MkDocs' own page
pipeline (every plugin's page events, the theme's template): the HTML is the one MkDocs would
write. The JSON artifacts (graph, lint report, page index) and the alias redirects, which no
page reads either, are written there after them. Where a fork is unsafe (`mkdocs serve` runs
threads) or fails, they are built here, in order, in the same way; a dirty rebuild under
`mkdocs serve` builds them after MkDocs' pages, which the writer is waiting for.

`mkdocs.commands.build` keeps the page pipeline in private functions; MkDocs is pinned to 1.6,
whose 1.x line is in maintenance, so they do not move.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mkdocs.commands.build import _build_page, _populate_page
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page as MkDocsPage

from groundwiki.core.config.wiki_config import Options
from groundwiki.core.files.forking import can_fork, die_with_parent
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.render.source import FullText, full_text, render_source
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.mkdocs_plugin.source_inputs import SourceInputs

log = logging.getLogger("mkdocs.plugins.groundwiki")
# The child's exit status says what the parent must still do.
_DONE, _WARNED, _FAILED = 0, 3, 4


@dataclass
class SourcePages:
    """The raw-source pages of one build: `start` builds them (in a child when it can), `finish`
    waits for them and returns the seconds they took to build."""

    docs: Sequence[str]  # their src_uris, in the order they are built
    render: Callable[[str], Rendered]  # src_uri -> the page's Markdown and slots
    slots: dict[str, dict[str, str]]  # where the plugin's on_page_content finds their slots
    # Filled with the chunks cut while building; a child sends back the ones it added.
    chunks: dict[Any, Any]
    after: Callable[[], None]  # what else is written beside MkDocs, once the pages are
    # src_uri -> the full text of a source too long for its page, written beside it.
    full_text: Callable[[str], FullText | None] = lambda _: None
    # For a dirty rebuild (incremental.py): what each page is made from, and where it is written.
    inputs: dict[str, str] = field(default_factory=dict)
    dests: dict[str, str] = field(default_factory=dict)
    child: int | None = None
    _pipe: int | None = None
    began: float = 0.0
    seconds: float = 0.0

    def start(
        self, config: MkDocsConfig, files: Files, nav: Navigation, env: Any, *, fork: bool
    ) -> None:
        self.began = time.perf_counter()
        if fork and can_fork():
            sys.stdout.flush()
            sys.stderr.flush()
            # Objects alive now are left out of the collector's passes in both processes: a
            # pass touches every object, and each touched page of memory is then copied.
            gc.freeze()
            try:
                read, write = os.pipe()
                pid = os.fork()
            except OSError as exc:
                gc.unfreeze()
                log.info(f"groundwiki: building raw-source pages in this process ({exc})")
            else:
                if pid == 0:
                    os.close(read)
                    os._exit(self._child(config, files, nav, env, write))
                gc.unfreeze()
                os.close(write)
                self.child, self._pipe = pid, read
                return
        self._build_all(config, files, nav, env)
        self.seconds = time.perf_counter() - self.began

    def finish(self, config: MkDocsConfig, files: Files, nav: Navigation, env: Any) -> float:
        if self.child is None or self._pipe is None:
            return self.seconds
        with os.fdopen(self._pipe, "rb") as pipe:
            sent = pipe.read()  # until the child exits: it writes last
        _, status = os.waitpid(self.child, 0)
        self.child = self._pipe = None
        code = os.waitstatus_to_exitcode(status)
        if code == _WARNED:
            # The child's warnings were printed there; strict mode counts them here.
            log.warning("groundwiki: building the raw-source pages logged warnings (above)")
        if code in (_DONE, _WARNED):
            try:
                self.seconds, cut = pickle.loads(sent)
                self.chunks.update(cut)
            except Exception:  # only a cost: the next build cuts them again
                log.info("groundwiki: the raw-source worker's chunks could not be read")
        else:
            log.info(
                f"groundwiki: the worker building raw-source pages exited with {code}; "
                "building them in this process"
            )
            self._build_all(config, files, nav, env)
            self.seconds = time.perf_counter() - self.began
        return self.seconds

    def _child(
        self, config: MkDocsConfig, files: Files, nav: Navigation, env: Any, pipe: int
    ) -> int:
        die_with_parent()
        counter = _WarningCount()
        logging.getLogger("mkdocs").addHandler(counter)
        known = set(self.chunks)
        try:
            self._build_all(config, files, nav, env)
            cut = {key: value for key, value in self.chunks.items() if key not in known}
            took = time.perf_counter() - self.began
            with os.fdopen(pipe, "wb") as out:
                out.write(pickle.dumps((took, cut), protocol=pickle.HIGHEST_PROTOCOL))
        except BaseException:
            # The parent builds them again, and a problem the writer must fix (a missing
            # tokenizer) then stops the build there with its one-line message.
            log.debug("groundwiki: the raw-source worker failed", exc_info=True)
            return _FAILED
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return _WARNED if counter.count else _DONE

    def _build_all(self, config: MkDocsConfig, files: Files, nav: Navigation, env: Any) -> None:
        self._build_pages(config, files, nav, env)
        self.after()

    def _build_pages(self, config: MkDocsConfig, files: Files, nav: Navigation, env: Any) -> None:
        doc_files = files.documentation_pages()
        for src_uri in self.docs:
            rendered = self.render(src_uri)
            self.slots[src_uri] = rendered.slots
            file = File.generated(config, src_uri, content=rendered.markdown)
            page = MkDocsPage(None, file, config)
            _populate_page(page, config, files)
            _build_page(page, config, doc_files, nav, env)
            text = self.full_text(src_uri)
            if text is not None:
                _write_text(os.path.join(config.site_dir, text.path), text.text)


def source_pages(
    wiki: Wiki,
    files: Files,
    config: MkDocsConfig,
    options: Options,
    *,
    slots: dict[str, dict[str, str]],
    chunks: dict[Any, Any],
    after: Callable[[], None],
    dirty: bool,
    kept: SourceInputs | None = None,
) -> SourcePages:
    """The raw-source pages of a build (none when the site builds none), with what is written
    after them (`after`); for a `dirty` rebuild, with what each is made from (`kept` across a
    server's rebuilds)."""
    layout = wiki.layout
    by_doc: dict[str, str] = {}
    for path in wiki.sources if options.raw_source_pages else ():
        doc = layout.source_doc(path)
        if files.get_file_from_path(doc) is not None:
            log.warning(f"groundwiki: {doc} exists in docs_dir; not generating it")
        else:
            by_doc[doc] = path
    citations = kept if kept is not None else SourceInputs()
    citations.update(wiki)
    lines = options.source_page_lines

    def render(doc: str) -> Rendered:
        source = wiki.sources[by_doc[doc]]
        cited = citations.cited(source.path)
        chunked = wiki.chunks_of(source)
        return render_source(source, chunked, cited, wiki.config.raw_prefix, layout, lines)

    def text(doc: str) -> FullText | None:
        return full_text(wiki.sources[by_doc[doc]], layout, lines)

    pages = SourcePages(list(by_doc), render, slots, chunks, after, text)
    if dirty:
        pages.inputs = citations.inputs(by_doc)
        pages.dests = {doc: citations.dest(config, doc) for doc in by_doc}
    return pages


# Characters written at a time: encoding a 50 MB text whole would hold its bytes beside it.
_SLICE = 1 << 20


def _write_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as out:  # newlines are "\n" already
        for start in range(0, len(text), _SLICE):
            out.write(text[start : start + _SLICE])


class _WarningCount(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
