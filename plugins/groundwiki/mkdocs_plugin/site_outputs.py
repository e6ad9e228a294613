"""What the plugin writes into site_dir beside MkDocs' pages: the JSON artifacts (graph, lint
report, page index, the explorer's folder tree) and the alias redirects; and the list of every
file it answers for there, which a dirty rebuild compares with the last one to remove what is
gone."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import Files

from groundwiki.core.config.wiki_config import Options
from groundwiki.core.lint import LintReport
from groundwiki.core.model.site_paths import (
    ASSETS_DIR,
    EXPLORER_JSON,
    GRAPH_JSON,
    LINT_JSON,
    LOCAL_GRAPHS,
    PAGES_JSON,
)
from groundwiki.core.render.artifacts import dumps
from groundwiki.core.render.explorer import ExplorerText
from groundwiki.core.render.redirects import redirect_file, redirect_html, redirects
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.graph import Graph
from groundwiki.mkdocs_plugin.incremental import Incremental


def write_artifacts(
    site: Path,
    files: Files,
    wiki: Wiki,
    graph: Graph,
    report: LintReport,
    options: Options,
    incremental: Incremental,
) -> None:
    """The artifacts and the redirects, each written unless this server wrote the same text
    there last time."""
    texts = incremental.artifacts
    artifacts = {
        # Without raw-source pages, a source node has no URL: no page was built for it.
        GRAPH_JSON: texts.graph(graph, options.raw_source_pages),
        LINT_JSON: dumps(report.to_json()),
        PAGES_JSON: texts.index(wiki),
        # The shared pages MkDocs publishes: what a symlink or a scope left out is not listed.
        EXPLORER_JSON: _explorer.text(wiki, {f.src_uri for f in files.documentation_pages()}),
    }
    if options.graph:
        artifacts |= texts.local_graphs(graph, options.raw_source_pages)
    for name, content in artifacts.items():
        target = site / name
        if incremental.needs_write(str(target), content):  # the text before its newline
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content + "\n", encoding="utf-8")
    _remove_other_shards(site / LOCAL_GRAPHS, artifacts)
    # MkDocs writes pages and files meanwhile: a redirect never takes a place one of them
    # will have (checked by name, not on disk, where it may not be yet).
    taken = {file.abs_dest_path for file in files}
    for target, text in redirect_pages(site, wiki, options).items():
        where = str(target)
        if where in taken or (where not in incremental.written and target.exists()):
            continue
        if incremental.needs_write(where, text):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def _remove_other_shards(folder: Path, written: dict[str, str]) -> None:
    """A shard whose every page is gone (or all of them, with the graph turned off) leaves the
    site, as a build from scratch would not have it: at most 256 names to look at."""
    if not folder.is_dir():
        return
    for path in folder.glob("*.json"):
        if f"{LOCAL_GRAPHS}/{path.name}" not in written:
            path.unlink(missing_ok=True)


def redirect_pages(site: Path, wiki: Wiki, options: Options) -> dict[Path, str]:
    """Each alias redirect's file in the site, with its HTML (none when redirects are off)."""
    if not options.redirects:
        return {}
    made = redirects(wiki)
    kept = wiki.derived.get(_PAGES)
    if kept is None:
        last = wiki.kept_for(_PAGES)
        kept = last[0] if last is not None else None
    if kept is not None and kept[0] is made and kept[1] == site:
        pages = kept[2]
    else:
        pages = {site / redirect_file(r): redirect_html(r) for r in made}
    wiki.derived[_PAGES] = (made, site, pages)
    return pages


# The redirect files of a compile's redirects, kept while the redirects are the same.
_PAGES = "redirect pages"
# The explorer's text, kept across the rebuilds of the server in this process.
_explorer = ExplorerText()


def site_outputs(
    site: Path, files: Files, wiki: Wiki, options: Options, source_dests: dict[str, str]
) -> dict[str, str]:
    """Every file this build leaves in site_dir that the plugin answers for, with what it
    is: the pages, the raw-source pages, the redirects, the artifacts and the plugin's assets
    (mermaid's and KaTeX's go with the last diagram or formula)."""
    found = {str(path): "redirect" for path in redirect_pages(site, wiki, options)}
    assets = f"{ASSETS_DIR}/"
    found |= {file.abs_dest_path: "asset" for file in files if file.dest_uri.startswith(assets)}
    artifacts = (GRAPH_JSON, LINT_JSON, PAGES_JSON, EXPLORER_JSON)
    found |= {str(site / name): "artifact" for name in artifacts}
    found |= {path: "page" for path in source_dests.values()}
    found |= {file.abs_dest_path: "page" for file in files.documentation_pages()}
    return found
