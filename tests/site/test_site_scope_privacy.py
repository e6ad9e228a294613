"""A site that publishes the shared scope only (`scopes: global`, the default) carries nothing of
a user's own pages: not their text, not their paths or keys, not a lint finding about them, in
no file of the built site (pages, lint report, A–Z, tags, graph, search index, sitemap, JSON
artifacts). A page file directly under `user/`, in no user's folder, belongs to no one: the
core, the sidecar and the site all leave it out, and lint says where to move it.

Real `mkdocs build` runs (with MkDocs' search plugin, so the search index is built): slow."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from groundwiki.core import compile_wiki
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.lint import run_lint
from groundwiki.core.render.artifacts import pages_index
from groundwiki.core.wiki.graph import build_graph
from groundwiki_sidecar.index.documents import indexed_pages
from helpers.commands import mkdocs
from helpers.wikis import page, write_wiki

BIN = Path(sys.executable).parent
MARKER = "zanzibar"  # a word only Bob's page holds
BOB_KEY = "quokka-ledger"  # his page's key (its file name)
BOB_PATH = "user/bob"

PAGES = {
    "index.md": page("The team's wiki.", "# Home\n\nStart at [[deploy]] and [[oncall]].\n"),
    "global/deploy.md": page(
        "How the team deploys.",
        "# Deploy\n\nShip it.\n<!-- from: raw-sources/runbook.md#L1-L2 -->\n",
        tags=["runbook"],
    ),
    # A shared page whose link lands only on Bob's page (by an alias of his): a scope leak the
    # site must report without naming his page.
    "global/oncall.md": page("Who is on call.", "# On call\n\nAsk [[kestrel]] first.\n"),
    f"{BOB_PATH}/{BOB_KEY}.md": page(
        f"Bob's {MARKER} summary.",
        f"# {MARKER.title()} ledger\n\nThe {MARKER} figures, from [[deploy]].\n"
        f"<!-- from: raw-sources/{MARKER}-figures.md#L1-L2 -->\n"
        "Only Bob cites the solo notes.\n<!-- from: raw-sources/solo.md#L1 -->\n",
        title=f"The {MARKER} ledger",
        tags=["runbook", f"{MARKER}-tag"],
        aliases=[f"{MARKER}-notes", "kestrel"],
    ),
}
SOURCES = {"runbook.md": "Step one.\nStep two.\n", "solo.md": "Shared material.\n"}


def build(
    root: Path,
    pages: dict[str, str],
    sources: dict[str, str],
    scopes: str = "global",
    **options: str,
) -> Path:
    config = write_wiki(root, pages, sources)  # type: ignore[arg-type]
    # MkDocs' search plugin too, so search/search_index.json is part of the site.
    data = yaml.safe_load(config.read_text())
    data["plugins"] = ["search", {"groundwiki": {"scopes": scopes, **options}}]
    config.write_text(yaml.safe_dump(data))
    done = mkdocs(
        "build", "-q", "-f", str(config), env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(BIN)}
    )
    assert done.returncode == 0, done.stderr
    return root / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("shared-site"), PAGES, SOURCES)


def leaks_in(site: Path) -> list[str]:
    """Each file of the site that names or holds anything of Bob's page, with what it holds."""
    leaks = []
    for path in sorted(site.rglob("*")):
        if path.is_file():
            text = path.read_text(errors="replace").lower()
            leaks += [
                f"{path.relative_to(site)}: {word}"
                for word in (MARKER, BOB_KEY, BOB_PATH)
                if word in text
            ]
    return leaks


def test_no_file_of_the_shared_site_holds_anything_of_a_users_page(site):
    assert (site / "search/search_index.json").is_file()  # the search index is checked too
    assert leaks_in(site) == []


def test_no_part_of_a_split_overview_page_holds_anything_of_a_users_page(tmp_path):
    # The lint report, the A–Z index and the tags page cut into parts (page_bytes): the parts
    # are made of what the site may show, as the whole pages are.
    site = build(tmp_path, PAGES, SOURCES, page_bytes=1000)  # type: ignore[arg-type]
    assert list((site / "groundwiki/lint").glob("folder-*/index.html"))
    assert leaks_in(site) == []


def test_the_site_lint_report_keeps_the_shared_pages_findings_without_naming_private_pages(site):
    report = json.loads((site / "groundwiki/lint.json").read_text())
    leaks = [f for f in report["findings"] if f["rule"] == "scope-leak"]
    assert [(f["path"], f["severity"]) for f in leaks] == [("wiki/global/oncall.md", "error")]
    assert "one user's own" in leaks[0]["message"]
    assert report["counts"]["error"] == len(
        [f for f in report["findings"] if f["severity"] == "error"]
    )


def test_a_raw_source_cited_only_by_a_private_page_is_published_without_its_citer(site):
    # raw-sources/ is shared material: its page is built, and names no private page.
    text = (site / "raw-sources/solo.md/index.html").read_text()
    assert "Shared material." in text and BOB_KEY not in text


