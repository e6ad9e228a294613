"""MkDocs events for groundwiki. Every decision is the core's; this file only wires it in."""

from __future__ import annotations

import functools
import gc
import json
import logging
import os
import time
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from groundwiki_sidecar.base.settings import settings_from_mapping
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page as MkDocsPage
from mkdocs.utils.templates import TemplateContext

from groundwiki import __version__
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import build_config, lines_of, options_from_mapping
from groundwiki.core.files.file_cache import utf8_name
from groundwiki.core.lint import LintReport
from groundwiki.core.lint.runner import check_rule_names, collect_findings, report_of, shared_report
from groundwiki.core.model.records import Citation, Page
from groundwiki.core.model.scopes import USER_DIR, user_of
from groundwiki.core.model.site_paths import (
    ASSETS_DIR,
    GRAPH_JSON,
    GRAPH_PAGE,
    INDEX_PAGE,
    LINT_JSON,
    LINT_PAGE,
    PAGES_JSON,
    TAGS_PAGE,
    home_pages,
)
from groundwiki.core.read.symlinks import outside_files
from groundwiki.core.render.artifacts import graph_json, pages_index
from groundwiki.core.render.body.convert import MarkdownConverter, missing_extensions
from groundwiki.core.render.body.slots import Rendered, fill_slots
from groundwiki.core.render.body.text import html_meta
from groundwiki.core.render.generated import (
    graph_page,
    home_links,
    index_page,
    lint_page,
    tags_page,
    unpublished_notice,
)
from groundwiki.core.render.inputs import RenderInputs
from groundwiki.core.render.page import RenderOptions, render_page
from groundwiki.core.render.redirects import redirect_file, redirect_html, redirects
from groundwiki.core.render.source import FullText, full_text, render_source
from groundwiki.core.render.templates import Templates
from groundwiki.core.wiki.compiler import CompileCache, Wiki, compile_wiki, discover_pages
from groundwiki.core.wiki.graph import Graph, build_graph
from groundwiki.mkdocs_plugin.build_cache import load_build_cache, save_build_cache
from groundwiki.mkdocs_plugin.home import place_home_pages
from groundwiki.mkdocs_plugin.incremental import Incremental, text_hash
from groundwiki.mkdocs_plugin.phases import BuildClock
from groundwiki.mkdocs_plugin.plugin_options import GroundwikiConfig
from groundwiki.mkdocs_plugin.source_pages import SourcePages

log = logging.getLogger("mkdocs.plugins.groundwiki")
ASSETS = Path(__file__).parent / "assets"
CSS = f"{ASSETS_DIR}/groundwiki.css"
SCRIPTS = (f"{ASSETS_DIR}/vendor/force-graph.min.js", f"{ASSETS_DIR}/groundwiki.js")
P = ParamSpec("P")
R = TypeVar("R")


def reported(event: Callable[P, R]) -> Callable[P, R]:
    """The plugin's edge: a problem the user can fix (a GroundwikiError: a bad setting, a
    broken baseline, a missing tokenizer) stops the build with its message and no traceback;
    anything else is a bug and keeps its traceback."""

    @functools.wraps(event)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return event(*args, **kwargs)
        except GroundwikiError as exc:
            raise PluginError(f"groundwiki: {exc}") from exc

    return run


