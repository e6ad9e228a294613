"""Real `mkdocs build` runs of small wikis: what readers and agents get from the built site."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.evidence.lock import write_lock
from helpers.site_builds import SCHEMAS, build_material_site, html
from helpers.wikis import page, write_wiki

NOTES = "".join(f"Evidence line {n}.\n" for n in range(1, 31))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site")
    write_wiki(
        root,
        {
            "index.md": page(kind="overview", title="Home", body="# Home\n\nStart at [[alpha]].\n"),
            "guide/alpha.md": page(
                summary="Alpha explains things.",
                tags=["core", "guide"],
                refs=["beta"],
                body="# Alpha\n\nSee [[beta|the beta page]], [[old-gamma]], [[gamma#Part Two]] "
                "and [[nowhere]].\n\nA claim. <!-- from: raw-sources/notes.md#L3-L5 -->\n\n"
                "`[[in-code]]` stays code.\n",
            ),
            "guide/beta.md": page(summary="Beta.", body="# Beta\n\nBack to [[alpha]].\n"),
            "gamma.md": page(
                summary="Gamma.",
                aliases=["old-gamma"],
                stale_since="2026-01-02",
                body="# Gamma\n\n## Part Two\n\nText. <!-- from: raw-sources/notes.md#L10-L10 -->\n",
            ),
        },
        {"notes.md": NOTES},
    )
    wiki = compile_wiki(load_config(root / "mkdocs.yml"))
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    # Gamma's evidence changes after the lock: its page must say so.
    (root / "raw-sources/notes.md").write_text(NOTES.replace("Evidence line 10.", "Changed 10."))
    result = build_material_site(root)
    assert result.returncode == 0, result.stderr
    return root


def test_wikilinks_become_links_to_the_target_url(site):
    alpha = html(site, "guide/alpha")
    assert '<a href="../beta/">the beta page</a>' in alpha
    # Through the alias; a link without a label shows its text as written, as in Obsidian,
    # not the target's title (Gamma).
    assert '<a href="../../gamma/">old-gamma</a>' in alpha
    assert '<a href="../../gamma/#part-two">gamma &gt; Part Two</a>' in alpha
    assert "<code>[[in-code]]</code>" in alpha


def test_a_broken_wikilink_is_a_styled_span_not_a_link(site):
    alpha = html(site, "guide/alpha")
    assert re.search(
        r'<span class="gw-broken" title="No page named &#x27;nowhere&#x27;[^"]*">nowhere</span>',
        alpha,
    )
    assert 'href="nowhere' not in alpha


def test_summary_tags_and_refs_stand_under_the_title(site):
    alpha = html(site, "guide/alpha")
    title = alpha.index("<h1")
    assert title < alpha.index('<p class="gw-summary">Alpha explains things.</p>')
    assert '<a class="gw-tag" href="../../groundwiki/tags/#tag-core">core</a>' in alpha
    assert 'Builds on: <a href="../beta/">Beta</a>' in alpha


def test_backlinks_and_sources_close_the_page(site):
    beta = html(site, "guide/beta")
    assert re.search(
        r'<ul class="gw-backlinks">\s*<li><a href="../alpha/">Alpha</a> — Alpha explains things.</li>',
        beta,
    )
    alpha = html(site, "guide/alpha")
    assert (
        '<a href="../../raw-sources/notes.md/#L3-L5"><code>raw-sources/notes.md#L3-L5</code></a>'
        in alpha
    )


def test_citations_keep_their_comment_and_get_a_marker(site):
    alpha = html(site, "guide/alpha")
    assert "<!-- from: raw-sources/notes.md#L3-L5 -->" in alpha
    assert '<sup class="gw-cite"><a href="../../raw-sources/notes.md/#L3-L5"' in alpha


def test_raw_source_pages_have_line_and_chunk_anchors_and_citing_pages(site):
    notes = html(site, "raw-sources/notes.md")
    assert all(f'<span class="gw-line" id="L{n}">' in notes for n in range(1, 31))
    assert "Changed 10." in notes
    pages = json.loads((site / "site/groundwiki/pages.json").read_text())["pages"]
    chunk_ids = {p["chunk_id"] for entry in pages for p in entry["pointers"]}
    assert chunk_ids and all(f'id="{cid}"' in notes for cid in chunk_ids)
    assert '<a href="../../guide/alpha/">Alpha</a>' in notes


def test_aliases_get_redirect_pages(site):
    redirect = (site / "site/old-gamma/index.html").read_text()
    assert '<meta http-equiv="refresh" content="0; url=../gamma/">' in redirect


def test_drifted_and_stale_pages_carry_a_banner(site):
    gamma = html(site, "gamma")
    banner = gamma[gamma.index('class="admonition warning gw-banner"') :][:600]
    assert "Known to be out of date since 2026-01-02" in banner
    assert "raw-sources/notes.md#L10-L10" in banner
    assert "gw-banner" not in html(site, "guide/beta")


def test_generated_pages_exist(site):
    assert 'class="gw-graph"' in html(site, "groundwiki/graph")
    assert "Lint report" in html(site, "groundwiki/lint")
    tags = html(site, "groundwiki/tags")
    assert 'id="tag-core"' in tags and "Alpha explains things." in tags
    assert "Alpha explains things." in html(site, "groundwiki/a-z")


@pytest.mark.parametrize("name", ["graph", "lint", "pages"])
def test_the_json_artifacts_follow_their_schemas(site, name):
    data = json.loads((site / f"site/groundwiki/{name}.json").read_text())
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)


def test_the_json_artifacts_describe_the_wiki(site):
    graph = json.loads((site / "site/groundwiki/graph.json").read_text())
    edges = {(e["source"], e["target"], e["type"]) for e in graph["edges"]}
    assert ("alpha", "gamma", "wikilink") in edges and ("alpha", "beta", "ref") in edges
    assert ("alpha", "raw-sources/notes.md", "provenance") in edges
    urls = {n["id"]: n["url"] for n in graph["nodes"]}
    assert (urls["alpha"], urls["raw-sources/notes.md"]) == (
        "guide/alpha/",
        "raw-sources/notes.md/",
    )
    lint = json.loads((site / "site/groundwiki/lint.json").read_text())
    assert {"broken-link", "drifted-source"} <= {f["rule"] for f in lint["findings"]}
    pages = {
        p["key"]: p for p in json.loads((site / "site/groundwiki/pages.json").read_text())["pages"]
    }
    assert pages["alpha"]["refs"] == ["beta"] and pages["gamma"]["aliases"] == ["old-gamma"]
    pointer = pages["alpha"]["pointers"][0]
    assert pointer["source"] == "notes.md" and pointer["start_line"] <= 3


def test_a_large_wiki_gets_a_short_navigation(tmp_path):
    pages = {"index.md": page(kind="overview", body="# Home\n")}
    pages |= {f"topic/p{i}.md": page(body=f"# P{i}\n\n[[p{(i + 1) % 12}]]\n") for i in range(12)}
    write_wiki(tmp_path, pages)
    result = build_material_site(tmp_path, compact_above=5)
    assert result.returncode == 0, result.stderr
    home = html(tmp_path, "")
    assert "A–Z index" in home and "Lint report" in home
    assert "P7" not in home  # the pages are not listed in every page's sidebar
    assert 'not included in the "nav"' not in result.stderr
    assert (tmp_path / "site/topic/p7/index.html").is_file()


def test_a_clean_wiki_builds_strict_and_a_broken_one_does_not(tmp_path):
    write_wiki(tmp_path / "clean", {"index.md": page(kind="overview", body="# Home\n")})
    assert build_material_site(tmp_path / "clean", "--strict").returncode == 0
    write_wiki(tmp_path / "broken", {"index.md": page(kind="overview", body="[[nowhere]]\n")})
    assert build_material_site(tmp_path / "broken", "--strict").returncode != 0
    broken = tmp_path / "broken"
    quiet = build_material_site(broken, "-q", "--strict")  # no warning reaches MkDocs' count
    assert quiet.returncode != 0 and "1 lint error in strict mode" in quiet.stderr
    assert build_material_site(broken, "-q").returncode == 0  # not strict: the site is built


def test_standalone_citation_comments_mark_the_end_of_their_paragraph(tmp_path):
    body = "# P\n\nFirst claim\ncontinues here.\n<!-- from: raw-sources/n.md#L1 -->\n<!-- from: raw-sources/n.md#L2 -->\n"
    write_wiki(tmp_path, {"index.md": page(kind="overview", body=body)}, {"n.md": NOTES})
    assert build_material_site(tmp_path).returncode == 0
    home = html(tmp_path, "")
    paragraph = home[home.index("First claim") :].split("</p>", 1)[0]
    assert paragraph.index(">[1]<") < paragraph.index(">[2]<")
    assert "<!-- from: raw-sources/n.md#L1 -->" in home


def test_backlinks_and_sources_stay_out_of_site_search(site):
    index = json.loads((site / "site/search/search_index.json").read_text())
    beta = " ".join(d["text"] for d in index["docs"] if d["location"].startswith("guide/beta/"))
    assert "Back to" in beta  # the page's own words are searchable
    assert "Alpha explains things." not in beta  # its backlink's summary is not
    alpha = " ".join(d["text"] for d in index["docs"] if d["location"].startswith("guide/alpha/"))
    assert "Alpha explains things." in alpha  # a page's own summary is
    assert "Builds on" not in alpha and "notes.md#L3" not in alpha  # its refs and sources are not
    assert not [d for d in index["docs"] if d["location"].startswith("raw-sources/")]


def test_a_citation_after_a_blank_line_marks_the_paragraph_and_one_after_code_stays(tmp_path):
    body = (
        "# P\n\nA claim in prose.\n\n<!-- from: raw-sources/n.md#L1 -->\n\n"
        "```text\ncode\n```\n\n<!-- from: raw-sources/n.md#L2 -->\n"
    )
    write_wiki(tmp_path, {"index.md": page(kind="overview", body=body)}, {"n.md": NOTES})
    assert build_material_site(tmp_path).returncode == 0
    home = html(tmp_path, "")
    paragraph = home[home.index("A claim in prose.") :].split("</p>", 1)[0]
    assert ">[1]<" in paragraph
    code = home[home.index("<pre") :].split("</pre>", 1)[0]
    assert "gw-cite" not in code and ">[2]<" in home


def test_links_in_headings_and_paragraphs_leave_no_placeholder_behind(tmp_path):
    body = (
        "# P\n\n## About [[q]]\n\nSetext [[q]]\n----------\n\nText [[q|the q]] and [[q]]. "
        "<!-- from: raw-sources/n.md#L1 -->\n\n| a | b |\n|---|---|\n| [[q]] | x |\n"
    )
    pages = {"index.md": page(kind="overview", body=body), "q.md": page(title="Q", body="# Q\n")}
    write_wiki(tmp_path, pages, {"n.md": NOTES})
    assert build_material_site(tmp_path).returncode == 0
    home = html(tmp_path, "")
    built = "".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "\ue000" not in built and "\ue001" not in built
    # A link without a label shows its text as written (`q`), not the target's title (`Q`).
    assert re.search(r'<h2 id="about-q">About <a href="q/">q</a>', home)  # toc id from the text
    assert re.search(r'<h2 id="setext-q">Setext <a href="q/">q</a>', home)
    assert 'Text <a href="q/">the q</a> and <a href="q/">q</a>.' in home
    assert '<td><a href="q/">q</a></td>' in home
    index = json.loads((tmp_path / "site/search/search_index.json").read_text())
    assert any("the q" in d["text"] for d in index["docs"])  # link labels stay searchable
