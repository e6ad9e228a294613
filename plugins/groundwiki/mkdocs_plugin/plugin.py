"""MkDocs events for groundwiki, and the wiring of the collaborators they call: the compile
(`compiled_site`), the file list (`site_files`, `home`), the navigation (`navigation`), the
render cache (`render_cache`), the raw-source pages (`source_pages`), the artifacts and redirects
(`site_outputs`), dirty rebuilds (`incremental`) and the build's timings (`phases`). Every
decision is the core's; this file only wires it in."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page as MkDocsPage
from mkdocs.utils.templates import TemplateContext

from groundwiki import __version__
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.render.body.slots import fill_slots
from groundwiki.core.render.body.text import html_meta
from groundwiki.core.render.generated import Listings
from groundwiki.core.render.needs import WikiNeeds
from groundwiki.core.wiki.collector import Collector
from groundwiki.mkdocs_plugin.compiled_site import (
    CompiledSite,
    compile_site,
    fail_quiet_strict,
    log_findings,
)
from groundwiki.mkdocs_plugin.home import home_page_links, place_home_pages
from groundwiki.mkdocs_plugin.incremental import (
    SITEMAP,
    Incremental,
    KeptSitemap,
    exact_dirty_builds,
    keep_search_json,
    text_hash,
)
from groundwiki.mkdocs_plugin.navigation import SiteNavigation, give_text_title
from groundwiki.mkdocs_plugin.page_inputs import PageInputs
from groundwiki.mkdocs_plugin.page_objects import PageObjects
from groundwiki.mkdocs_plugin.phases import BuildClock
from groundwiki.mkdocs_plugin.plugin_options import GroundwikiConfig, checked_settings
from groundwiki.mkdocs_plugin.render_cache import RenderCache, render_options
from groundwiki.mkdocs_plugin.serve_watcher import ChangeLog, use_file_events
from groundwiki.mkdocs_plugin.site_files import (
    FileListing,
    add_asset_files,
    add_generated,
    generated_pages,
    leave_out,
    use_assets,
    use_explorer,
    use_rendering,
)
from groundwiki.mkdocs_plugin.site_outputs import site_outputs, write_artifacts
from groundwiki.mkdocs_plugin.site_search import (
    PagefindIndexer,
    empty_material_index,
    marked_body,
    skip_material_indexing,
    unindexed,
    use_search_assets,
    uses_pagefind,
)
from groundwiki.mkdocs_plugin.source_inputs import SourceInputs
from groundwiki.mkdocs_plugin.source_pages import SourcePages, source_pages
from groundwiki.mkdocs_plugin.theme_cache import MemoryBytecodeCache

log = logging.getLogger("mkdocs.plugins.groundwiki")
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
        self.site: CompiledSite | None = None  # this build's compile
        # Survives rebuilds under `mkdocs serve`: a rebuild reads only the files that changed.
        self.cache = RenderCache()
        self.clock = BuildClock()
        self.navigation = SiteNavigation()
        self.dirty = False
        self.incremental = Incremental()
        self.page_inputs = PageInputs()  # each page's render inputs, by difference (serve)
        self.source_inputs = SourceInputs()  # the raw-source pages' citing pages (serve)
        self.page_objects = PageObjects()  # MkDocs' pages not built, from the last build's
        self.docs: Sequence[File] = []  # this build's page files (a dirty build's)
        self.collector = Collector()
        self.changes = ChangeLog()  # what the file events named, under `mkdocs serve`
        self.serving = False  # under `mkdocs serve` (on_startup)
        self.listings = Listings()  # the A–Z and tags pages, kept across a server's rebuilds
        self.slots: dict[str, dict[str, str]] = {}  # src_uri -> HTML filled in after Markdown
        self.late_slots: dict[str, dict[str, str]] = {}  # src_uri -> HTML filled after search
        self.unpublished: set[str] = set()  # src_uris shown as a notice instead of their text
        self.home_links: dict[str, str] = {}  # src_uri -> Markdown the site root ends with
        self.source_pages: SourcePages | None = None
        self.files = Files([])
        self.env: Any = None
        self.outputs: dict[str, str] = {}  # what a dirty build leaves in site_dir (incremental.py)
        self.settings = ""  # the hash of what every page depends on: the version, mkdocs.yml
        self.compiled_templates = MemoryBytecodeCache()  # across a server's rebuilds
        self.file_list = FileListing()  # MkDocs' list of files, kept across a server's rebuilds
        self.sitemap = KeptSitemap()  # MkDocs' sitemap.xml, kept while its pages are the same
        self.needs = WikiNeeds()  # mermaid and math, per page, across a server's rebuilds
        self.pagefind = PagefindIndexer()  # site search (site_search.py)
        self.uses_pagefind = False  # this build's site search is Pagefind's

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Having this event keeps one plugin object for all of `mkdocs serve`'s rebuilds, with
        # its compile cache and what the last build wrote (`serve --dirty`, incremental.py).
        self.dirty = dirty
        self.serving = command == "serve"
        if dirty:
            exact_dirty_builds()
        if dirty and self.serving:
            self.file_list.install()
            keep_search_json()

    # Before every other plugin's: the search plugin renders a template in its on_config.
    @event_priority(100)
    def _config_first(self, config: MkDocsConfig) -> None:
        self.collector.build_starts(self.serving)
        self.clock = BuildClock()
        self.clock.start("configure")
        self.env = None  # this build's, once MkDocs made it (on_env)
        self.file_list.reuse = False  # until on_pre_build knows what changed
        written = Path(config.config_file_path).read_text("utf-8")
        self.settings = text_hash(__version__, written)
        if self.serving:
            self.compiled_templates.serve(config.theme, self.settings)

    @reported
    def _config(self, config: MkDocsConfig) -> MkDocsConfig:
        options, self.core_config, self.state_dir = checked_settings(
            self.config, config, previews_drafts=self.serving
        )
        self.options = options
        self.cache.configure(self.core_config)
        if options.build_cache:
            self.cache.load(self.state_dir, self.core_config)
        # A change to mkdocs.yml may change every page: the next dirty rebuild is a full one.
        self.incremental.begin(self.dirty, self.settings)
        self.render_options = render_options(config, options)
        use_assets(config, options.graph)
        return config

    on_config = CombinedEvent(_config_first, _config)

    @reported
    def on_pre_build(self, config: MkDocsConfig) -> None:
        self.clock.start("compile")
        changed = self.changes.take() if self.serving else None
        if self.dirty and self.serving:
            self.file_list.plan(config, self.settings, changed)
        self.site = compile_site(self.core_config, self.options.scopes, self.cache.compile, changed)
        log_findings(self.site, self.core_config.strict, self.options.log_per_rule)
        # After the compile, whose walk (or a server's file events) counted the page files.
        scan = self.cache.compile.scan
        counted = len(scan[0]) if scan is not None else None
        self.navigation.configure(config, self.options, self.core_config, counted)
        use_explorer(config, self.navigation.compact)  # the folder tree beside a short nav
        use_rendering(config, self.needs.of(self.site.pages_by_doc.values()))  # offline
        self.incremental.everything = self.needs.changed  # every page loads them, or did
        self.uses_pagefind = uses_pagefind(self.options.site_search, len(self.site.pages_by_doc))
        if self.uses_pagefind:
            use_search_assets(config)
            skip_material_indexing(config)
        self.clock.start("mkdocs: collect files")

    @reported
    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        self.clock.start("generate pages")
        site = self._site()
        wiki, options = site.wiki, self.options
        place_home_pages(files, config, wiki.layout)
        self.unpublished = leave_out(
            files, wiki, site.pages_by_doc, options.scopes, self.core_config, self.file_list
        )
        # The site root links to the other home pages: nothing else may reach them.
        self.home_links = home_page_links(wiki, site.pages_by_doc)
        templates = self.render_options.templates
        generated = generated_pages(
            wiki,
            site.site_report,
            templates,
            options.graph,
            self.listings,
            options.show_derived_summaries,
            options.page_bytes,
            options.graph_nodes,
        )
        self.slots = {src: page.slots for src, page in generated.items()}
        self.late_slots = {src: page.late_slots for src, page in generated.items()}
        # Built beside MkDocs' own pages, so not added to `files`; the artifacts after them.
        self.source_pages = source_pages(
            wiki,
            files,
            config,
            options,
            slots=self.slots,
            chunks=self.cache.compile.chunks,
            after=functools.partial(self._write_artifacts, config, files),
            dirty=self.dirty,
            kept=self.source_inputs if self.serving else None,
        )
        add_generated(files, config, generated)
        add_asset_files(files, config)
        self.navigation.hide_unlisted(files, config)
        self.cache.begin(self.render_options, options.build_cache)
        if self.dirty:  # what each page's HTML is made from: a rebuild renders the changed ones
            docs = files.documentation_pages()
            found = self.page_inputs.of(
                docs,
                site,
                generated,
                self.unpublished,
                self.home_links,
                self.cache.inputs_of,
                self.cache.input_memo,
            )
            self.incremental.choose(docs, *found)
            self.page_objects.give(docs, self.incremental.changed, self.settings)
            self.docs = docs
        self.files = files
        self.clock.start("mkdocs: navigation")
        return files

    @reported
    def on_page_markdown(
        self, markdown: str, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        # Themes print frontmatter (title, description, tags...) as HTML: give them text.
        page.meta = html_meta(dict(page.meta))
        site, src_uri = self.site, page.file.src_uri
        ours = site.pages_by_doc.get(src_uri) if site is not None else None
        if ours is None or site is None or src_uri in self.unpublished:
            return markdown  # a generated page, a notice, or a file outside the wiki
        began = time.perf_counter()
        rendered = self.cache.render_page(site, ours, self.render_options)
        self.clock.take("render wiki syntax", time.perf_counter() - began)
        if rendered is None:
            return markdown  # the renderer failed on it (logged): published as it is
        self.slots[src_uri] = rendered.slots
        self.late_slots[src_uri] = rendered.late_slots
        return rendered.markdown + self.home_links.get(src_uri, "")

    def on_page_content(
        self, html: str, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        ours = self.site.pages_by_doc.get(page.file.src_uri) if self.site is not None else None
        give_text_title(page, ours)
        return fill_slots(html, self.slots.pop(page.file.src_uri, {}))

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        self.navigation.made(nav, config)
        if self.dirty:
            self.incremental.check_navigation(nav, files)
            self.page_objects.keep(self.docs, nav)
        self.clock.start("mkdocs: markdown")
        return nav

    @event_priority(-100)
    def on_env(self, env: Any, config: MkDocsConfig, files: Files) -> Any:
        self.env, self.files = env, files
        pages, nav = self.source_pages, self.navigation.nav
        if self.dirty and pages is not None and self.site is not None:
            pages.docs = self.incremental.pick(pages.inputs, pages.dests)
            site = Path(config.site_dir)
            self.outputs = site_outputs(site, files, self.site.wiki, self.options, pages.dests)
            removed = self.incremental.remove_stale(self.outputs, config.site_dir)
            if removed:
                log.info(f"groundwiki: removed {len(removed)} pages gone since the last build")
        # A dirty build writes in this process, so the next one knows what is on disk; it
        # writes after MkDocs' pages (_post_build_first), which the writer waits for.
        if pages is not None and nav is not None and not self.dirty:
            self.clock.start("raw-source pages and artifacts")
            pages.start(config, files, nav, env, fork=True)
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
        src_uri = page.file.src_uri
        late = self.late_slots.pop(src_uri, {})
        if self.uses_pagefind and page.content is not None:
            late = unindexed(late)
            ours = self.site.pages_by_doc.get(src_uri) if self.site is not None else None
            if ours is not None and src_uri not in self.unpublished:
                page.content = marked_body(page.content, ours, ours.title)
        if late and page.content is not None:
            page.content = fill_slots(page.content, late)
        self.clock.start("mkdocs: theme templates")
        return context

    on_page_context = CombinedEvent(_context_first, _context_last)

    def on_pre_template(self, template: Any, /, *, template_name: str, **_: Any) -> Any:
        if self.dirty and self.serving and template_name == SITEMAP:
            return self.sitemap.template(template)
        return template

    @event_priority(-100)
    def on_post_page(self, output: str, /, **_: Any) -> str:
        self.clock.start("mkdocs: writing pages")
        return output

    # Before the search plugin writes its index: what is built here is in no index.
    @event_priority(100)
    def _post_build_first(self, config: MkDocsConfig) -> None:
        pages, nav = self.source_pages, self.navigation.nav
        if self.dirty and pages is not None and nav is not None and self.env is not None:
            self.clock.start("raw-source pages and artifacts")
            pages.start(config, self.files, nav, self.env, fork=False)
        self.clock.start("other plugins: post-build")

    @reported
    def _post_build(self, config: MkDocsConfig) -> None:
        site = self._site()
        pages, nav = self.source_pages, self.navigation.nav
        if pages is not None and nav is not None:
            self.clock.start("waiting for raw-source pages and artifacts")
            seconds = pages.finish(config, self.files, nav, self.env)
            self.clock.add("raw-source pages and artifacts (beside MkDocs)", seconds)
        else:  # MkDocs did not get as far as its theme (another plugin changed the build)
            self.clock.start("artifacts and redirects")
            self._write_artifacts(config, self.files)
        # A dirty rebuild under `mkdocs serve` keeps the cache in memory: the first build saved it.
        if self.options.build_cache and not self.incremental.active:
            self.clock.start("saving the build cache")
            self.cache.save(self.state_dir, self.core_config)
        self.clock.start("other plugins: post-build")
        fail_quiet_strict(site.report, config.strict)

    @event_priority(-100)
    def _post_build_last(self, config: MkDocsConfig) -> None:
        if self.uses_pagefind:
            self._index_for_search(config)
        if self.dirty:
            self.incremental.remember(self.files, self.outputs)
        if self.dirty and self.serving and self.site is not None:
            # The next compile takes these over: unless this one made them, the first edit
            # after a server's first build made them for the whole wiki (the reverse index of
            # dependencies alone, 1 s at 10,001 pages). A rebuild's compile made them already.
            self.site.wiki.settle()
        self.clock.write(self.state_dir)
        # What the build made is alive until the process ends or the server is idle: moved out
        # of the collector's sight (collector.py).
        self.collector.build_ends(self.serving)

    on_post_build = CombinedEvent(_post_build_first, _post_build, _post_build_last)

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # raw-sources/ and the lock sit outside docs_dir, so MkDocs would not notice their edits.
        for path in (self.core_config.raw_dir, self.core_config.lock_path):
            if path.exists():
                server.watch(str(path))
        if use_file_events(server, self.changes):
            self.changes.start()
        return server

    def _index_for_search(self, config: MkDocsConfig) -> None:
        """Pagefind over the written site; material's index emptied (site_search.py). Under
        `mkdocs serve` in a background thread: the rebuild is served without waiting for it."""
        self.clock.start("site search: Pagefind")
        site_dir = Path(config.site_dir)
        empty_material_index(site_dir)
        self.pagefind.glob = "**/index.html" if config.use_directory_urls else None
        if self.serving:
            self.pagefind.index_later(site_dir)
        else:
            self.pagefind.index(site_dir)
        self.clock.start("other plugins: post-build")

    def _write_artifacts(self, config: MkDocsConfig, files: Files) -> None:
        site = self._site()
        report = site.site_report  # what the site's readers may read
        where = Path(config.site_dir)
        write_artifacts(where, files, site.wiki, site.graph, report, self.options, self.incremental)

    def _site(self) -> CompiledSite:
        if self.site is None:
            raise PluginError("groundwiki: the wiki was not compiled (on_pre_build did not run)")
        return self.site
