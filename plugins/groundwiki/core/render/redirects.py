"""Redirect pages: each alias (a former key, another name) keeps a URL that leads to the page."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from html import escape

from groundwiki.core.model.site_paths import relative_url
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.dependencies import same_facts


@dataclass(frozen=True)
class Redirect:
    url: str  # where the redirect page is written, relative to the site root
    target: str  # the page's URL, relative to the site root


def redirects(wiki: Wiki) -> tuple[Redirect, ...]:
    """An alias becomes a page name beside the page's file; names a real page holds are skipped.
    Made once per compile, and kept from the last one when no page file came, went or changed
    its aliases."""
    found = wiki.derived.get(_DERIVED)
    if found is None:
        kept = wiki.kept_for(_DERIVED)
        found = kept[0] if kept is not None and _same_aliases(wiki) else _redirects(wiki)
        if wiki.user is None:
            wiki.derived[_DERIVED] = found
    return found


_DERIVED = "redirects"


def _same_aliases(wiki: Wiki) -> bool:
    previous = wiki.previous
    if previous is None or wiki.config.redirects_from_git or previous.layout != wiki.layout:
        return False
    if [p.doc_path for p in previous.all_pages] != [p.doc_path for p in wiki.all_pages]:
        return False
    return same_facts(previous.pages, wiki.pages, lambda page: (page.doc_path, page.aliases))


def _redirects(wiki: Wiki) -> tuple[Redirect, ...]:
    layout = wiki.layout
    taken = {layout.url(page.doc_path) for page in wiki.all_pages}
    found: dict[str, Redirect] = {}
    for page in sorted(wiki.pages.values(), key=lambda p: p.rel_path):
        folder = posixpath.dirname(page.doc_path)
        for alias in page.aliases:
            name = alias.strip().lower().replace(" ", "-").strip("/")
            if not name or "/" in name or name.startswith("."):
                continue
            url = layout.url(posixpath.join(folder, f"{name}.md"))
            if url not in taken and url not in found:
                found[url] = Redirect(url, layout.url(page.doc_path))
    # Former paths from git history (`redirects_from_git`), where no page or alias stands.
    for old, page in wiki.renamed_from.items():
        url = layout.url(old)
        if url not in taken and url not in found:
            found[url] = Redirect(url, layout.url(page.doc_path))
    return tuple(found[url] for url in sorted(found))


def redirect_html(redirect: Redirect) -> str:
    target = relative_url(redirect.url, redirect.target)
    href = escape(target)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<title>Redirecting…</title>\n<link rel="canonical" href="{href}">\n'
        f'<meta http-equiv="refresh" content="0; url={href}">\n'
        f"<script>location.replace({_script_string(target)} + location.hash)</script>\n"
        f'</head><body><p>This page moved to <a href="{href}">{href}</a>.</p></body></html>\n'
    )


def _script_string(text: str) -> str:
    """A JavaScript string literal that is also inert inside an HTML <script> element, where
    entities are not decoded (so HTML escaping would change the URL) but `</script>` ends it."""
    quoted = json.dumps(text)
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        quoted = quoted.replace(char, code)
    return quoted  # json.dumps writes U+2028 and U+2029 as escapes already


def redirect_file(redirect: Redirect) -> str:
    """The file to write in the site folder for a redirect URL."""
    if redirect.url.endswith("/") or not redirect.url:
        return posixpath.join(redirect.url, "index.html")
    return redirect.url