def test_the_command_line_lint_still_reports_a_users_own_pages(tmp_path):
    write_wiki(tmp_path, PAGES, SOURCES)
    findings = run_lint(compile_wiki(load_config(tmp_path / "mkdocs.yml"))).findings
    bob = {f.rule for f in findings if f.path == f"wiki/{BOB_PATH}/{BOB_KEY}.md"}
    assert {"missing-source", "unlocked-source"} <= bob
    leak = next(f for f in findings if f.rule == "scope-leak")
    assert f"wiki/{BOB_PATH}/{BOB_KEY}.md" in leak.message  # the CLI sees everything


# --- a page file directly under user/ -------------------------------------------------------

STRAY = {
    "index.md": page("The team's wiki.", "# Home\n"),
    "global/deploy.md": page("How the team deploys.", "# Deploy\n"),
    "user/bob.md": page(f"A {MARKER} page of no one's.", f"# Stray\n\nThe {MARKER} notes.\n"),
}


def test_a_page_directly_under_user_is_refused_by_the_core_with_a_finding(tmp_path):
    write_wiki(tmp_path, STRAY)
    wiki = compile_wiki(load_config(tmp_path / "mkdocs.yml"))
    assert "bob" not in wiki.pages and wiki.scopes.users == ()
    assert "user/bob.md" not in {p.doc_path for p in wiki.scopes.every_page}
    refused = [f for f in run_lint(wiki).findings if f.path == "wiki/user/bob.md"]
    assert [(f.rule, f.severity) for f in refused] == [("misplaced-user-page", "error")]
    assert "user/bob/bob.md" in refused[0].hint and "global/bob.md" in refused[0].hint


def test_a_page_directly_under_user_is_in_no_artifact_and_no_index(tmp_path):
    write_wiki(tmp_path, STRAY)
    wiki = compile_wiki(load_config(tmp_path / "mkdocs.yml"))
    assert [p["key"] for p in pages_index(wiki)["pages"]] == ["deploy", "index"]
    assert "bob" not in {node.id for node in build_graph(wiki).nodes}
    assert "user/bob.md" not in {p.doc_path for p in indexed_pages(wiki)}  # the sidecar's


@pytest.mark.parametrize("scopes", ["global", "all"])
def test_a_page_directly_under_user_is_in_no_site(tmp_path, scopes):
    site = build(tmp_path, STRAY, {}, scopes)
    assert not (site / "user").exists()
    for name in ("groundwiki/pages.json", "groundwiki/graph.json", "groundwiki/a-z/index.html"):
        assert "bob" not in (site / name).read_text().lower(), name
    assert MARKER not in (site / "search/search_index.json").read_text().lower()


def test_the_compact_navigation_lists_no_user_folder(tmp_path):
    # user/index.md is no one's page too: a compact navigation names no folder it would open.
    stray = {**STRAY, "user/index.md": page("No one's index.", "# Users\n")}
    site = build(tmp_path, stray, {}, "all", navigation="compact")
    home = (site / "index.html").read_text()
    assert 'href="user/' not in home and ">User<" not in home


# --- a user's attachments ---------------------------------------------------------------------

ATTACHED = {
    "index.md": page("The team's wiki.", "# Home\n"),
    # A shared page that embeds and links Bob's files: lint's scope leaks, no file of the site.
    "global/deploy.md": page(
        "How the team deploys.", "# Deploy\n\n![[bob-diagram.png]]\n\nSee [[bob-notes.pdf]].\n"
    ),
    f"{BOB_PATH}/{BOB_KEY}.md": page("Bob's page.", "# Ledger\n\n![[bob-diagram.png]]\n"),
    f"{BOB_PATH}/bob-diagram.png": f"Bob's {MARKER} diagram",
    f"{BOB_PATH}/bob-notes.pdf": f"Bob's {MARKER} notes",
}


def test_no_file_of_the_shared_site_names_or_holds_a_users_attachment(tmp_path):
    site = build(tmp_path, ATTACHED, {})
    assert not (site / "user").exists()
    leaks = [
        f"{path.relative_to(site)}: {word}"
        for path in sorted(site.rglob("*"))
        if path.is_file()
        for word in (BOB_PATH, MARKER)
        if word in path.read_text(errors="replace").lower()
    ]
    assert leaks == []


def test_a_site_of_every_scope_embeds_a_users_attachment_on_their_page_only(tmp_path):
    site = build(tmp_path, ATTACHED, {}, "all")
    assert (site / f"{BOB_PATH}/bob-diagram.png").is_file()  # published with Bob's pages
    assert "bob-diagram.png" in (site / f"{BOB_PATH}/{BOB_KEY}/index.html").read_text()
    # The shared page shows the same broken embed and link as in the shared site: the navigation
    # may list Bob's pages on this site, his files are no part of a shared page.
    assert f"{BOB_PATH}/bob-" not in (site / "global/deploy/index.html").read_text()
