"""The wiki's pages rendered, and what a build reuses from the last one: the compile cache (what
was parsed, chunked and rendered, loaded from the build cache file and saved back when it
changed) and, through it, each page's rendered Markdown, reused while nothing it is made from
changed."""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig

from groundwiki import __version__
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import Config, Options
from groundwiki.core.model.records import Page
from groundwiki.core.model.scopes import user_of
from groundwiki.core.render.body.convert import MarkdownConverter, site_extensions
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.render.inputs import InputMemo, RenderInputs
from groundwiki.core.render.page import RenderOptions, render_page
from groundwiki.core.render.templates import Templates
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import CompileCache
from groundwiki.mkdocs_plugin.build_cache import load_build_cache, save_build_cache
from groundwiki.mkdocs_plugin.compiled_site import CompiledSite
from groundwiki.mkdocs_plugin.incremental import text_hash

log = logging.getLogger("mkdocs.plugins.groundwiki")


def render_options(config: MkDocsConfig, options: Options) -> RenderOptions:
    """How the site renders its pages: its options, its Markdown extensions (given those the
    rendering needs) and its templates, checked."""
    templates = Templates(config.theme.dirs)
    templates.check()  # a broken override stops the build here, before any page is built
    made = RenderOptions(
        backlinks=options.backlinks,
        sources=options.sources,
        local_graph=options.graph,
        raw_source_pages=options.raw_source_pages,
        derived_summaries=options.show_derived_summaries,
        markdown=MarkdownConverter(config.markdown_extensions, config.mdx_configs),
        # A site overrides groundwiki's templates as the theme's: in its custom_dir.
        templates=templates,
    )
    # Obsidian callouts are rendered as admonitions and, when they fold, as details; the code
    # in them and ```mermaid fences need superfences.
    site_extensions(config.markdown_extensions, config.mdx_configs)
    return made


class RenderCache:
    """The compile cache of this plugin (it survives rebuilds under `mkdocs serve`: a rebuild
    reads only the files that changed) and the render cache of the build running."""

    def __init__(self) -> None:
        self.compile = CompileCache()
        self._loaded: tuple[frozenset[int], int, frozenset[str]] | None = None  # see _contents
        # This build's: the key every render's key starts from (None: no render cache), the
        # render inputs of each view, the keys used.
        self._base: str | None = None
        self._inputs: dict[str | None, RenderInputs] = {}
        self._used: set[str] = set()
        self.input_memo = InputMemo()  # the shared view's, across the rebuilds of a server
        self._reading: str | None = None  # `Config.reading` of the pages in `compile`

    def configure(self, config: Config) -> None:
        """A build's configuration: pages this server parsed under other reading options (an
        edit of `title_from` in mkdocs.yml) are read again."""
        if self._reading != config.reading:
            self.compile, self._reading = CompileCache(), config.reading

    def load(self, state_dir: Path, config: Config) -> None:
        """The build cache file, unless this server's compile cache holds a build already."""
        if not self.compile.pages.entries:
            self.compile = load_build_cache(state_dir, config)
            self._loaded = _contents(self.compile)

    def begin(self, options: RenderOptions, enabled: bool) -> None:
        """A build's renders start: `enabled` is the site's build_cache option."""
        self._base = _fingerprint(options) if enabled else None
        self._inputs = {}
        self._used = set()

    def render_page(
        self, site: CompiledSite, ours: Page, options: RenderOptions
    ) -> Rendered | None:
        """The page's Markdown as its owner's view of the wiki shows it; None (logged) when the
        renderer failed on it: a renderer bug on one page must not stop the site."""
        view, backlinks = site.view_of(ours), site.backlinks_of(ours)
        try:
            return self._render(view, ours, backlinks, options)
        except GroundwikiError:
            raise  # the site's to fix (a footer override that fails): it names the file
        except Exception as error:
            log.warning(
                f"groundwiki: {ours.doc_path}: could not render its Obsidian syntax "
                f"({type(error).__name__}: {error}); the page is published as plain Markdown. "
                "Please report this with the page's text."
            )
            return None

    def _render(
        self,
        view: Wiki,
        ours: Page,
        backlinks: dict[str, tuple[str, ...]],
        options: RenderOptions,
    ) -> Rendered:
        """The page's Markdown, from the build cache when nothing it is made from changed."""
        base = self._base
        if base is None:
            return render_page(view, ours, view.layout, backlinks, options)
        key = text_hash(base, self.inputs_of(view, ours).of(ours, backlinks))
        self._used.add(key)
        cached = self.compile.renders.get(key)
        if cached is None:
            cached = render_page(view, ours, view.layout, backlinks, options)
            self.compile.renders[key] = cached
        return cached

    def inputs_of(self, view: Wiki, ours: Page) -> RenderInputs:
        """The render inputs of the view `ours` is rendered in, made once per build: the dirty
        rebuild's choice and the render cache share their hashed faces."""
        user = user_of(ours.scope)
        inputs = self._inputs.get(user)
        if inputs is None:
            memo = self.input_memo if user is None else None
            inputs = self._inputs[user] = RenderInputs(view, memo)
        return inputs

    def save(self, state_dir: Path, config: Config) -> None:
        """The build cache file, with the renders this build used, when its content changed."""
        cache = self.compile
        cache.renders = {k: v for k, v in cache.renders.items() if k in self._used}
        # A build that found everything in the cache it loaded leaves the file as it is.
        if _contents(cache) != self._loaded:
            save_build_cache(state_dir, config, cache)
            self._loaded = _contents(cache)


def _fingerprint(options: RenderOptions) -> str | None:
    """What every page's render depends on besides the page's own inputs; None when it cannot
    be told (an extension object without a stable description): no render cache."""
    converter = options.markdown.fingerprint()
    if converter is None:
        return None
    flags = (
        options.backlinks,
        options.sources,
        options.local_graph,
        options.raw_source_pages,
        options.derived_summaries,
    )
    templates = options.templates.fingerprint()
    return text_hash(__version__, repr(flags), converter, templates)


def _contents(cache: CompileCache) -> tuple[frozenset[int], int, frozenset[str]]:
    """What a build cache holds, cheaply: its page and source objects (a re-read file is a new
    object), the number of chunked sources and the render keys."""
    held = frozenset(
        id(value)
        for stamped in (cache.pages, cache.sources)
        for _, value in stamped.entries.values()
    )
    return held, len(cache.chunks), frozenset(cache.renders)
