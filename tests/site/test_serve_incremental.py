"""`mkdocs serve --dirty` as a writer runs it: after each edit the served site equals a clean
build of the same files, and a page the edit does not concern is not written again."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.commands import mkdocs
from helpers.wikis import page, write_wiki

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

MKDOCS = str(Path(sys.executable).parent / "mkdocs")
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
# The search index and the sitemap are the theme's and MkDocs' own, merged or dated by them.
NOT_COMPARED = {"search/search_index.json", "sitemap.xml", "sitemap.xml.gz"}
SOURCE = "# Notes\n\nFirst line of evidence.\nSecond line of evidence.\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file() and p.relative_to(site).as_posix() not in NOT_COMPARED
    }


class Served:
    def __init__(self, root: Path, navigation: str) -> None:
        self.root = root
        self.navigation = navigation
        self.config = root / "mkdocs.yml"
        self.temp = root / "tmp"
        self.temp.mkdir()
        self.log = root / "serve.log"
        port = _free_port()
        data = yaml.safe_load(self.config.read_text())
        data["theme"] = {"name": "material"}
        data["plugins"] = ["search", {"groundwiki": {"navigation": navigation}}]
        data["site_url"] = f"http://127.0.0.1:{port}/"  # what serve sets: the same for both
        self.config.write_text(yaml.safe_dump(data))
        self.process = subprocess.Popen(
            [MKDOCS, "serve", "--dirty", "-f", str(self.config), "--dev-addr", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=self.log.open("w"),
            env={**ENV, "TMPDIR": str(self.temp)},
        )  # fmt: skip
        # Each build ends by writing its timings: a newer file is a finished build. (MkDocs'
        # log drops a line equal to an earlier one, so its "built in" lines cannot be counted.)
        self.phases = root / ".groundwiki/build/build-phases.json"
        self.seen = 0
        self.wait_for_build()
        (site,) = self.temp.glob("mkdocs_*")
        self.site = site

    def _stamp(self) -> int:
        return self.phases.stat().st_mtime_ns if self.phases.exists() else 0

    def wait_for_build(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            stamp = self._stamp()
            if stamp > self.seen:
                time.sleep(1.0)  # a save may come as two events: let a second build start
                if self._stamp() == stamp:
                    self.seen = stamp
                    return
            time.sleep(0.2)
        raise AssertionError(f"no rebuild:\n{self.log.read_text()}")

    def edit(self, change) -> None:
        change()
        self.wait_for_build()

    def assert_equals_a_clean_build(self) -> None:
        clean = self.root / "clean"
        shutil.rmtree(clean, ignore_errors=True)
        done = mkdocs("build", "-q", "-f", str(self.config), "-d", str(clean), env=ENV)
        assert done.returncode == 0, done.stderr
        self.seen = self._stamp()  # that build's timings are not the server's
        want, got = _files(clean), _files(self.site)
        assert sorted(got) == sorted(want), set(got) ^ set(want)
        for name, data in want.items():
            assert got[name] == data, name

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(params=["auto", "compact"])
def served(tmp_path, request):
    pages = {
        "index.md": page(kind="overview", body="# Home\n\nStart at [[alpha]].\n"),
        "alpha.md": page(title="Alpha", summary="First.", body="Alpha builds on [[beta]].\n"),
        "beta.md": page(title="Beta", summary="Second.", body="Beta text.\n"),
        "gamma.md": page(
            title="Gamma",
            summary="Third.",
            body="A claim. <!-- from: raw-sources/n.md#L3 -->\n",
        ),
        "quiet.md": page(title="Quiet", summary="Nobody links here.", body="Alone.\n"),
    }
    write_wiki(tmp_path, pages, {"n.md": SOURCE})
    server = Served(tmp_path, request.param)
    yield server
    server.stop()


def _html(served: Served, url: str) -> Path:
    return served.site / url / "index.html"


def test_each_edit_gives_the_site_a_clean_build_gives(served):
    wiki = served.root / "wiki"
    served.assert_equals_a_clean_build()
    quiet = _html(served, "quiet").stat().st_mtime_ns

    # A sentence: the page itself, and the pages listing it with its summary.
    served.edit(
        lambda: (wiki / "beta.md").write_text(
            page(title="Beta", summary="Second, revised.", body="Beta text, longer now.\n")
        )
    )
    assert "longer now" in _html(served, "beta").read_text()
    served.assert_equals_a_clean_build()
    assert _html(served, "quiet").stat().st_mtime_ns == quiet  # not written again

    # A new wikilink: gamma gains a backlink.
    served.edit(
        lambda: (wiki / "alpha.md").write_text(
            page(title="Alpha", summary="First.", body="Alpha builds on [[beta]] and [[gamma]].\n")
        )
    )
    assert "First." in _html(served, "gamma").read_text()
    served.assert_equals_a_clean_build()

    # A citing page's title: its raw source's page lists it by the new one.
    assert _html(served, "quiet").stat().st_mtime_ns == quiet
    served.edit(
        lambda: (wiki / "gamma.md").write_text(
            page(
                title="Gamma, retitled",
                summary="Third.",
                body="A claim. <!-- from: raw-sources/n.md#L3 -->\n",
            )
        )
    )
    served.assert_equals_a_clean_build()
    # A navigation listing every page shows the new title in every page: all were built.
    quiet = _html(served, "quiet").stat().st_mtime_ns

    # A page deleted: its HTML goes, links to it break, its raw source loses a citing page.
    untouched = _html(served, "quiet").stat().st_mtime_ns == quiet
    assert untouched
    served.edit(lambda: (wiki / "gamma.md").unlink())
    assert not _html(served, "gamma").exists()
    served.assert_equals_a_clean_build()

    # Renamed with an alias: the old URL becomes a redirect to the new page.
    def rename() -> None:
        (wiki / "beta.md").unlink()
        (wiki / "delta.md").write_text(
            page(title="Delta", summary="Second.", aliases=["beta"], body="Beta, renamed.\n")
        )

    served.edit(rename)
    assert "delta" in _html(served, "beta").read_text()
    served.assert_equals_a_clean_build()
    # A navigation listing every page changed with the deletion and the rename, so every page
    # was built again; a compact one did not.
    untouched = _html(served, "quiet").stat().st_mtime_ns == quiet
    assert untouched == (served.navigation == "compact")

    # A new folder's index page is in the compact navigation too: every page is built again,
    # those the last builds did not build from the page objects kept for them (page_objects.py).
    def new_folder() -> None:
        (wiki / "topics").mkdir()
        (wiki / "topics" / "index.md").write_text(page(title="Topics", body="# Topics\n"))

    served.edit(new_folder)
    assert _html(served, "quiet").stat().st_mtime_ns != quiet
    served.assert_equals_a_clean_build()


def test_a_rebuild_after_one_that_failed_or_a_changed_config_builds_everything():
    from groundwiki.mkdocs_plugin.incremental import Incremental
    from mkdocs.structure.files import Files

    state = Incremental()
    state.begin(True, "config one")
    assert not state.active  # nothing built yet
    state.inputs = {"a.md": "inputs"}
    state.remember(Files([]), {})
    state.begin(True, "config one")
    assert state.active  # the last build finished: compare with it
    state.begin(True, "config one")  # the previous build never reached its end
    assert not state.active
    state.remember(Files([]), {})
    state.begin(True, "config two")  # mkdocs.yml changed
    assert not state.active and not state.inputs


def test_the_first_diagram_or_formula_builds_every_page_again(tmp_path):
    """Every page loads the diagram and math loaders once some page needs them: a page the
    edit did not touch gets them too (else a diagram reached from it by material's instant
    navigation would be fetched from unpkg.com), and loses them when the last one goes."""
    pages = {
        "index.md": page(kind="overview", body="# Home\n\nStart at [[alpha]].\n"),
        "alpha.md": page(title="Alpha", summary="First.", body="Alpha text.\n"),
        "quiet.md": page(title="Quiet", summary="Nobody links here.", body="Alone.\n"),
    }
    write_wiki(tmp_path, pages, {"n.md": SOURCE})
    served = Served(tmp_path, "compact")
    try:
        alpha = served.root / "wiki" / "alpha.md"
        shown = "```mermaid\ngraph LR\n  A --> B\n```\n\nAnd $x^2$.\n"
        served.edit(lambda: alpha.write_text(page(title="Alpha", summary="First.", body=shown)))
        quiet = _html(served, "quiet").read_text()
        assert "groundwiki/assets/mermaid.js" in quiet and "groundwiki/assets/math.js" in quiet
        served.assert_equals_a_clean_build()
        served.edit(lambda: alpha.write_text(page(title="Alpha", summary="First.", body="Text.\n")))
        assert "mermaid" not in _html(served, "quiet").read_text()
        served.assert_equals_a_clean_build()
    finally:
        served.stop()
