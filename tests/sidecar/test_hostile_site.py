"""Hostile files in a wiki folder: symlinks out of it, pages that are no text, names that are
URLs or markup. The compiler, lint, a real `mkdocs build` and a real sidecar each keep what lies
outside the wiki folder out, and one bad file never stops the rest."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.lint import run_lint
from groundwiki.core.model.records import Source
from groundwiki.core.model.site_paths import SiteLayout, page_url, relative_url
from groundwiki.core.render.redirects import Redirect, redirect_html
from groundwiki.core.render.source import render_source
from helpers.site_builds import build, with_material
from helpers.wikis import page, write_wiki
from test_sidecar_api import _serve, call
from test_sidecar_process import free_port

SECRET = "TOPSECRET-4711 root:x:0:0"


def _secret(root: Path) -> Path:
    """A file outside the wiki folder, like /etc/passwd, that a symlink may point at."""
    outside = root / "outside"
    outside.mkdir(parents=True, exist_ok=True)
    target = outside / "passwd"
    target.write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    return target


def _linked_wiki(root: Path, **options) -> Path:
    config = write_wiki(
        root,
        {
            "index.md": page(title="Home", body="# Home\n\n[[passwd]] [[twin]]\n"),
            "real.md": page(title="Real", body="# Real\n\nShared words.\n"),
        },
        options=options or None,
    )
    target = _secret(root)
    (root / "wiki/passwd.md").symlink_to(target)
    (root / "wiki/twin.md").symlink_to(root / "wiki/real.md")
    return config


# --- the compiler and lint ----------------------------------------------------------------------


def test_a_page_symlinked_out_of_the_wiki_is_never_read(tmp_path):
    wiki = compile_wiki(load_config(_linked_wiki(tmp_path)))
    linked = wiki.pages["passwd"]
    assert linked.body == "" and linked.content_hash == ""
    assert SECRET not in repr(linked)


def test_lint_names_a_symlinked_page_and_the_fix(tmp_path):
    wiki = compile_wiki(load_config(_linked_wiki(tmp_path)))
    found = [f for f in run_lint(wiki).findings if f.path == "wiki/passwd.md"]
    assert [(f.rule, f.severity) for f in found] == [("page-outside-wiki", "error")]
    assert "copy the text into the wiki folder" in found[0].hint


def test_a_symlink_to_a_page_inside_the_wiki_is_read(tmp_path):
    wiki = compile_wiki(load_config(_linked_wiki(tmp_path)))
    assert "Shared words." in wiki.pages["twin"].body
    assert not [f for f in run_lint(wiki).findings if f.path == "wiki/twin.md"]


# --- the site -----------------------------------------------------------------------------------


def _published(site: Path) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in site.rglob("*")
        if path.is_file()
    )


def test_the_site_never_publishes_a_file_outside_the_wiki(tmp_path):
    config = with_material(_linked_wiki(tmp_path))
    (tmp_path / "wiki/secret.txt").symlink_to(_secret(tmp_path))  # a static file
    (tmp_path / "wiki/folder").symlink_to(tmp_path / "outside")  # a folder of them
    result = build(config)
    assert result.returncode == 0, result.stderr
    site = tmp_path / "site"
    assert SECRET not in _published(site)  # pages, search index, pages.json, static files
    notice = (site / "passwd/index.html").read_text(encoding="utf-8")
    assert "This page is not published" in notice and "symlink" in notice
    assert "Shared words." in (site / "twin/index.html").read_text(encoding="utf-8")
    assert "wiki/secret.txt leads outside the wiki folder" in result.stderr
    assert "wiki/passwd.md:1:1: page-outside-wiki" in result.stderr


def test_the_site_keeps_files_out_when_the_project_is_reached_through_a_symlink(tmp_path):
    """MkDocs names files by the path it was given (/tmp on macOS is /private/tmp, a CI
    workspace is often a link): the check must still see them as the wiki folder's."""
    project = tmp_path / "project"
    config = with_material(_linked_wiki(project))
    (project / "wiki/secret.txt").symlink_to(_secret(project))
    (project / "wiki/folder").symlink_to(project / "outside")
    (tmp_path / "via").symlink_to(project)
    result = build(tmp_path / "via" / config.name)
    assert result.returncode == 0, result.stderr
    assert SECRET not in _published(project / "site")
    assert "This page is not published" in (project / "site/passwd/index.html").read_text()


