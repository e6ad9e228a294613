"""What a server keeps across its rebuilds and updates by difference (the raw-source pages'
citing pages, every page's render inputs) equals what a build from scratch works out, after
every edit of a random walk over a small wiki."""

from __future__ import annotations

import random
from pathlib import Path

from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.model.records import Citation, Page
from groundwiki.core.render.inputs import InputMemo, RenderInputs
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki
from groundwiki.mkdocs_plugin.compiled_site import CompiledSite, compile_site
from groundwiki.mkdocs_plugin.page_inputs import PageInputs
from groundwiki.mkdocs_plugin.source_inputs import SourceInputs
from helpers.wikis import page, write_wiki
from mkdocs.structure.files import File

NAMES = [f"p{number}" for number in range(8)]
SOURCES = {f"s{number}.md": "one\ntwo\nthree\n" for number in range(3)}
TITLES = ["Alpha", "alpha", "Beta", "Gamma"]  # equal titles but for case: a tie in the order


def _text(rng: random.Random) -> str:
    links = " ".join(f"[[{name}]]" for name in rng.sample(NAMES, rng.randint(0, 3)))
    cites = " ".join(
        f"Claim. <!-- from: raw-sources/{source}#L{rng.randint(1, 3)} -->"
        for source in rng.sample(sorted(SOURCES), rng.randint(0, 2))
    )
    summary = rng.choice(["First.", "Second.", "Third."])
    return page(summary, f"{links}\n\n{cites}\n", title=rng.choice(TITLES))


def _cited_from_scratch(wiki: Wiki) -> dict[str, list[tuple[Page, Citation]]]:
    cited: dict[str, list[tuple[Page, Citation]]] = {}
    for one in sorted(wiki.pages.values(), key=lambda p: p.title.casefold()):
        for citation in one.citations:
            cited.setdefault(citation.source, []).append((one, citation))
    return cited


def _docs(site: CompiledSite, root: Path) -> list[File]:
    docs = str(root / "wiki")
    return [File(doc, docs, str(root / "site"), True) for doc in sorted(site.pages_by_doc)]


def test_kept_inputs_equal_those_worked_out_from_scratch(tmp_path: Path) -> None:
    rng = random.Random(29)
    config_file = write_wiki(tmp_path, {f"{name}.md": _text(rng) for name in NAMES}, dict(SOURCES))
    config = load_config(config_file)
    cache, citations, kept = CompileCache(), SourceInputs(), PageInputs()
    memo = InputMemo()
    for step in range(25):
        site = compile_site(config, "all", cache)
        wiki = site.wiki
        assert step == 0 or wiki.stale is not None  # each compile follows the last
        citations.update(wiki)
        fresh = SourceInputs()
        fresh.update(compile_wiki(config))
        for source, expected in _cited_from_scratch(wiki).items():
            assert [(p.doc_path, c.raw) for p, c in citations.cited(source)] == [
                (p.doc_path, c.raw) for p, c in expected
            ]
        by_doc = {f"sources/{path}.md": path for path in wiki.sources}
        assert citations.inputs(by_doc) == fresh.inputs(by_doc)

        views: dict[object, RenderInputs] = {}

        def inputs_of(view: Wiki, _: Page) -> RenderInputs:
            return views.setdefault(id(view), RenderInputs(view, memo))

        docs = _docs(site, tmp_path)
        found = kept.of(docs, site, {}, set(), {}, inputs_of, memo)
        scratch = RenderInputs(wiki)
        assert found[0] == {
            doc: scratch.of(one, site.backlinks_of(one)) for doc, one in site.pages_by_doc.items()
        }
        name = rng.choice(NAMES)
        target = tmp_path / "wiki" / f"{name}.md"
        if rng.random() < 0.15 and target.exists():
            target.unlink()
        else:
            target.write_text(_text(rng), encoding="utf-8")
