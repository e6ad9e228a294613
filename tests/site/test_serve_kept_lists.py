"""What `mkdocs serve --dirty` keeps of MkDocs' own work across rebuilds: the list of files
(kept while no file came or went), the check of its files for symlinks out of the wiki (for
the files no event named), the sitemap (kept while its pages are the same) and the search
index's JSON (kept entry by entry). Each
rebuild is MkDocs' build as the server runs it, in a process of its own, told the paths that
changed as the server's file events tell them; after each, the site equals a clean build and
the search index is the text the search plugin's own `json.dumps` gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.commands import mkdocs
from helpers.wikis import page, write_wiki

pytestmark = pytest.mark.long

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
SERVE_URL = "http://127.0.0.1:8000/"
# The search index is compared with the search plugin's own dump; the sitemap's text in a
# test of its own (the gzip copy holds the time it was written).
NOT_COMPARED = {"search/search_index.json", "sitemap.xml", "sitemap.xml.gz"}

# The server's builds: the first, then one per line of changed paths read from stdin; after
# each, a line of JSON on stdout.
DRIVER = """
import json, sys
from mkdocs.commands.build import build
from mkdocs.config import load_config

config_file, site_dir, url = sys.argv[1:4]

def configured():
    config = load_config(config_file=config_file, site_dir=site_dir)
    config.site_url = url
    return config

def built(config):
    build(config, serve_url=url, dirty=True)
    plugin, search = config.plugins["groundwiki"], config.plugins["material/search"]
    entries = search.search_index.entries
    config_part = {k: search.search_index.config[k] for k in ["lang", "separator", "pipeline", "fields"]}
    expected = json.dumps({"config": config_part, "docs": entries}, separators=(",", ":"), default=str)
    with open(site_dir + "/search/search_index.json", encoding="utf-8") as f:
        written = f.read()
    published = sorted(f.src_uri for f in plugin.files if f.src_dir == config.docs_dir)
    print(json.dumps({
        "kept_list": plugin.file_list.reused,
        "index_exact": written == expected,
        "kept_sitemap": plugin.sitemap.reused,
        "published": published,
        "settled": "dependencies" in plugin.site.wiki.__dict__,
    }), flush=True)
    return plugin

config = configured()
config.plugins.on_startup(command="serve", dirty=True)
plugin = built(config)
plugin.changes.start()
for line in sys.stdin:
    plugin.changes.record(json.loads(line), False)
    built(configured())
"""


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file() and p.relative_to(site).as_posix() not in NOT_COMPARED
    }


class Server:
    def __init__(self, root: Path) -> None:
        self.root, self.site = root, root / "served"
        self.config = root / "mkdocs.yml"
        data = yaml.safe_load(self.config.read_text())
        data["theme"] = {"name": "material"}
        data["plugins"] = ["search", {"groundwiki": {}}]
        data["site_url"] = SERVE_URL  # what serve sets: the clean build gets the same
        self.config.write_text(yaml.safe_dump(data))
        command = [sys.executable, "-c", DRIVER, str(self.config), str(self.site), SERVE_URL]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV
        )
        self.last = self._answer()

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the server's builds stopped"
        return json.loads(line)

    def rebuild(self, *changed: Path) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([str(path) for path in changed]) + "\n")
        self.process.stdin.flush()
        self.last = self._answer()
        assert self.last["index_exact"]
        self.assert_equals_a_clean_build()
        return self.last

    def process_rebuild(self, *changed: Path) -> dict[str, Any]:
        """A rebuild, checked only by the caller: a static file left out stays in site_dir
        from an earlier build (a dirty build removes only the pages that went)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([str(path) for path in changed]) + "\n")
        self.process.stdin.flush()
        self.last = self._answer()
        return self.last

    def assert_equals_a_clean_build(self) -> None:
        clean = self.root / "clean"
        done = mkdocs("build", "-q", "--clean", "-f", str(self.config), "-d", str(clean), env=ENV)
        assert done.returncode == 0, done.stderr
        want, got = _files(clean), _files(self.site)
        assert sorted(got) == sorted(want), set(got) ^ set(want)
        for name, data in want.items():
            assert got[name] == data, name
        # Both built the same day: every page's date is that day.
        sitemap = "sitemap.xml"
        assert (self.site / sitemap).read_text() == (clean / sitemap).read_text()

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def test_a_rebuild_keeps_the_file_list_and_search_index_while_they_hold(tmp_path: Path) -> None:
    pages = {
        "index.md": page(kind="overview", body="# Home\n\nStart at [[alpha]].\n"),
        "alpha.md": page(title="Alpha", summary="First.", body="Alpha builds on [[beta]].\n"),
        "beta.md": page(title="Beta", summary="Second.", body="## Part\n\nBeta text.\n"),
        "notes/gamma.md": page(title="Gamma", summary="Third.", body="Gamma text.\n"),
    }
    write_wiki(tmp_path, pages, {"n.md": "# Notes\n\nFirst line.\n"})
    wiki = tmp_path / "wiki"
    server = Server(tmp_path)
    try:
        assert not server.last["kept_list"] and server.last["index_exact"]

        # A page edited: the same files, listed from the last build; its search entries new.
        beta = wiki / "beta.md"
        beta.write_text(page(title="Beta", summary="Second.", body="## Part\n\nBeta, revised.\n"))
        assert server.rebuild(beta)["kept_list"]
        index = (server.site / "search/search_index.json").read_text()
        assert "Beta, revised." in index and "Beta text." not in index

        # An editor's swap file that came and went, and a link added: still the same files.
        swap = wiki / ".alpha.md.swp"
        swap.write_text("swap")
        swap.unlink()
        alpha = wiki / "alpha.md"
        alpha.write_text(page(title="Alpha", summary="First.", body="On [[beta]], [[gamma]].\n"))
        assert server.rebuild(swap, alpha)["kept_list"]

        # A page that came: MkDocs lists the files again, and the new page is built.
        delta = wiki / "notes" / "delta.md"
        delta.write_text(page(title="Delta", summary="Fourth.", body="New, on [[alpha]].\n"))
        assert not server.rebuild(delta)["kept_list"]
        assert (server.site / "notes/delta/index.html").exists()

        # A file that is there now but was not listed (its event unseen until now).
        (wiki / "extra.txt").write_text("an asset")
        assert not server.rebuild(wiki / "extra.txt")["kept_list"]

        # A raw source edited: outside docs_dir, the list holds.
        source = tmp_path / "raw-sources" / "n.md"
        source.write_text("# Notes\n\nFirst line, changed.\n")
        assert server.rebuild(source)["kept_list"]

        # A folder deleted with its page: listed again, and its HTML gone.
        delta.unlink()
        (wiki / "notes" / "gamma.md").unlink()
        (wiki / "notes").rmdir()
        assert not server.rebuild(wiki / "notes")["kept_list"]
        assert not (server.site / "notes/gamma/index.html").exists()
    finally:
        server.stop()