def test_a_page_that_is_not_utf8_builds_as_a_notice_and_the_rest_builds(tmp_path):
    config = with_material(
        write_wiki(
            tmp_path, {"index.md": page(body="[[binary]]\n"), "good.md": page(body="# Good\n")}
        )
    )
    (tmp_path / "wiki/binary.md").write_bytes(b"---\nsummary: caf\xe9\n---\n\x00\xff\xfe")
    result = build(config)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "UnicodeDecodeError" not in result.stderr
    assert "wiki/binary.md:1:1: unreadable-page" in result.stderr
    notice = (tmp_path / "site/binary/index.html").read_text(encoding="utf-8")
    assert "This page is not published" in notice and "save the file as UTF-8 text" in notice
    assert (tmp_path / "site/good/index.html").is_file()


def test_files_named_with_bytes_that_are_not_utf8_are_left_out_and_the_rest_builds(tmp_path):
    config = with_material(write_wiki(tmp_path, {"index.md": page(body="# Home\n")}))
    bad_page = tmp_path / "wiki" / os.fsdecode(b"pa\xffge.md")
    bad_page.write_text(page(body="# Page\n"))
    (tmp_path / "raw-sources" / os.fsdecode(b"note\xff.txt")).write_text("The wing flutters.\n")
    result = build(config)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("its name is not UTF-8 text") == 2
    assert (tmp_path / "site/index.html").is_file()
    wiki = compile_wiki(load_config(config))
    assert list(wiki.pages) == ["index"] and not wiki.sources


def test_a_page_named_like_a_url_is_linked_as_a_path():
    for directory_urls in (True, False):
        url = page_url("javascript:alert(1).md", directory_urls)
        assert url.startswith("./javascript:")
        assert relative_url("", url).startswith("./")
        assert relative_url(page_url("a/b.md", directory_urls), url).startswith("../")


def test_a_raw_source_named_with_markup_gets_a_plain_heading():
    name = "<img src=x onerror=alert(1)>[x](javascript:alert(2)).md"
    source = Source(name, Path(name), "text", "line\n", "hash", ())
    markdown = render_source(source, (), (), "raw-sources", SiteLayout()).markdown
    heading = next(line for line in markdown.splitlines() if line.startswith("# "))
    assert "<img" not in heading and "](" not in heading


# --- the sidecar --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory):
    root = tmp_path_factory.mktemp("linked")
    # The semantic lane is not under test: an unreachable Chroma server starts faster.
    _linked_wiki(root, sidecar={"debounce_s": 0.1, "chroma_url": f"http://127.0.0.1:{free_port()}"})
    process, base = _serve(root)
    yield base
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_the_sidecar_never_serves_a_symlinked_page(sidecar):
    status, data = call(sidecar, "/pages", {"ids": ["passwd"], "include_body": True})
    assert status == 200
    assert SECRET not in str(data)
    status, hits = call(sidecar, "/search?q=TOPSECRET")
    assert status == 200 and SECRET not in str(hits)
    assert not [hit for hit in hits["hits"] if hit["key"] == "passwd"]


def test_a_redirect_script_holds_the_target_url_unchanged_and_inert():
    redirect = Redirect("old/", "a&b</script><script>alert(1)/")
    html = redirect_html(redirect)
    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    literal = script.removeprefix("location.replace(").split(" + location.hash", 1)[0]
    assert json.loads(literal) == relative_url(redirect.url, redirect.target)
    assert html.count("<script>") == 1 and html.count("</script>") == 1
