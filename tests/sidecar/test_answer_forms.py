"""Answers sized for a prompt: every answer in JSON, compact JSON and TOON with the same fields,
its cost in tokens reported; and the `context` block, which never passes its budget and holds
more hits in TOON than in JSON at the same budget. Over a real in-process sidecar of a small
wiki (Whoosh on disk, no embedding model) and the embedding model's own tokenizer."""

from __future__ import annotations

import json

import pytest
import toon_format
from groundwiki.core.sources.tokens import count_tokens
from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.answer_forms import compacted, tokens, written
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.context_pack import pack
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from helpers.wikis import page, write_wiki
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

PAGES = {
    "wing.md": page(title="Wing flutter", summary="Why wings flutter, and how to damp it.",
                    tags=["aero"], sources=["raw-sources/notes.md"],
                    body="The wing flutters at speed.\n<!-- from: raw-sources/notes.md#L3-L3 -->\n"),
    "index.md": page(title="Overview", summary="What this wiki covers.", kind="overview",
                     usage_mode="always"),
    "tail.md": page(title="Tail buffet", summary="Buffeting of the tail at high angles.",
                    tags=["aero"], body="Tail buffet follows wing flutter in a stall.\n"),
}  # fmt: skip
NOTES = "# Notes\n\nThe wing flutters at speed.\n\nDamping stops the flutter.\n"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("forms")
    write_wiki(root, PAGES, {"notes.md": NOTES})
    running = SidecarService(load_sidecar(root / "mkdocs.yml"), embed=False)
    running.start(watch=False)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def client(service):
    return TestClient(create_app(service), base_url="http://127.0.0.1")


def _expanded(compact: object, full: object) -> bool:
    """`compact` is `full` with empty fields left out, nothing else changed."""
    if isinstance(full, dict):
        assert isinstance(compact, dict)
        for key, value in full.items():
            if key not in compact:
                # Empty, or an object of empty fields only (flags none of which is set).
                assert compacted({key: value}) == {}, key
            else:
                _expanded(compact[key], value)
        assert set(compact) <= set(full)
    elif isinstance(full, list):
        assert isinstance(compact, list) and len(compact) == len(full)
        for left, right in zip(compact, full, strict=True):
            _expanded(left, right)
    else:
        assert compact == full
    return True


def test_every_operation_answers_the_same_fields_in_each_format(client):
    chunk = client.get("/chunks/search", params={"q": "flutter"}).json()["hits"][0]["id"]
    requests = [
        ("GET", "/search", {"params": {"q": "wing flutter"}}),
        ("GET", "/chunks/search", {"params": {"q": "flutter"}}),
        ("POST", "/pages", {"json": {"ids": ["wing"], "include_body": True}}),
        ("POST", "/chunks", {"json": {"ids": [chunk]}}),
        ("GET", "/pages/wing/links", {}),
        ("GET", "/overview", {}),
        ("GET", "/context", {"params": {"q": "wing flutter"}}),
        ("GET", "/status", {}),
    ]
    for method, path, options in requests:
        answers = {}
        for form in ("json", "compact", "toon"):
            params = {**options.get("params", {}), "format": form}
            response = client.request(method, path, **{**options, "params": params})
            assert response.status_code == 200, (path, form, response.text)
            cost = int(response.headers["x-groundwiki-tokens"])
            assert cost == tokens(response.text) and cost > 0, (path, form)
            answers[form] = response
        full = answers["json"].json()
        assert answers["json"].headers["content-type"].startswith("application/json")
        assert answers["toon"].headers["content-type"].startswith("text/toon")
        # Everything but the times the answers were made at: the same fields, the same values.
        volatile = {"took_ms", "synced_at", "since"}
        decoded = toon_format.loads(answers["toon"].text)
        assert _without(decoded, volatile) == _without(full, volatile), path
        assert _expanded(_without(answers["compact"].json(), volatile), _without(full, volatile))


def _without(value: object, keys: set[str]) -> object:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def test_toon_costs_fewer_tokens_than_json_for_a_search(client):
    answer = client.get("/search", params={"q": "wing flutter tail"}).json()
    assert len(answer["hits"]) >= 2
    assert tokens(written(answer, "toon")) < tokens(written(answer, "compact"))
    assert tokens(written(answer, "compact")) < tokens(written(answer, "json"))


def test_compact_leaves_out_only_what_is_empty():
    answer = {"a": 0, "b": 0.0, "c": None, "d": False, "e": "", "f": [], "g": {"h": []}, "i": [{}]}
    assert compacted(answer) == {"a": 0, "b": 0.0, "i": [{}]}


def test_an_unknown_format_is_refused_with_the_formats(client):
    response = client.get("/search", params={"q": "wing", "format": "yaml"})
    assert response.status_code == 422
    assert response.json()["error"] == "bad_format"
    assert "json, compact, toon" in response.json()["message"]


# --- the context block ------------------------------------------------------------------------