class GroundwikiPlugin(BasePlugin[GroundwikiConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.wiki: Wiki | None = None
        self.report: LintReport | None = None  # every finding: the build log and --strict
        self.site_report: LintReport | None = None  # what the site's readers may read of it
        self.graph: Graph | None = None
        self.pages_by_doc: dict[str, Page] = {}
        self.slots: dict[str, dict[str, str]] = {}  # src_uri -> HTML filled in after Markdown
        self.late_slots: dict[str, dict[str, str]] = {}  # src_uri -> HTML filled after search
        self.unpublished: set[str] = set()  # src_uris shown as a notice instead of their text
        # Survives rebuilds under `mkdocs serve`: a rebuild reads only the files that changed.
        self._compile_cache = CompileCache()
        self._loaded: tuple[frozenset[int], int, frozenset[str]] | None = None  # see _contents
        self.compact = False
        self.clock = BuildClock()
        self.source_pages: SourcePages | None = None
        self.nav: Navigation | None = None
        self.dirty = False
        # The render cache of this build (see _render): its key base, inputs, keys used.
        self._render_base: str | None = None
        self._render_inputs: dict[str | None, RenderInputs] = {}
        self._renders_used: set[str] = set()
        self.incremental = Incremental()
        self.files = Files([])
        # What a dirty build leaves in site_dir, and what each file is (incremental.py).
        self.outputs: dict[str, str] = {}
        self.source_inputs: dict[str, str] = {}
        self.source_dests: dict[str, str] = {}
        self.nav_titles: dict[str, str] = {}

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Having this event keeps one plugin object for all of `mkdocs serve`'s rebuilds, with
        # its compile cache and what the last build wrote (`serve --dirty`, incremental.py).
        self.dirty = dirty
        if dirty:
            # MkDocs warns that a dirty build leaves navigation and links inaccurate; with the
            # plugin choosing the pages to build, it does not (and under --strict the warning
            # alone would fail every build).
            logging.getLogger("mkdocs.commands.build").addFilter(_exact_dirty_builds)

    # --- configuration ------------------------------------------------------------------------

    @reported
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        gc.unfreeze()  # the last build's objects, under `mkdocs serve`
        self.clock = BuildClock()
        self.clock.start("configure")
        config_file = Path(config.config_file_path)
        options = options_from_mapping(dict(self.config), config_file.name, lines_of(config_file))
        self.options = options  # checked; self.config keeps the values as written
        check_rule_names(options.rules, source=config_file.name)
        # The site does not use them, but a typo there should fail this build, not the next
        # `groundwiki serve`.
        settings = settings_from_mapping(
            self.config.sidecar, config_file.name, lines_of(config_file, "sidecar")
        )
        self.core_config = build_config(
            config_file.parent,
            config.docs_dir,
            options,
            config_file,
            config.use_directory_urls,
        )
        # Build state (timings, the compile cache) lives beside the sidecar's indexes.
        self.state_dir = self.core_config.root / settings.index_dir / "build"
        if options.build_cache and not self._compile_cache.pages.entries:
            self._compile_cache = load_build_cache(self.state_dir, self.core_config)
            self._loaded = _contents(self._compile_cache)
        # A change to mkdocs.yml may change every page: the next dirty rebuild is a full one.
        self.incremental.begin(self.dirty, text_hash(__version__, config_file.read_text("utf-8")))
        templates = Templates(config.theme.dirs)
        templates.check()  # a broken override stops the build here, before any page is built
        self.render_options = RenderOptions(
            backlinks=options.backlinks,
            sources=options.sources,
            local_graph=options.graph,
            raw_source_pages=options.raw_source_pages,
            markdown=MarkdownConverter(config.markdown_extensions, config.mdx_configs),
            # A site overrides groundwiki's templates as the theme's: in its custom_dir.
            templates=templates,
        )
        # Obsidian callouts are rendered as admonitions and, when they fold, as details.
        config.markdown_extensions.extend(missing_extensions(config.markdown_extensions))
        config.extra_css.append(CSS)
        if self.options.graph:
            for script in SCRIPTS:
                config.extra_javascript.append(script)
        self.compact = self._wants_compact_nav(config)
        if self.compact:
            config.nav = self._compact_nav()
        return config

    def _wants_compact_nav(self, config: MkDocsConfig) -> bool:
        if config.nav is not None or self.options.navigation == "full":
            return False  # an explicit nav is the writer's choice
        if self.options.navigation == "compact":
            return True
        # mkdocs-material renders the whole navigation into every page: past a few hundred
        # pages that costs more than the pages themselves.
        return len(discover_pages(self.core_config)) > self.options.compact_above

    def _compact_nav(self) -> list[Any]:
        docs = self.core_config.docs_dir
        nav: list[Any] = []
        # The site root is whichever home page the core picks: index.md, README.md or Home.md.
        top = (p.name for p in docs.iterdir() if p.is_file() and not p.name.startswith("."))
        root = home_pages(top).root
        if root is not None:
            nav.append({"Home": root})
        nav += [{"A–Z index": INDEX_PAGE}, {"Tags": TAGS_PAGE}]
        if self.options.graph:
            nav.append({"Graph": GRAPH_PAGE})
        nav.append({"Lint report": LINT_PAGE})
        for folder in sorted(
            # user/index.md is no one's page (scopes.py): never published, so never listed.
            p
            for p in docs.iterdir()
            if p.is_dir() and not p.name.startswith(".") and p.name != USER_DIR
        ):
            if (folder / "index.md").is_file():
                title = escape(folder.name.replace("-", " ").title())  # themes print it as HTML
                nav.append({title: f"{folder.name}/index.md"})
        return nav

    # --- one compile per build ----------------------------------------------------------------

    @reported
    def on_pre_build(self, config: MkDocsConfig) -> None:
        self.clock.start("compile")
        self.wiki = compile_wiki(self.core_config, files=self._compile_cache)
        findings = collect_findings(self.wiki)
        self.report = report_of(self.wiki, findings)
        # A site of the shared scope carries no user's findings (nor their pages, their paths).
        private = self.wiki.scoped and self.options.scopes == "global"
        self.site_report = shared_report(self.wiki, findings) if private else self.report
        self.graph = build_graph(self.wiki)
        self.backlinks = self.graph.backlinks()
        self.pages_by_doc = {page.doc_path: page for page in self.wiki.all_pages}
        # A user's page is rendered as that user sees the wiki, with their backlinks.
        self.user_backlinks: dict[str, dict[str, tuple[str, ...]]] = {}
        if self.options.scopes == "all":
            for user in self.wiki.users:
                self.user_backlinks[user] = build_graph(self.wiki.view(user)).backlinks()
                for page in self.wiki.user_pages[user]:
                    self.pages_by_doc[page.doc_path] = page
        for finding in self.report.findings:
            text = (
                f"{finding.path}:{finding.line}:{finding.column}: {finding.rule}: "
                f"{finding.message} ({finding.hint})"
            )
            # MkDocs' --strict fails on warnings: only lint errors are logged at that level.
            (log.warning if finding.severity == "error" else log.info)(text)
        if self.core_config.strict and self.report.failed(strict=True):
            counts = self.report.counts
            raise PluginError(
                f"groundwiki strict: {counts['error']} errors and {counts['warning']} warnings"
            )
        self.clock.start("mkdocs: collect files")

    @reported
    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        self.clock.start("generate pages")
        wiki, report = self._compiled()
        place_home_pages(files, config, wiki.layout)
        refused = set(wiki.refused)  # pages of no one's, directly under user/
        shared_only = wiki.scoped and self.options.scopes == "global"
        for file in [f for f in files if f.src_uri in refused]:
            files.remove(file)
        if shared_only:
            for file in [f for f in files if f.src_uri.startswith(USER_DIR + "/")]:
                files.remove(file)  # users' own pages and files stay theirs
        self._keep_out(files)
        home = home_pages(self.pages_by_doc)
        # The site root links to the other home pages: nothing else may reach them.
        self.home_links = (
            {home.root: home_links(wiki, home.root, home.others, wiki.layout)} if home.root else {}
        )
        layout = wiki.layout
        templates = self.render_options.templates
        published = self.site_report or report
        generated: dict[str, str] = {LINT_PAGE: lint_page(wiki, published, layout, templates)}
        if self.options.graph:
            generated[GRAPH_PAGE] = graph_page(layout, templates)
        self.slots = {}
        self.late_slots = {}
        for src_uri, listing in (
            (INDEX_PAGE, index_page(wiki, layout, templates)),
            (TAGS_PAGE, tags_page(wiki, layout, templates)),
        ):
            generated[src_uri] = listing.markdown
            self.slots[src_uri] = listing.slots
            self.late_slots[src_uri] = listing.late_slots
        self.source_pages = self._source_pages(wiki, files, config)
        for src_uri, content in generated.items():
            if files.get_file_from_path(src_uri) is not None:
                log.warning(f"groundwiki: {src_uri} exists in docs_dir; not generating it")
                continue
            # The generated overview pages may be navigated to; raw-source pages are reached
            # through citations, never listed.
            navigable = src_uri in {INDEX_PAGE, TAGS_PAGE, GRAPH_PAGE, LINT_PAGE}
            inclusion = InclusionLevel.UNDEFINED if navigable else InclusionLevel.NOT_IN_NAV
            files.append(File.generated(config, src_uri, content=content, inclusion=inclusion))
        for asset in sorted(ASSETS.rglob("*")):
            if asset.is_file() and asset.suffix in {".js", ".css", ".txt"}:  # licences too
                dest = f"{ASSETS_DIR}/{asset.relative_to(ASSETS).as_posix()}"
                files.append(File.generated(config, dest, abs_src_path=str(asset)))
        if self.compact:
            listed = {entry for item in config.nav or [] for entry in item.values()}
            for file in files.documentation_pages():
                if file.src_uri not in listed and file.inclusion.is_included():
                    file.inclusion = InclusionLevel.NOT_IN_NAV
        self._render_base = self._render_fingerprint()
        self._render_inputs = {}
        self._renders_used = set()
        self._choose_pages(files, generated)
        self.files = files
        self.clock.start("mkdocs: navigation")
        return files

    def _render_fingerprint(self) -> str | None:
        """What every page's render depends on besides the page's own inputs; None when it
        cannot be told (an extension object without a stable description): no render cache."""
        if not self.options.build_cache:
            return None
        converter = self.render_options.markdown.fingerprint()
        if converter is None:
            return None
        options = self.render_options
        flags = (options.backlinks, options.sources, options.local_graph, options.raw_source_pages)
        templates = options.templates.fingerprint()
        return text_hash(__version__, repr(flags), converter, templates)

    def _render(self, view: Wiki, ours: Page, backlinks: dict[str, tuple[str, ...]]) -> Rendered:
        """The page's Markdown, from the build cache when nothing it is made from changed."""
        base = self._render_base
        if base is None:
            return render_page(view, ours, view.layout, backlinks, self.render_options)
        key = text_hash(base, self._inputs_of(view, ours).of(ours, backlinks))
        self._renders_used.add(key)
        cached = self._compile_cache.renders.get(key)
        if cached is None:
            cached = render_page(view, ours, view.layout, backlinks, self.render_options)
            self._compile_cache.renders[key] = cached
        return cached

    def _inputs_of(self, view: Wiki, ours: Page) -> RenderInputs:
        """The render inputs of the view `ours` is rendered in, made once per build: the dirty
        rebuild's choice and the render cache share their hashed faces."""
        user = user_of(ours.scope)
        inputs = self._render_inputs.get(user)
        if inputs is None:
            inputs = self._render_inputs[user] = RenderInputs(view)
        return inputs

    def _choose_pages(self, files: Files, generated: dict[str, str]) -> None:
        """What each page's HTML is made from, so a dirty rebuild renders the changed ones."""
        wiki = self.wiki
        if not self.dirty or wiki is None:
            return
        inputs: dict[str, str] = {}
        self.nav_titles = {}
        for file in files.documentation_pages():
            src_uri = file.src_uri
            ours = self.pages_by_doc.get(src_uri)
            if src_uri in generated:
                late = self.late_slots.get(src_uri, {})
                slots = self.slots.get(src_uri, {})
                inputs[src_uri] = text_hash(
                    generated[src_uri], repr(sorted(slots.items())), repr(sorted(late.items()))
                )
                self.nav_titles[src_uri] = text_hash(*_title_lines(generated[src_uri]))
            elif src_uri in self.unpublished or ours is None:
                content = file.content_string if src_uri in self.unpublished else ""
                inputs[src_uri] = text_hash(
                    "notice" if ours else "other", content, str(file.abs_src_path)
                )
                if ours is None and file.abs_src_path:
                    inputs[src_uri] += str(os.stat(file.abs_src_path).st_mtime_ns)
                self.nav_titles[src_uri] = inputs[src_uri]
            else:
                user = user_of(ours.scope)
                backlinks = self.backlinks if user is None else self.user_backlinks[user]
                home = self.home_links.get(src_uri, "")
                view = self._inputs_of(wiki.view(user), ours)
                inputs[src_uri] = view.of(ours, backlinks, home)
                self.nav_titles[src_uri] = text_hash(ours.title)
        self.incremental.choose(files, inputs)

    def _source_pages(self, wiki: Wiki, files: Files, config: MkDocsConfig) -> SourcePages:
        """Built beside MkDocs' own pages (source_pages.py), so they are not added to `files`;
        the JSON artifacts and the redirects are written there too."""
        layout = wiki.layout
        by_doc: dict[str, str] = {}
        for path in wiki.sources if self.options.raw_source_pages else ():
            doc = layout.source_doc(path)
            if files.get_file_from_path(doc) is not None:
                log.warning(f"groundwiki: {doc} exists in docs_dir; not generating it")
            else:
                by_doc[doc] = path
        cited_by = self._cited_by(wiki)
        if self.dirty:  # what each raw-source page is made from (incremental.py)
            self.source_inputs = {
                doc: text_hash(
                    repr(
                        (source.content_hash, source.format, source.problem, wiki.policy.identity)
                    ),
                    repr(
                        [
                            (p.key, p.title, p.doc_path, c.start, c.end)
                            for p, c in cited_by.get(path, [])
                        ]
                    ),
                )
                for doc, path in by_doc.items()
                if (source := wiki.sources[path]) is not None
            }
            self.source_dests = {
                doc: File.generated(config, doc, content="").abs_dest_path for doc in by_doc
            }

        def render(doc: str) -> Rendered:
            source = wiki.sources[by_doc[doc]]
            cited = cited_by.get(source.path, [])
            chunks = wiki.chunks_of(source)
            lines = self.options.source_page_lines
            return render_source(source, chunks, cited, wiki.config.raw_prefix, layout, lines)

        report = self.site_report
        assert report is not None

        def artifacts() -> None:
            self._write_artifacts(config, files, wiki, report)

        def text(doc: str) -> FullText | None:
            return full_text(wiki.sources[by_doc[doc]], layout, self.options.source_page_lines)

        return SourcePages(
            list(by_doc), render, self.slots, self._compile_cache.chunks, artifacts, text
        )

    def _keep_out(self, files: Files) -> None:
        """MkDocs publishes every file under docs_dir, symlinks followed: a page the site cannot
        show gets a notice as its text (MkDocs never reads the file), and any other file that
        leads out of the folder or to nothing is left out."""
        self.unpublished = set()
        for file in [f for f in files if not utf8_name(f.src_uri)]:
            # MkDocs lists the folder itself; the core already left the file out and said so.
            files.remove(file)
        docs = self.core_config.docs_dir  # resolved; MkDocs keeps the path it was given
        ours_dirs = {
            d for d in {f.src_dir for f in files} if d and os.path.realpath(d) == str(docs)
        }
        on_disk = [f for f in files if f.abs_src_path and f.src_dir in ours_dirs]
        for file in on_disk:
            ours = self.pages_by_doc.get(file.src_uri)
            notice = unpublished_notice(ours) if ours is not None else None
            if notice is not None:
                file.content_string = notice
                self.unpublished.add(file.src_uri)
        paths = [
            path
            for f in on_disk
            if f.src_uri not in self.unpublished and (path := f.abs_src_path) is not None
        ]
        gone = outside_files(paths, docs) | {p for p in paths if not os.path.exists(p)}
        for file in on_disk:
            if file.abs_src_path in gone:
                where = self.core_config.rel(docs / file.src_uri)
                log.warning(
                    f"groundwiki: {where} leads outside the wiki folder through a symlink, "
                    "or to nothing; it is left out of the site (copy the file into the wiki "
                    "folder instead of linking to it)"
                )
                files.remove(file)

    def _cited_by(self, wiki: Wiki) -> dict[str, list[tuple[Page, Citation]]]:
        cited: dict[str, list[tuple[Page, Citation]]] = {}
        for page in sorted(wiki.pages.values(), key=lambda p: p.title.casefold()):
            for citation in page.citations:
                cited.setdefault(citation.source, []).append((page, citation))
        return cited

    # --- pages ----------------------------------------------------------------------------------

    @reported
    def on_page_markdown(
        self, markdown: str, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        # Themes print frontmatter (title, description, tags...) as HTML: give them text.
        page.meta = html_meta(dict(page.meta))
        ours = self.pages_by_doc.get(page.file.src_uri)
        if ours is None or self.wiki is None or page.file.src_uri in self.unpublished:
            return markdown  # a generated page, a notice, or a file outside the wiki
        user = user_of(ours.scope)
        seen_by = self.wiki.view(user)
        backlinks = self.backlinks if user is None else self.user_backlinks[user]
        began = time.perf_counter()
        try:
            rendered = self._render(seen_by, ours, backlinks)
        except GroundwikiError:
            raise  # the site's to fix (a footer override that fails): it names the file
        except Exception as error:  # a renderer bug on one page must not stop the site
            log.warning(
                f"groundwiki: {page.file.src_uri}: could not render its Obsidian syntax "
                f"({type(error).__name__}: {error}); the page is published as plain Markdown. "
                "Please report this with the page's text."
            )
            return markdown
        finally:
            self.clock.take("render wiki syntax", time.perf_counter() - began)
        self.slots[page.file.src_uri] = rendered.slots
        self.late_slots[page.file.src_uri] = rendered.late_slots
        return rendered.markdown + self.home_links.get(page.file.src_uri, "")

    def on_page_content(
        self, html: str, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        # A title MkDocs takes from a rendered `# heading` is HTML; one made from the file name
        # (no frontmatter title, no leading heading) is the file name as it is: text.
        if "title" not in page.meta and not getattr(page, "_title_from_render", None):
            # MkDocs capitalises a file name's first letter; the writer's capitalisation stands,
            # as in Obsidian (`iPhone notes`, `macOS`).
            ours = self.pages_by_doc.get(page.file.src_uri)
            page.meta["title"] = escape(ours.title if ours is not None else page.title or "")
        return fill_slots(html, self.slots.pop(page.file.src_uri, {}))

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        if config.nav is None:  # sections named after folders, by MkDocs
            _escape_section_titles(nav.items)
        self.nav = nav
        if self.dirty:
            self.incremental.check_navigation(nav, files, self.nav_titles)
        self.clock.start("mkdocs: markdown")
        return nav

    @event_priority(-100)
    def on_env(self, env: Any, config: MkDocsConfig, files: Files) -> Any:
        self.env, self.files = env, files
        if self.dirty and self.source_pages is not None and self.wiki is not None:
            incremental = self.incremental
            self.source_pages.docs = incremental.pick(self.source_inputs, self.source_dests)
            self.outputs = self._outputs(config, files, self.wiki)
            removed = incremental.remove_stale(self.outputs, config.site_dir)
            if removed:
                log.info(f"groundwiki: removed {len(removed)} pages gone since the last build")
        if self.source_pages is not None and self.nav is not None:
            self.clock.start("raw-source pages and artifacts")
            # A dirty build writes in this process, so the next one knows what is on disk.
            self.source_pages.start(config, files, self.nav, env, fork=not self.dirty)
        self.clock.start("mkdocs: assets and theme templates")
        return env

    # The earliest handler of a page's context starts the search plugin's share of the page,
    # the latest ends it; the latest post_page handler starts the writing of the file.
    @event_priority(100)
    def _context_first(self, context: TemplateContext, /, **_: Any) -> TemplateContext:
        self.clock.start("search plugin: pages")
        return context

    # Search plugins index a page in on_page_context; running after them keeps the late slots'
    # lists (tags, refs, backlinks, sources) out of any search index, and unparsed by it.
    @event_priority(-100)
    def _context_last(
        self,
        context: TemplateContext,
        /,
        *,
        page: MkDocsPage,
        config: MkDocsConfig,
        nav: Navigation,
    ) -> TemplateContext:
        late = self.late_slots.pop(page.file.src_uri, {})
        if late and page.content is not None:
            page.content = fill_slots(page.content, late)
        self.clock.start("mkdocs: theme templates")
        return context

    on_page_context = CombinedEvent(_context_first, _context_last)

    @event_priority(-100)
    def on_post_page(self, output: str, /, **_: Any) -> str:
        self.clock.start("mkdocs: writing pages")
        return output

    # --- artifacts --------------------------------------------------------------------------------

    @event_priority(100)
    def _post_build_first(self, config: MkDocsConfig) -> None:
        self.clock.start("other plugins: post-build")

    @reported
    def _post_build(self, config: MkDocsConfig) -> None:
        wiki, report = self._compiled()
        if self.source_pages is not None and self.nav is not None:
            self.clock.start("waiting for raw-source pages and artifacts")
            seconds = self.source_pages.finish(config, self.files, self.nav, self.env)
            self.clock.add("raw-source pages and artifacts (beside MkDocs)", seconds)
        else:  # MkDocs did not get as far as its theme (another plugin changed the build)
            self.clock.start("artifacts and redirects")
            self._write_artifacts(config, self.files, wiki, self.site_report or report)
        # A dirty rebuild under `mkdocs serve` keeps the cache in memory: the first build saved it.
        if self.options.build_cache and not self.incremental.active:
            self.clock.start("saving the build cache")
            cache = self._compile_cache
            cache.renders = {k: v for k, v in cache.renders.items() if k in self._renders_used}
            # A build that found everything in the cache it loaded leaves the file as it is.
            if _contents(cache) != self._loaded:
                save_build_cache(self.state_dir, self.core_config, cache)
                self._loaded = _contents(cache)
        self.clock.start("other plugins: post-build")
        errors = report.counts["error"]
        # MkDocs' --strict counts only the warnings its logger lets through: under -q none
        # reach it, and a wiki with broken links would pass. Fail it here instead.
        if config.strict and errors and not log.isEnabledFor(logging.WARNING):
            raise PluginError(
                f"groundwiki: {errors} lint error{'s' if errors != 1 else ''} in strict mode "
                "(run `groundwiki lint` to list them)"
            )

    @event_priority(-100)
    def _post_build_last(self, config: MkDocsConfig) -> None:
        if self.dirty:
            self.incremental.remember(self.files, self.outputs)
        self.clock.write(self.state_dir)
        # What the build made is alive until the process ends: moved out of the collector's
        # sight, exiting does not traverse it again (1 s of a 2,000-page build's teardown).
        # The next build of a server gives it back to the collector first (on_config).
        gc.freeze()

    on_post_build = CombinedEvent(_post_build_first, _post_build, _post_build_last)

    def _write_artifacts(
        self, config: MkDocsConfig, files: Files, wiki: Wiki, report: LintReport
    ) -> None:
        site = Path(config.site_dir)
        graph: dict[str, Any] = (
            graph_json(self.graph) if self.graph else {"version": 1, "nodes": [], "edges": []}
        )
        if not self.options.raw_source_pages:
            for node in graph["nodes"]:
                if node["type"] == "source":
                    node["url"] = None  # no page was built for it
        artifacts = {GRAPH_JSON: graph, LINT_JSON: report.to_json(), PAGES_JSON: pages_index(wiki)}
        for name, data in artifacts.items():
            target = site / name
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
            if self.incremental.needs_write(str(target), text):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        # MkDocs writes pages and files meanwhile: a redirect never takes a place one of them
        # will have (checked by name, not on disk, where it may not be yet).
        taken = {file.abs_dest_path for file in files}
        for target, text in self._redirects(site, wiki).items():
            if str(target) in taken or (
                target.exists() and str(target) not in self.incremental.written
            ):
                continue
            if self.incremental.needs_write(str(target), text):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

    def _redirects(self, site: Path, wiki: Wiki) -> dict[Path, str]:
        if not self.options.redirects:
            return {}
        return {site / redirect_file(r): redirect_html(r) for r in redirects(wiki)}

    def _outputs(self, config: MkDocsConfig, files: Files, wiki: Wiki) -> dict[str, str]:
        """Every file this build leaves in site_dir that the plugin answers for, with what it
        is: the pages, the raw-source pages, the redirects and the artifacts."""
        site = Path(config.site_dir)
        found = {str(path): "redirect" for path in self._redirects(site, wiki)}
        found |= {str(site / name): "artifact" for name in (GRAPH_JSON, LINT_JSON, PAGES_JSON)}
        found |= {path: "page" for path in self.source_dests.values()}
        found |= {file.abs_dest_path: "page" for file in files.documentation_pages()}
        return found

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # raw-sources/ and the lock sit outside docs_dir, so MkDocs would not notice their edits.
        for path in (self.core_config.raw_dir, self.core_config.lock_path):
            if path.exists():
                server.watch(str(path))
        return server

    def _compiled(self) -> tuple[Wiki, LintReport]:
        if self.wiki is None or self.report is None:
            raise PluginError("groundwiki: the wiki was not compiled (on_pre_build did not run)")
        return self.wiki, self.report


def _escape_section_titles(items: list[Any]) -> None:
    for item in items:
        if isinstance(item, Section):
            item.title = escape(item.title)
            _escape_section_titles(item.children)


def _title_lines(markdown: str) -> list[str]:
    """The lines a generated page's title comes from (frontmatter title, first heading): all a
    navigation shows of it."""
    found = [line for line in markdown.splitlines() if line.startswith(("title:", "# "))]
    return found[:2]


def _exact_dirty_builds(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("A 'dirty' build is being performed")


def _contents(cache: CompileCache) -> tuple[frozenset[int], int, frozenset[str]]:
    """What a build cache holds, cheaply: its page and source objects (a re-read file is a new
    object), the number of chunked sources and the render keys."""
    held = frozenset(
        id(value)
        for stamped in (cache.pages, cache.sources)
        for _, value in stamped.entries.values()
    )
    return held, len(cache.chunks), frozenset(cache.renders)
