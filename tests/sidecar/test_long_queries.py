"""Whole questions, as agents paste them: a real sidecar process (Whoosh, Chroma and the default
embedding model, loaded in that process, never in pytest's) answers them, never refusing one
for length below MAX_QUERY_CHARS, and says what each lane left out to bound its work."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.parse
from pathlib import Path

import jsonschema
import pytest
from groundwiki_sidecar.api.response_schemas import (
    MAX_GET_QUERY_CHARS,
    MAX_QUERY_CHARS,
    search_response,
)
from groundwiki_sidecar.index.bm25f import MAX_QUERY_TERMS
from helpers.sidecar_helpers import wait_for
from helpers.wikis import page, write_wiki
from test_sidecar_api import ENV, _serve, call

pytestmark = pytest.mark.sidecar

BIN = Path(sys.executable).parent
# More distinct words than the lexical lane scores of one query, each on a page of the wiki:
# a question using them all makes the lane leave some out.
GLOSSARY = [f"glossterm{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(MAX_QUERY_TERMS + 40)]
QUESTION = (
    "Why does the wing flutter at high speed, and what do the notes say about it? "
    + " ".join(GLOSSARY)
    + ". "
)


def question(chars: int) -> str:
    return (QUESTION * (chars // len(QUESTION) + 1))[:chars]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("long")
    write_wiki(
        root,
        {
            "index.md": page(kind="overview", title="Home", summary="Start here.", body="# Home\n"),
            "wing.md": page(
                title="Wing flutter",
                summary="Why wings flutter at speed.",
                body="# Wing flutter\n\nFlutter. <!-- from: raw-sources/notes.md#L3 -->\n",
            ),
            "glossary.md": page(
                title="Glossary", summary="Terms.", body="# Glossary\n\n" + " ".join(GLOSSARY)
            ),
        },
        {"notes.md": "# Notes\n\nThe wing flutters at high speed.\n\n" + " ".join(GLOSSARY)},
        {"sidecar": {"debounce_s": 0.1}},
    )
    process, base = _serve(root)

    def semantic_answers() -> bool:  # its query session starts on the first search
        lanes = call(base, "/search?q=wing")[1]["lanes"]
        return any(lane["name"] == "semantic" and lane["state"] == "ok" for lane in lanes)

    wait_for(semantic_answers, timeout=60, what="the semantic lane")
    yield root, base
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def test_a_5000_character_question_has_hits_from_every_lane_and_says_what_was_bounded(served):
    _, base = served
    text = question(5000)
    status, data = call(base, "/search", {"query": text})
    assert status == 200, data
    states = {lane["name"]: lane["state"] for lane in data["lanes"]}
    assert states["lexical"] == states["semantic"] == "ok"
    found = {lane for hit in data["hits"] for lane in hit["lanes"]}
    assert {"lexical", "semantic"} <= found
    assert data["query_truncated"] is True
    assert set(data["bounded"]) == {"lexical", "semantic"}
    assert f"scored the {MAX_QUERY_TERMS}" in data["bounded"]["lexical"]
    assert "word pieces" in data["bounded"]["semantic"]
    jsonschema.validate(data, search_response("page"))


def test_a_get_takes_a_question_as_long_as_a_url_can_carry_in_any_script(served):
    """4,000 characters of 4 UTF-8 bytes each: 48 KB percent-encoded, under the HTTP server's
    64 KB."""
    _, base = served
    text = "\U0001d400" * MAX_GET_QUERY_CHARS  # 𝐀, MATHEMATICAL BOLD CAPITAL A
    status, data = call(base, "/search?" + urllib.parse.urlencode({"q": text}))
    assert status == 200, data
    assert data["query"] == text


def test_a_short_query_says_nothing_was_bounded(served):
    _, base = served
    status, data = call(base, "/search?q=wing%20flutter")
    assert status == 200
    assert data["query_truncated"] is False and "bounded" not in data


def test_8000_cjk_characters_by_post_are_answered(served):
    """72 KB once percent-encoded: more than the HTTP server takes in a URL, so by POST."""
    _, base = served
    text = ("机翼在高速时为什么会颤振？请说明原因。" * 500)[:8000]
    status, data = call(base, "/search", {"query": text, "limit": 5})
    assert status == 200, data
    assert data["query"] == text
    assert data["query_truncated"] is True and "semantic" in data["bounded"]


def test_chunk_search_by_post_takes_a_long_question(served):
    _, base = served
    status, data = call(base, "/chunks/search", {"query": question(5000), "explain": True})
    assert status == 200, data
    assert data["hits"] and data["query_truncated"] is True
    assert "lexical" in data["bounded"]


def test_a_post_search_takes_the_parameters_of_the_get(served):
    _, base = served
    by_get = call(base, "/search?q=wing%20flutter&limit=1&lanes=lexical")[1]
    by_post = call(base, "/search", {"query": "wing flutter", "limit": 1, "lanes": ["lexical"]})[1]
    assert by_post["hits"] == by_get["hits"] and len(by_post["hits"]) == 1
    assert [lane["name"] for lane in by_post["lanes"]] == ["lexical"]


def test_a_query_over_the_limit_is_refused_naming_it(served):
    _, base = served
    status, data = call(base, "/search", {"query": "x" * (MAX_QUERY_CHARS + 1)})
    assert (status, data["error"]) == (422, "query_too_long")
    assert str(MAX_QUERY_CHARS) in data["message"]


def test_groundwiki_query_sends_a_long_question_and_says_what_was_bounded(served):
    root, base = served
    text = ("机翼在高速时为什么会颤振？" * 700)[:8000]  # too long for a URL
    port = base.rpartition(":")[2]
    shown = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "query", text, "--port", port],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "long query: the semantic lane left out" in shown.stdout
    as_json = subprocess.run(
        [str(BIN / "groundwiki"), "-f", str(root / "mkdocs.yml"), "query", text, "--json",
         "--port", port],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert json.loads(as_json.stdout)["query_truncated"] is True