def test_a_rebuild_keeps_the_sitemap_while_its_pages_are_the_same(tmp_path: Path) -> None:
    pages = {
        "index.md": page(kind="overview", body="# Home\n\nStart at [[alpha]].\n"),
        "alpha.md": page(title="Alpha", summary="First.", body="Alpha text.\n"),
    }
    write_wiki(tmp_path, pages)
    wiki = tmp_path / "wiki"
    server = Server(tmp_path)
    try:
        assert not server.last["kept_sitemap"]
        # Made at the first build, so the first edit takes the compile's dependencies over.
        assert server.last["settled"]
        alpha = wiki / "alpha.md"
        alpha.write_text(page(title="Alpha", summary="First.", body="Alpha, revised.\n"))
        assert server.rebuild(alpha)["kept_sitemap"]  # and equal to a clean build's

        # A page that came is in the sitemap; then the same pages again keep it.
        beta = wiki / "beta.md"
        beta.write_text(page(title="Beta", summary="Second.", body="On [[alpha]].\n"))
        assert not server.rebuild(beta)["kept_sitemap"]
        assert "/beta/" in (server.site / "sitemap.xml").read_text()
        beta.write_text(page(title="Beta", summary="Second.", body="On [[alpha]], again.\n"))
        assert server.rebuild(beta)["kept_sitemap"]
    finally:
        server.stop()


def test_a_kept_file_list_checks_again_the_files_that_may_lead_out(tmp_path: Path) -> None:
    """A symlink's target may change where no event of docs_dir sees it: the files the last
    full check did not clear as plain files are checked again at every build."""
    pages = {
        "index.md": page(kind="overview", body="# Home\n\nStart at [[alpha]].\n"),
        "alpha.md": page(title="Alpha", summary="First.", body="Alpha text.\n"),
    }
    write_wiki(tmp_path, pages)
    wiki, hop = tmp_path / "wiki", tmp_path / "hop"
    (wiki / "real.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside")
    hop.mkdir()
    # wiki/data.txt -> hop/data.txt -> wiki/real.txt: inside the wiki, published.
    (hop / "data.txt").symlink_to(wiki / "real.txt")
    (wiki / "data.txt").symlink_to(hop / "data.txt")
    (wiki / "out.txt").symlink_to(tmp_path / "secret.txt")  # out from the start
    server = Server(tmp_path)
    try:
        published = server.last["published"]
        assert "data.txt" in published and "real.txt" in published
        assert "out.txt" not in published

        # The hop now leads out, which no event in docs_dir names; a page edited meanwhile.
        (hop / "data.txt").unlink()
        (hop / "data.txt").symlink_to(tmp_path / "secret.txt")
        alpha = wiki / "alpha.md"
        alpha.write_text(page(title="Alpha", summary="First.", body="Alpha, revised.\n"))
        server.process_rebuild(alpha)
        assert server.last["kept_list"]
        published = server.last["published"]
        assert "data.txt" not in published and "out.txt" not in published
        assert "real.txt" in published and "alpha.md" in published

        # Led back inside: published again, the list still kept.
        (hop / "data.txt").unlink()
        (hop / "data.txt").symlink_to(wiki / "real.txt")
        server.process_rebuild(alpha)
        assert server.last["kept_list"] and "data.txt" in server.last["published"]
    finally:
        server.stop()