def test_the_context_block_holds_the_overview_then_the_hits_with_their_evidence(client):
    answer = client.get("/context", params={"q": "why does the wing flutter"}).json()
    assert answer["style"] == "markdown" and answer["tokens"] <= answer["budget"] == 2000
    assert answer["tokens"] == tokens(answer["block"])
    assert answer["overview"] == ["index"]
    assert answer["hits"][0]["key"] == "wing"
    block = answer["block"]
    assert block.index("## Overview") < block.index("Wing flutter")
    for chunk_id in answer["hits"][0]["chunk_ids"]:
        assert chunk_id in block
    # The IDs are real: they hydrate.
    ids = answer["hits"][0]["chunk_ids"]
    assert client.post("/chunks", json={"ids": ids}).json()["missing"] == []


def test_a_small_budget_leaves_hits_out_and_says_how_many(client):
    wide = client.get("/context", params={"q": "wing flutter tail", "budget": "4000"}).json()
    narrow = client.get("/context", params={"q": "wing flutter tail", "budget": "60"}).json()
    assert narrow["tokens"] <= 60
    assert len(narrow["hits"]) < len(wide["hits"])
    assert narrow["left_out"] == len(wide["hits"]) - len(narrow["hits"]) + wide["left_out"]


def _hit(n: int, words: list[str]) -> dict[str, object]:
    text = " ".join(words)
    return {
        "key": f"page-{n}",
        "title": f"Page {n}: {text[:30]}",
        "summary": text[:120],
        "score": 1.0 / (n + 1),
        "snippet": {"id": f"ch_{n:016x}", "text": text},
        "pointers": [{"chunk_id": f"ch_{n + 1000:016x}"}],
    }


_words = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
            max_size=12),
    min_size=1,
    max_size=60,
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    question=st.text(min_size=1, max_size=200),
    hits=st.lists(_words, max_size=12),
    budget=st.integers(min_value=1, max_value=1500),
    style=st.sampled_from(["markdown", "toon", "json"]),
)
def test_a_context_block_never_costs_more_than_its_budget(question, hits, budget, style):
    overview = [{"key": "index", "title": "Overview", "summary": "What the wiki covers."}]
    packed = pack(question, overview, [_hit(n, words) for n, words in enumerate(hits)], budget,
                  style)  # fmt: skip
    assert packed.tokens == (tokens(packed.block) if packed.block else 0)
    assert packed.tokens <= budget
    assert len(packed.hits) + packed.left_out == len(hits)
    if style == "json" and packed.block:
        json.loads(packed.block)
    if style == "toon" and packed.block:
        toon_format.loads(packed.block.rstrip("\n"))


def test_toon_holds_more_hits_than_json_at_the_same_budget(service):
    """On the handbook-sized shapes real searches give: ten hits, each with a title, summary,
    snippet and chunk IDs."""
    ops = Operations(service)
    found = ops.search("wing flutter tail buffet", 10)
    hits = found["hits"] * 40  # more hits than any budget here holds
    hits = [{**hit, "key": f"{hit['key']}-{n}"} for n, hit in enumerate(hits)]
    for budget in (400, 800, 1600):
        held = {
            style: len(pack("why does the wing flutter", [], hits, budget, style).hits)
            for style in ("toon", "json")
        }
        assert held["json"] < len(hits) and held["toon"] < len(hits), (budget, held)
        assert held["toon"] >= held["json"] * 1.3, (budget, held)


def test_the_context_operation_is_in_the_catalogue_with_its_tool():
    operation = next(op for op in catalog.operations() if op.name == "context")
    assert operation.tool is not None and operation.tool.name == "get_context"
    assert {"budget", "style", "query", "limit"} <= set(operation.tool_schema()["properties"])


# Pieces that test the tokenizer's cuts: quotes and escapes, line breaks, accents and a
# combining mark (stripped when lower-cased), CJK (cut per character), an emoji, control and
# zero-width characters, ligatures, and a word past WordPiece's 100 characters (one [UNK]).
TRICKY = st.lists(
    st.sampled_from(
        [*'"\\\n\r\t ,:{}[]aZéñß日本語🙂\u0301\u200b\x00\x07ﬁİ', "word", "Straße", "x" * 120]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TRICKY, max_size=8), st.booleans())
def test_counting_by_pieces_gives_the_tokenizers_count_of_the_whole(strings, ascii_only):
    """The text is counted piece by piece between quotes and line breaks, with each piece's
    count kept: the sum must be the tokenizer's count of the whole text, JSON or not."""
    answer = json.dumps({"hits": [{"title": s, "summary": s[::-1]} for s in strings]},
                        ensure_ascii=ascii_only)  # fmt: skip
    for text in (answer, "\n".join(strings), '"'.join(strings)):
        assert tokens(text) == max(count_tokens([text])[0] - 2, 0)
        assert tokens(text) == max(count_tokens([text])[0] - 2, 0)  # from the kept pieces
