"""Which pages cite each raw source, and what each raw-source page is made from, kept across
a server's rebuilds and updated for the pages and sources an edit changed.

A raw source's page lists the pages citing it, by title. Listing them for all 2,000 sources of
a 10,000-page wiki (every page's citations, every page sorted by title) and hashing each
source page's inputs took half a second per rebuild; an edit changes one page or source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File

from groundwiki.core.model.records import Citation, Page, Source
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.mkdocs_plugin.incremental import text_hash

Cited = list[tuple[Page, Citation]]


@dataclass
class SourceInputs:
    wiki: Wiki | None = None  # the compile `citing` and `hashes` were made from
    citing: dict[str, set[str]] = field(default_factory=dict)  # source path -> page keys
    lists: dict[str, Cited] = field(default_factory=dict)  # source path -> its citing pages
    hashes: dict[str, tuple[Source, str]] = field(default_factory=dict)  # source path ->
    policy: object = None
    dests: dict[tuple[str, str, bool], str] = field(default_factory=dict)  # see `dest`
    _order: dict[str, int] | None = None

    def update(self, wiki: Wiki) -> None:
        """Follow `wiki`: from the last compile's index when `wiki` follows it, else anew."""
        last, self._order = self.wiki, None
        # A compile that cannot tell its stale pages (other settings, a scoped wiki) is not
        # followed: its pages may hold other citations for the same objects' files.
        if last is None or wiki.previous is not last or wiki.stale is None:
            self.citing, self.lists, self.hashes = {}, {}, {}
            for key, page in wiki.pages.items():
                for citation in page.citations:
                    self.citing.setdefault(citation.source, set()).add(key)
        else:
            before, now = last.pages, wiki.pages
            changed = {key for key, page in now.items() if before.get(key) is not page}
            changed.update(before.keys() - now.keys())
            for key in changed:
                for citation in before[key].citations if key in before else ():
                    self._touch(citation.source).discard(key)
                for citation in now[key].citations if key in now else ():
                    self._touch(citation.source).add(key)
        self.wiki, self.policy = wiki, wiki.policy.identity

    def _touch(self, source: str) -> set[str]:
        self.lists.pop(source, None)
        self.hashes.pop(source, None)
        return self.citing.setdefault(source, set())

    def cited(self, source: str) -> Cited:
        """The pages citing `source`, each with its citations of it in its order, the pages
        by title (a tie in the order of the compile's pages, as sorting them all would)."""
        found = self.lists.get(source)
        if found is None:
            wiki = self._wiki()
            if self._order is None:
                self._order = {key: index for index, key in enumerate(wiki.pages)}
            order = self._order
            pages = sorted(
                (wiki.pages[key] for key in self.citing.get(source, ())),
                key=lambda p: (p.title.casefold(), order[p.key]),
            )
            found = [(p, c) for p in pages for c in p.citations if c.source == source]
            self.lists[source] = found
        return found

    def inputs(self, by_doc: Mapping[str, str]) -> dict[str, str]:
        """What each raw-source page (by src_uri, of the source path) is made from."""
        wiki = self._wiki()
        found: dict[str, str] = {}
        for doc, path in by_doc.items():
            source = wiki.sources[path]
            kept = self.hashes.get(path)
            if kept is None or kept[0] is not source:
                made = text_hash(
                    repr((source.content_hash, source.format, source.problem, self.policy)),
                    repr(
                        [(p.key, p.title, p.doc_path, c.start, c.end) for p, c in self.cited(path)]
                    ),
                )
                kept = self.hashes[path] = (source, made)
            found[doc] = kept[1]
        return found

    def dest(self, config: MkDocsConfig, doc: str) -> str:
        """Where the page of `doc` is written (MkDocs works it out through a new File)."""
        key = (doc, config.site_dir, config.use_directory_urls)
        found = self.dests.get(key)
        if found is None:
            if len(self.dests) > 4 * len(self.hashes) + 64:
                self.dests = {}
            found = self.dests[key] = File.generated(config, doc, content="").abs_dest_path
        return found

    def _wiki(self) -> Wiki:
        if self.wiki is None:
            raise RuntimeError("SourceInputs.update was not called")
        return self.wiki
