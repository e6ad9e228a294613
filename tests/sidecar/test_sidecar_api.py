"""The HTTP API of a real sidecar process on 127.0.0.1, over real indexes of a fixture wiki."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from groundwiki.core import compile_wiki, load_config
from groundwiki.core.evidence.lock import write_lock
from groundwiki.core.render.artifacts import pages_index
from groundwiki_sidecar.api.response_schemas import MAX_GET_QUERY_CHARS, MAX_QUERY_CHARS
from groundwiki_sidecar.search.query import Fused, LaneRun, fuse
from helpers.sidecar_helpers import wait_for
from helpers.wikis import page, write_wiki
from test_sidecar_process import free_port

BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "GROUNDWIKI_TOKEN": ""}
OLD_LINE = "The wing flutters when the airspeed passes the critical flutter speed of the section."
NOTES = (
    "# Notes\n\n"
    f"{OLD_LINE}\n\n"
    "Boundary layers thicken downstream and separate where the pressure rises too fast.\n"
)


def call(base: str, path: str, body: object | None = None, raw: bytes | None = None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def _wiki(root: Path, sidecar: dict | None = None) -> None:
    write_wiki(
        root,
        {
            "index.md": page(kind="overview", title="Home", summary="Start here.", body="# Home\n"),
            "wing.md": page(
                title="Wing flutter",
                summary="Why wings flutter at speed.",
                tags=["aero"],
                aliases=["flutter-page"],
                body="# Wing flutter\n\nFlutter. <!-- from: raw-sources/notes.md#L3 -->\n",
            ),
            "shock.md": page(
                title="Shock waves", summary="Shocks ahead of blunt bodies.", tags=["aero"],
                body="# Shocks\n\nSee [[wing]].\n",
            ),
            "secret.md": page(title="Wing secrets", summary="Wing flutter notes, never shown.", usage_mode="never"),
            "rules.md": page(title="House rules", summary="Always cite sources.", usage_mode="always"),
        },
        {"notes.md": NOTES},
        {"sidecar": {"debounce_s": 0.1, **(sidecar or {})}},
    )  # fmt: skip


def _serve(root: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    data["plugins"][0]["groundwiki"]["sidecar"]["port"] = port
    config.write_text(yaml.safe_dump(data))
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(config), "serve"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        assert process.poll() is None, process.stderr.read()
        try:
            status = call(base, "/status")[1]
        except (urllib.error.URLError, OSError):
            return False
        semantic = status["lanes"]["semantic"]["state"]
        return status["lanes"]["lexical"]["state"] == "ok" and semantic != "warming"

    wait_for(ready, timeout=120, what="the sidecar")
    return process, base


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    _wiki(root)
    config = load_config(root / "mkdocs.yml")
    wiki = compile_wiki(config)
    old_chunk = wiki.pointers["wing"][0].chunk_id
    write_lock(config.lock_path, wiki.lock_entries())
    notes = root / "raw-sources/notes.md"  # the evidence changes after the page was locked
    notes.write_text(NOTES.replace("critical flutter speed", "divergence speed"))
    process, base = _serve(root)
    yield base, root, old_chunk
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def hits(base: str, query: str, **params: str) -> list[dict]:
    extra = "".join(f"&{k}={v}" for k, v in params.items())
    status, data = call(base, f"/search?q={urllib.request.quote(query)}{extra}")
    assert status == 200, data
    return data["hits"]


def test_search_finds_pages_with_every_lane_and_pointers(api):
    base, _, _ = api
    status, data = call(base, "/search?q=why%20do%20wings%20flutter&explain=true")
    assert status == 200
    assert {lane["name"]: lane["state"] for lane in data["lanes"]} == {
        "lexical": "ok", "semantic": "ok", "token": "standby",
    }  # fmt: skip
    top = data["hits"][0]
    assert top["key"] == "wing" and set(top["lanes"]) == {"lexical", "semantic"}
    assert top["url"] == "wing/"
    assert top["pointers"] and top["pointers"][0]["source"] == "notes.md"
    assert set(top["explain"]) == set(top["lanes"])
    assert abs(sum(p["contribution"] for p in top["explain"].values()) - top["score"]) < 1e-6


def test_the_token_lane_fills_in_when_the_lexical_lane_finds_nothing(api):
    base, _, _ = api
    status, data = call(base, "/search?q=at")  # a stop word: nothing for BM25F
    assert status == 200
    states = {lane["name"]: lane["state"] for lane in data["lanes"]}
    assert states["lexical"] == "skipped" and states["token"] == "ok"
    wing = next(h for h in data["hits"] if h["key"] == "wing")  # "Why wings flutter at speed."
    assert "token" in wing["lanes"] and "lexical" not in wing["lanes"]


def test_lanes_narrow_a_search_to_the_lanes_named(api):
    base, _, _ = api
    _, pages = call(base, "/search?q=wing%20flutter&lanes=lexical,token")
    assert [lane["name"] for lane in pages["lanes"]] == ["lexical", "token"]
    _, chunks = call(base, "/chunks/search?q=boundary%20layers&lanes=semantic")
    assert [lane["name"] for lane in chunks["lanes"]] == ["semantic"]


def test_the_same_query_gives_the_same_order(api):
    base, _, _ = api
    first = [h["key"] for h in hits(base, "wing shock flutter", limit="20")]
    assert first == [h["key"] for h in hits(base, "wing shock flutter", limit="20")]


def test_ties_break_on_lanes_then_key():
    runs = [
        LaneRun("lexical", "ok", ("b", "a")),
        LaneRun("token", "ok", ("a", "b")),
        LaneRun("semantic", "ok", ("c",)),
    ]
    fused = fuse(runs, {"lexical": 1.0, "token": 1.0, "semantic": 1.0}, 60)
    assert [f.id for f in fused][:2] == ["a", "b"]  # equal scores, equal lanes: by key
    assert fused[-1] == Fused("c", 1 / 61, {"semantic": (1, 1 / 61)})
    dropped = fuse(
        [LaneRun("lexical", "ok", ("x",)), LaneRun("semantic", "failed")], {"lexical": 1.5}, 60
    )
    assert dropped[0].contributions == {"lexical": (1, 1.5 / 61)}  # a failed lane adds nothing


def test_never_pages_are_never_returned_and_always_pages_are_flagged(api):
    base, _, _ = api
    keys = [h["key"] for h in hits(base, "wing flutter notes secrets", limit="50")]
    assert "secret" not in keys and "wing" in keys
    rules = next(h for h in hits(base, "house rules cite sources") if h["key"] == "rules")
    assert rules["flags"]["always"] is True
    status, overview = call(base, "/overview")
    assert status == 200
    assert [p["key"] for p in overview["pages"]] == ["index", "rules"]
    assert overview["pages"][0]["summary_derived"] is False  # "Start here." is the writer's


def test_tag_filters_narrow_the_hits(api):
    base, _, _ = api
    keys = {h["key"] for h in hits(base, "wing shock home rules", tags="aero")}
    assert keys and keys <= {"wing", "shock"}


def test_drift_is_reported_on_the_hit(api):
    base, _, _ = api
    wing = next(h for h in hits(base, "wing flutter") if h["key"] == "wing")
    assert wing["flags"]["drifted_sources"] == ["raw-sources/notes.md#L3"]


def test_pages_hydrate_by_key_or_alias_and_say_which(api):
    base, _, _ = api
    status, data = call(
        base, "/pages", {"ids": ["flutter-page", "shock", "nothing-here"], "include_body": True}
    )
    assert status == 200
    assert [(p["requested"], p["key"], p["via"]) for p in data["pages"]] == [
        ("flutter-page", "wing", "alias"), ("shock", "shock", "key"),
    ]  # fmt: skip
    assert "See [[wing]]" in data["pages"][1]["body"]
    assert data["missing"][0]["id"] == "nothing-here"


def test_a_pointer_has_one_shape_in_pages_json_and_in_the_answers(api):
    base, root, _ = api
    index = pages_index(compile_wiki(load_config(root / "mkdocs.yml")))
    published = next(entry for entry in index["pages"] if entry["key"] == "wing")["pointers"]
    _, hydrated = call(base, "/pages", {"ids": ["wing"]})
    assert published and hydrated["pages"][0]["pointers"] == published
    _, chunks = call(base, "/chunks", {"ids": [published[0]["chunk_id"]]})
    chunk = chunks["chunks"][0]  # a pointer reads like the chunk it leads to
    assert {k: chunk[k] for k in ("source", "start_line", "end_line")} == {
        k: published[0][k] for k in ("source", "start_line", "end_line")
    }


def test_chunks_come_back_verbatim_and_unknown_ids_are_never_dropped(api):
    base, root, _ = api
    _, search = call(base, "/chunks/search?q=boundary%20layers")
    chunk = search["hits"][0]
    status, data = call(base, "/chunks", {"ids": [chunk["id"], chunk["id"][:-1] + "x"]})
    assert status == 200
    text = (root / "raw-sources/notes.md").read_text()
    assert data["chunks"][0]["text"] in text
    assert data["missing"][0]["id"] == chunk["id"][:-1] + "x"
    assert chunk["id"] in data["missing"][0]["closest"]
    status, error = call(base, "/chunks", {"ids": ["ch_invented0000001"]})
    assert status == 404 and error["error"] == "unknown_chunks"
    assert error["missing"][0]["id"] == "ch_invented0000001"


def test_links_give_the_graph_around_a_page(api):
    base, _, _ = api
    status, data = call(base, "/pages/wing/links")
    assert status == 200
    assert [b["key"] for b in data["backlinks"]] == ["shock"]
    assert data["sources"][0]["citation"] == "raw-sources/notes.md#L3"
    assert call(base, "/pages/shock/links")[1]["outgoing"][0]["key"] == "wing"
    assert call(base, "/pages/nowhere/links")[0] == 404


def test_verify_gives_every_status(api):
    base, _, old_chunk = api
    _, found = call(base, "/pages", {"ids": ["wing"]})
    current = found["pages"][0]["pointers"][0]["chunk_id"]
    _, chunk = call(base, "/chunks", {"ids": [current]})
    quoted = "As the notes say: " + chunk["chunks"][0]["text"].split("\n")[-1]
    answer = {"answer": quoted, "chunks": [current, old_chunk], "pages": ["wing", "shock"]}
    status, data = call(base, "/verify", answer)
    assert status == 200
    statuses = {(c["id"], c["status"]) for c in data["chunks"]}
    assert (current, "quote") in statuses
    assert (old_chunk, "drifted") in statuses
    paraphrased = call(
        base,
        "/verify",
        {"answer": "Wings shake when fast.", "chunks": [current], "pages": ["wing"]},
    )[1]
    assert {(c["id"], c["status"]) for c in paraphrased["chunks"]} == {
        (current, "paraphrase"), (old_chunk, "drifted"),
    }  # fmt: skip
    unread = call(base, "/verify", {"answer": "x", "chunks": [old_chunk], "pages": ["wing"]})[1]
    assert {(c["id"], c["status"]) for c in unread["chunks"]} == {
        (old_chunk, "drifted"), (current, "uncited"),
    }  # fmt: skip
    none = call(base, "/verify", {"answer": "x", "chunks": [], "pages": ["wing"]})[1]
    assert {(c["id"], c["status"]) for c in none["chunks"]} == {
        (current, "none"), (old_chunk, "drifted"),
    }  # fmt: skip
    assert none["pages"] == [{"key": "wing", "drilled": 0, "pointers": 2, "status": "none"}]


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/search", None, 400, "missing_query"),
        ("/search?q=x&limit=0", None, 422, "bad_limit"),
        ("/search?q=x&limit=ten", None, 400, "bad_limit"),
        ("/search?q=" + "x" * (MAX_GET_QUERY_CHARS + 1), None, 422, "query_too_long"),
        (
            "/search",
            json.dumps({"query": "x" * (MAX_QUERY_CHARS + 1)}).encode(),
            422,
            "query_too_long",
        ),
        ("/search", b'{"query": "  "}', 400, "missing_query"),
        ("/search", b'{"query": "x", "lanes": ["bogus"]}', 422, "invalid_request"),
        ("/chunks/search", b'{"query": "x", "tags": ["aero"]}', 422, "invalid_request"),
        ("/search?q=x&explain=maybe", None, 400, "bad_explain"),
        ("/search?q=x&lanes=lexical,bogus", None, 400, "bad_lanes"),
        ("/search?q=x&lanes=,", None, 400, "bad_lanes"),
        ("/chunks/search?q=x&lanes=token", None, 400, "bad_lanes"),  # it ranks pages only
        ("/search?q=x&tags=" + "t" * 1001, None, 422, "bad_tags"),
        ("/search?q=x&kind=" + "k" * 101, None, 422, "bad_kind"),
        ("/pages/" + "k" * 301 + "/links", None, 422, "invalid_request"),
        ("/pages", b"{not json", 400, "bad_json"),
        ("/pages", b'{"ids": []}', 422, "invalid_request"),
        ("/pages", b'{"ids": ["a"], "extra": 1}', 422, "invalid_request"),
        ("/chunks", json.dumps({"ids": ["x"] * 101}).encode(), 422, "invalid_request"),
        ("/verify", b'{"chunks": []}', 422, "invalid_request"),
        ("/verify", b'{"answer": "' + b"x" * 300_000 + b'"}', 413, "body_too_large"),
        ("/no/such/endpoint", None, 404, "not_found"),
    ],
)
def test_malformed_requests_get_a_4xx_with_a_stable_code(api, path, body, status, code):
    base, _, _ = api
    got, data = call(base, path, raw=body)
    assert (got, data["error"]) == (status, code)
    assert data["message"]


def test_openapi_describes_every_endpoint(api):
    base, _, _ = api
    status, spec = call(base, "/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    assert {"/search", "/chunks/search", "/pages", "/chunks", "/pages/{key}/links", "/overview",
            "/verify", "/status", "/healthz"} <= set(spec["paths"])  # fmt: skip


def test_without_the_semantic_lane_search_still_answers_and_says_so(tmp_path):
    _wiki(tmp_path, {"chroma_url": f"http://127.0.0.1:{free_port()}"})
    process, base = _serve(tmp_path)
    try:
        status, data = call(base, "/search?q=wing%20flutter")
        assert status == 200 and data["hits"][0]["key"] == "wing"
        lanes = {lane["name"]: lane for lane in data["lanes"]}
        assert (
            lanes["semantic"]["state"] == "unavailable" and "Chroma" in lanes["semantic"]["reason"]
        )
        assert "semantic" not in data["hits"][0]["lanes"]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


async def _mcp_session_calls(read, write, old_chunk: str) -> dict[str, object]:
    from mcp import ClientSession

    async with ClientSession(read, write) as session:
        started = await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        found = await session.call_tool("search_wiki", {"query": "why do wings flutter"})
        # Every tool refuses what it does not take, and a value out of its range, in one line.
        refused = {}
        for name, tool in tools.items():
            required = {
                arg: _good_value(schema)
                for arg, schema in tool.input_schema["properties"].items()
                if arg in tool.input_schema.get("required", [])
            }
            unknown = await session.call_tool(name, {**required, "nosuchargument": 1})
            bad = await session.call_tool(name, {**required, "format": "yaml"})
            refused[name] = (unknown.is_error, unknown.content[0].text, bad.is_error,
                             bad.content[0].text)  # fmt: skip
        no_lane = await session.call_tool("search_wiki", {"query": "wing", "lanes": ["nosuchlane"]})
        overview = await session.call_tool("wiki_overview", {})
        context = await session.call_tool(
            "get_context", {"query": "why do wings flutter", "budget": 300, "style": "toon"}
        )
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        always = await session.read_resource("groundwiki://always")
        toon = await session.call_tool("search_wiki", {"query": "wing", "format": "toon"})
        top = found.structured_content["hits"][0]
        # A brief hit by default: its snippet's passage first, then the raw chunks it cites.
        pointer = next(chunk for chunk in top["chunk_ids"] if chunk.startswith("ch_"))
        chunks = await session.call_tool("get_chunks", {"ids": [pointer, "ch_invented0000001"]})
        invented = await session.call_tool("get_chunks", {"ids": ["ch_invented0000001"]})
        pages = await session.call_tool("get_pages", {"ids": ["flutter-page"]})
        links = await session.call_tool("page_links", {"key": "wing"})
        raw = await session.call_tool("search_chunks", {"query": "boundary layers"})
        checked = await session.call_tool(
            "verify_citations", {"answer": "x", "chunks": [old_chunk], "pages": ["wing"]}
        )
        cited = await session.call_tool(
            "cite_source", {"source": "raw-sources/notes.md", "text": "Boundary layers thicken"}
        )
        return {
            "tools": tools,
            "top": top["key"],
            "chunk_ids": [c["id"] for c in chunks.structured_content["chunks"]],
            "missing": chunks.structured_content["missing"][0]["id"],
            "invented_error": invented.is_error,
            "invented_text": invented.content[0].text,
            "alias": pages.structured_content["pages"][0]["via"],
            "backlinks": [b["key"] for b in links.structured_content["backlinks"]],
            "raw_hits": len(raw.structured_content["hits"]),
            "statuses": sorted(c["status"] for c in checked.structured_content["chunks"]),
            "cited": cited.structured_content["found"]["comment"],
            "version": started.server_info.version,
            "refused": refused,
            "no_lane": (no_lane.is_error, no_lane.content[0].text),
            "overview": [p["key"] for p in overview.structured_content["pages"]],
            "context": (context.structured_content["tokens"], context.content[0].text),
            "resources": resources,
            "always": always.contents[0].text,
            "text": found.content[0].text,
            "hit_keys": [hit["key"] for hit in found.structured_content["hits"]],
            "toon": toon.content[0].text,
            "annotations": {
                n: (t.annotations.read_only_hint, t.annotations.idempotent_hint)
                for n, t in tools.items()
            },
        }


def _good_value(schema: dict[str, object]) -> object:
    """A value a tool takes for a required argument of this schema."""
    if schema.get("type") == "array":
        return ["wing"]
    return "wing" if schema.get("type") == "string" else 1


def _check_mcp(result: dict[str, object]) -> None:
    from groundwiki import __version__
    from groundwiki_sidecar.api import catalog

    assert set(result["tools"]) == {op.tool.name for op in catalog.operations() if op.tool}
    assert set(result["tools"]) == {
        "search_wiki", "search_chunks", "get_pages", "get_chunks", "page_links", "verify_citations",
        "cite_source", "get_context", "wiki_overview",
    }  # fmt: skip
    assert result["version"] == __version__
    for name, (unknown, said, bad, bad_said) in result["refused"].items():
        assert unknown and bad, name
        assert said.startswith("unknown argument 'nosuchargument': ") and "\n" not in said, said
        assert name in said and "format" in said, said  # names the tool and what it takes
        assert bad_said == "format: 'yaml' is not one of json, compact, toon", bad_said
    assert result["no_lane"][0] and "nosuchlane" in result["no_lane"][1]
    assert result["overview"] == ["index", "rules"]
    tokens, block = result["context"]
    assert 0 < tokens <= 300 and "hits[" in block
    assert result["resources"] == {"groundwiki://overview", "groundwiki://always"}
    assert result["always"].startswith("Page `rules` ")  # the page marked usage_mode: always
    # Structured content once; the text says which pages, in a few lines, not the JSON again.
    assert result["text"].splitlines()[1].startswith("1. wing") and "{" not in result["text"]
    assert result["toon"].startswith("query: wing")
    assert all(hints == (True, True) for hints in result["annotations"].values())
    assert "verbatim" in result["tools"]["get_chunks"].description
    assert result["top"] == "wing"
    assert len(result["chunk_ids"]) == 1 and result["missing"] == "ch_invented0000001"
    assert result["invented_error"] and "closest" in result["invented_text"]
    assert result["alias"] == "alias"
    assert result["backlinks"] == ["shock"]
    assert result["raw_hits"] >= 1
    assert result["statuses"] == ["drifted", "uncited"]
    assert result["cited"] == "<!-- from: raw-sources/notes.md#L5 -->"


def test_an_mcp_client_over_streamable_http_calls_every_tool(api):
    import asyncio

    from mcp.client.streamable_http import streamable_http_client

    base, _, old_chunk = api

    async def run() -> dict[str, object]:
        async with streamable_http_client(f"{base}/mcp/") as (read, write, *_):
            return await _mcp_session_calls(read, write, old_chunk)

    result = asyncio.run(run())
    _check_mcp(result)
    # The brief, compact default answer has the hits the HTTP API's full answer has.
    status, http = call(base, f"/search?q={urllib.request.quote('why do wings flutter')}")
    assert status == 200 and [hit["key"] for hit in http["hits"]] == result["hit_keys"]


def test_an_mcp_client_over_stdio_calls_every_tool(api, tmp_path):
    import asyncio
    import shutil

    from mcp import StdioServerParameters, stdio_client

    _, served, old_chunk = api
    root = tmp_path / "copy"  # the served wiki's index folder belongs to the running sidecar
    shutil.copytree(served, root, ignore=shutil.ignore_patterns(".groundwiki"))
    params = StdioServerParameters(
        command=str(BIN / "groundwiki"),
        args=["-f", str(root / "mkdocs.yml"), "mcp"],
        env={**ENV, "GROUNDWIKI_TOKEN": ""},
    )

    async def run() -> dict[str, object]:
        async with stdio_client(params) as (read, write):
            return await _mcp_session_calls(read, write, old_chunk)

    _check_mcp(asyncio.run(run()))


def test_a_second_sidecar_on_the_same_index_is_refused(api):
    _, root, _ = api
    done = subprocess.run(
        [str(BIN / "groundwiki"), "-q", "-f", str(root / "mkdocs.yml"), "index"],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "is in use by pid" in done.stderr and "/mcp/" in done.stderr
