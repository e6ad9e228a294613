"""A derived summary (the body's first sentence, for a page without a summary) is marked as
derived wherever it reaches readers or agents: the page, the A–Z index, backlinks and the tags
page when the site shows derived summaries (`show_derived_summaries: true`), pages.json and
the sidecar's answers always. By default the site shows none (issue 31: the first sentence is
often no summary); a written summary is shown, unmarked, either way."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import jsonschema
import pytest
from helpers.site_builds import SCHEMAS, html
from helpers.site_builds import build_material_site as build
from helpers.wikis import page, write_wiki
from test_sidecar_api import _serve, call
from test_sidecar_process import free_port

PAGES = {
    "written.md": page(
        title="Written",
        summary="The writer's own summary.",
        tags=["topic"],
        body="# Written\n\nSee [[derived]].\n",
    ),
    "derived.md": page(
        summary=None,
        title="Derived",
        tags=["topic"],
        body="# Derived\n\nFlutter grows with speed. More follows.\n\nBack to [[written]].\n",
    ),
}
DERIVED = "Flutter grows with speed."


def _pattern(element: str, text: str) -> re.Pattern[str]:
    """The element holding `text`, opened with whatever attributes it has."""
    return re.compile(rf"<{element}(?P<attrs>[^>]*)>{re.escape(text)}</{element}>")


def _attrs(markup: str, element: str, text: str) -> str:
    found = _pattern(element, text).search(markup)
    assert found, f"no <{element}> holding {text!r}"
    return found.group("attrs")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("summaries")
    write_wiki(root, PAGES, options={"show_derived_summaries": True})
    result = build(root)
    assert result.returncode == 0, result.stderr
    return root


@pytest.fixture(scope="module")
def default_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("summaries-default")
    write_wiki(root, PAGES)
    result = build(root)
    assert result.returncode == 0, result.stderr
    return root


def test_by_default_no_page_of_the_site_shows_a_derived_summary(default_site):
    """Under the title, in backlinks (written.md's), in the A–Z index and on the tags page."""
    for url in ("written", "groundwiki/a-z", "groundwiki/tags"):
        assert DERIVED not in html(default_site, url), url
    derived = html(default_site, "derived")
    assert not _pattern("p", DERIVED).search(derived)  # its body's paragraph holds more
    assert '<p class="gw-summary' not in derived
    for url in ("derived", "written", "groundwiki/a-z", "groundwiki/tags"):
        assert "gw-summary-derived" not in html(default_site, url), url


def test_by_default_written_summaries_are_still_shown_everywhere(default_site):
    written = "The writer&#x27;s own summary."
    assert _attrs(html(default_site, "written"), "p", written) == ' class="gw-summary"'
    assert _attrs(html(default_site, "groundwiki/a-z"), "dd", written) == ""
    assert f"— {written}</li>" in html(default_site, "groundwiki/tags")
    # derived.md links to written.md: written.md is in derived.md's backlinks, with its summary.
    assert f"— {written}</li>" in html(default_site, "derived")


def test_by_default_agents_still_get_the_derived_summary(default_site):
    data = json.loads((default_site / "site/groundwiki/pages.json").read_text())
    by_key = {p["key"]: p for p in data["pages"]}
    assert (by_key["derived"]["summary"], by_key["derived"]["summary_derived"]) == (DERIVED, True)


def test_the_page_header_marks_a_derived_summary(site):
    attrs = _attrs(html(site, "derived"), "p", DERIVED)
    assert 'class="gw-summary gw-summary-derived"' in attrs
    assert 'title="Derived: the first sentence' in attrs


def test_the_page_header_leaves_a_written_summary_unmarked(site):
    assert _attrs(html(site, "written"), "p", "The writer&#x27;s own summary.") == (
        ' class="gw-summary"'
    )


def test_the_a_to_z_index_marks_a_derived_summary(site):
    index = html(site, "groundwiki/a-z")
    assert "gw-summary-derived" in _attrs(index, "dd", DERIVED)
    assert _attrs(index, "dd", "The writer&#x27;s own summary.") == ""


def test_backlinks_mark_a_derived_summary(site):
    # written.md is linked from derived.md: its backlink carries derived.md's summary.
    assert "gw-summary-derived" in _attrs(html(site, "written"), "span", DERIVED)


def test_the_tags_page_marks_a_derived_summary(site):
    tags = html(site, "groundwiki/tags")
    assert "gw-summary-derived" in _attrs(tags, "span", DERIVED)
    assert "— The writer&#x27;s own summary.</li>" in tags


def test_pages_json_says_which_summaries_are_derived(site):
    data = json.loads((site / "site/groundwiki/pages.json").read_text())
    jsonschema.validate(data, json.loads((SCHEMAS / "pages.schema.json").read_text()))
    by_key = {p["key"]: p for p in data["pages"]}
    assert (by_key["derived"]["summary"], by_key["derived"]["summary_derived"]) == (DERIVED, True)
    assert by_key["written"]["summary_derived"] is False


def test_the_pages_json_schema_declares_the_flag():
    schema = json.loads((SCHEMAS / "pages.schema.json").read_text())
    item = schema["properties"]["pages"]["items"]
    assert item["properties"]["summary_derived"]["type"] == "boolean"
    assert "summary_derived" in item["required"]


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory):
    root = tmp_path_factory.mktemp("summaries-sidecar")
    # No Chroma answers there: the lexical lane alone is enough, and ready at once.
    options = {"sidecar": {"debounce_s": 0.1, "chroma_url": f"http://127.0.0.1:{free_port()}"}}
    write_wiki(root, PAGES, options=options)
    process, base = _serve(root)
    yield base
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_search_hits_say_which_summaries_are_derived(sidecar):
    status, data = call(sidecar, "/search?q=flutter%20grows")
    assert status == 200, data
    hit = next(h for h in data["hits"] if h["key"] == "derived")
    assert (hit["summary"], hit["summary_derived"]) == (DERIVED, True)


def test_hydrated_pages_say_which_summaries_are_derived(sidecar):
    status, data = call(sidecar, "/pages", {"ids": ["derived", "written"]})
    assert status == 200, data
    flags = {p["key"]: p["summary_derived"] for p in data["pages"]}
    assert flags == {"derived": True, "written": False}


def test_the_openapi_document_declares_the_flag_on_pages_and_hits(sidecar):
    status, spec = call(sidecar, "/openapi.json")
    assert status == 200
    schemas = json.dumps(spec)
    assert schemas.count('"summary_derived": {"type": "boolean"') >= 2
