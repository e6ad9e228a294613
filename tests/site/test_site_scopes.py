"""Scopes on the built site: the shared scope only by default, each user's pages as that user
sees the wiki with `scopes: all`, and a wiki without scope folders built as before. Proven on the
scoped example wiki (tests/fixtures/scoped); the core and lint are tested in
tests/core/test_scopes.py, the sidecar in tests/sidecar/test_sidecar_scopes.py."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from helpers.commands import mkdocs
from helpers.scoped import ALICE_WORDS, BOB_WORDS, scoped_copy

BIN = Path(sys.executable).parent


def build(config: Path) -> Path:
    done = mkdocs(
        "build", "-q", "-f", str(config), env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(BIN)}
    )
    assert done.returncode == 0, done.stderr
    return config.parent / "site"


def site_text(site: Path) -> str:
    return "\n".join(
        path.read_text(errors="replace").lower()
        for path in sorted(site.rglob("*"))
        if path.is_file()
    )


def test_the_site_publishes_the_shared_scope_only_by_default(tmp_path):
    site = build(scoped_copy(tmp_path))
    assert (site / "global/deploy/index.html").exists()
    assert not (site / "user").exists()
    text = site_text(site)  # pages, search index, graph.json, pages.json, lint.json
    for word in ALICE_WORDS + BOB_WORDS:
        assert word not in text, word


def test_scopes_all_publishes_each_users_pages_as_they_see_the_wiki(tmp_path):
    site = build(scoped_copy(tmp_path, scopes="all"))
    alice = (site / "user/alice/deploy/index.html").read_text()
    assert "gw-scope" in alice and "takes the place of the shared page" in alice
    assert 'href="../../../global/deploy/"' in alice  # the banner names the shared page
    assert 'href="../scratch/"' in alice  # her own page, linked as she sees it
    bob = (site / "user/bob/rollback/index.html").read_text()
    assert 'href="../../../global/deploy/"' in bob and "tangerine" not in bob.lower()
    assert "takes the place" not in bob  # bob shadows nothing
    # The shared page's own content (the navigation lists every published page).
    shared = (site / "global/oncall/index.html").read_text().lower()
    article = shared[shared.index("<article") : shared.index("</article>")]
    assert not any(word in article for word in ALICE_WORDS + BOB_WORDS)


def test_the_site_of_a_wiki_without_scope_folders_is_unchanged(tmp_path):
    scoped_copy(tmp_path)
    shutil.rmtree(tmp_path / "wiki/user")
    (tmp_path / "wiki/global").rename(tmp_path / "wiki/team")
    site = build(tmp_path / "mkdocs.yml")
    page = (site / "team/deploy/index.html").read_text()
    assert "gw-scope" not in page and 'href="../oncall/"' in page
