"""The operations catalogue: each operation declared once, and every surface derived from it
(the HTTP routes, the OpenAPI document, the MCP tools), over a real in-process sidecar of a
small wiki (Whoosh on disk, no embedding model)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from typing import Any

import jsonschema
import pytest
from groundwiki import __version__
from groundwiki.core import compile_wiki
from groundwiki.core.evidence.lock import write_lock
from groundwiki_sidecar import lanes
from groundwiki_sidecar.api import catalog
from groundwiki_sidecar.api.app import create_app
from groundwiki_sidecar.api.catalog import Operation, Tool
from groundwiki_sidecar.api.http_routes import routes
from groundwiki_sidecar.api.mcp_tools import build_mcp
from groundwiki_sidecar.api.openapi import openapi, resolved
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.response_schemas import (
    MAX_BODY_BYTES,
    MAX_GET_QUERY_CHARS,
    MAX_IDS,
    MAX_KEY_CHARS,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
)
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import load_sidecar
from helpers.sidecar_helpers import small_wiki
from helpers.wikis import page, write_wiki
from mcp.server.mcpserver.exceptions import ToolError
from starlette.applications import Starlette
from starlette.testclient import TestClient

pytestmark = pytest.mark.sidecar


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("operations")
    sidecar = small_wiki(root)
    shock = page(title="Shock waves", summary="Shocks ahead of blunt bodies.", body="See [[wing]].")
    (root / "wiki/shock.md").write_text(shock)
    write_lock(sidecar.config.lock_path, compile_wiki(sidecar.config).lock_entries())
    running = SidecarService(sidecar, embed=False)
    running.start(watch=False)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def ops(service):
    operations = Operations(service)
    yield operations
    operations.close()


def tools(ops: Operations, catalogue: tuple[Operation, ...] | None = None) -> dict[str, Any]:
    listed = asyncio.run(build_mcp(ops, catalogue).list_tools())
    return {tool.name: tool for tool in listed}


def test_the_lanes_parameter_and_the_lane_names_are_the_registry_lanes_of_their_kind():
    paths = resolved(openapi(__version__))["paths"]
    for path, kind in (("/search", "page"), ("/chunks/search", "chunk")):
        operation = paths[path]["get"]
        lanes_param = next(p for p in operation["parameters"] if p["name"] == "lanes")
        assert (lanes_param["style"], lanes_param["explode"]) == ("form", False)
        assert lanes_param["schema"]["items"]["enum"] == list(lanes.names(kind))
        answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
        lane = answer["properties"]["lanes"]["items"]["properties"]["name"]
        assert lane["enum"] == list(lanes.names(kind))
    assert lanes.names("chunk") != lanes.names("page")  # else the check above proves little


def test_every_operation_is_a_route_a_documented_path_and_maybe_a_tool(ops):
    paths = resolved(openapi(__version__))["paths"]
    served = {(route.path, method) for route in routes(ops) for method in route.methods or ()}
    listed = tools(ops)
    for operation in catalog.operations():
        assert operation.method.lower() in paths[operation.path], operation.name
        pattern = operation.path.replace("{key}", "{key:path}")
        assert (pattern, operation.method) in served, operation.name
        if operation.tool is not None:
            assert listed[operation.tool.name].description == operation.tool.description
    assert len(listed) == sum(1 for operation in catalog.operations() if operation.tool)


def test_the_mcp_tools_take_the_endpoints_arguments(ops):
    """Every argument an endpoint takes, under the body's names (tags and lanes as lists), and
    the one format argument every operation has; nothing the SDK read off a signature."""
    arguments = {
        name: (
            sorted(tool.input_schema["properties"]),
            sorted(tool.input_schema.get("required", [])),
            tool.input_schema.get("additionalProperties"),
        )
        for name, tool in tools(ops).items()
    }
    both = ["explain", "format", "lanes", "limit", "query"]
    assert arguments == {
        "search_wiki": (sorted([*both, "detail", "kind", "tags"]), ["query"], False),
        "search_chunks": (both, ["query"], False),
        "get_context": (
            ["budget", "format", "kind", "limit", "query", "style", "tags"],
            ["query"],
            False,
        ),
        "get_pages": (["format", "ids", "include_body"], ["ids"], False),
        "get_chunks": (["format", "ids"], ["ids"], False),
        "page_links": (["format", "key"], ["key"], False),
        "wiki_overview": (["format"], [], False),
        "verify_citations": (["answer", "chunks", "format", "pages"], ["answer"], False),
        "cite_source": (["format", "source", "text"], ["source", "text"], False),
    }
    for name, tool in tools(ops).items():
        operation = next(op for op in catalog.operations() if op.tool and op.tool.name == name)
        assert tool.input_schema == operation.tool_schema(), name
        for argument, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{name}.{argument} has no description"
        assert tool.annotations.read_only_hint and tool.annotations.idempotent_hint, name


def test_a_limit_is_the_same_over_http_and_mcp(ops):
    paths = resolved(openapi(__version__))["paths"]
    http = {p["name"]: p["schema"] for p in paths["/search"]["get"]["parameters"]}
    mcp = tools(ops)
    search = mcp["search_wiki"].input_schema["properties"]
    assert http["limit"]["maximum"] == search["limit"]["maximum"] == MAX_LIMIT
    posted = paths["/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert posted["properties"]["query"]["maxLength"] == search["query"]["maxLength"]
    assert search["query"]["maxLength"] == MAX_QUERY_CHARS
    assert http["q"]["maxLength"] == MAX_GET_QUERY_CHARS  # a URL must fit the server's 64 KB
    body = paths["/chunks"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    ids = mcp["get_chunks"].input_schema["properties"]["ids"]
    assert body["properties"]["ids"]["maxItems"] == ids["maxItems"] == MAX_IDS
    assert body["properties"]["ids"]["items"]["maxLength"] == ids["items"]["maxLength"]
    assert ids["items"]["maxLength"] == MAX_KEY_CHARS


def test_the_mcp_search_takes_a_whole_question_and_refuses_one_over_the_limit(ops):
    server = build_mcp(ops)
    question = ("Why does the wing flutter at high speed, and what do the notes say? " * 80)[:5000]
    result = asyncio.run(server.call_tool("search_wiki", {"query": question}))
    answer = result.structured_content
    assert answer["hits"][0]["key"] == "wing"
    # A few distinct words: nothing left out (a compact answer leaves out what is false).
    assert "query_truncated" not in answer
    with pytest.raises(ToolError, match=f"at most {MAX_QUERY_CHARS} characters"):
        asyncio.run(server.call_tool("search_wiki", {"query": "x" * (MAX_QUERY_CHARS + 1)}))


def _undeclared(value: Any, schema: dict[str, Any], where: str = "") -> list[str]:
    """Fields of an answer its schema does not declare: a schema that validates an answer
    only because it says nothing about it is no description of it."""
    if isinstance(value, list):
        items = schema.get("items", {})
        return [f for n, item in enumerate(value) for f in _undeclared(item, items, f"{where}/{n}")]
    if not isinstance(value, dict):
        return []
    if "anyOf" in schema:  # the arm that declares the most of it
        return min((_undeclared(value, arm, where) for arm in schema["anyOf"]), key=len)
    found = []
    declared = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        if key in declared:
            found += _undeclared(item, declared[key], f"{where}/{key}")
        elif isinstance(extra, dict):
            found += _undeclared(item, extra, f"{where}/{key}")
        else:
            found.append(f"{where}/{key}")
    return found


def test_every_answer_is_declared_field_by_field(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    chunk = client.get("/chunks/search", params={"q": "boundary layers"}).json()["hits"][0]["id"]
    requests = {
        "search": ("GET", "/search", {"params": {"q": "wing flutter", "explain": "true"}}),
        "search_chunks": ("GET", "/chunks/search", {"params": {"q": "wing", "explain": "1"}}),
        "search_by_body": ("POST", "/search", {"json": {"query": "wing", "explain": True}}),
        "search_chunks_by_body": ("POST", "/chunks/search", {"json": {"query": "wing"}}),
        "pages": ("POST", "/pages", {"json": {"ids": ["wing", "nope"], "include_body": True}}),
        "chunks": ("POST", "/chunks", {"json": {"ids": [chunk, "ch_nope"]}}),
        "links": ("GET", "/pages/wing/links", {}),
        "overview": ("GET", "/overview", {}),
        "verify": (
            "POST",
            "/verify",
            {"json": {"answer": "Wings flutter.", "chunks": [chunk], "pages": ["wing"]}},
        ),
        "cite": ("POST", "/cite", {"json": {"source": "notes.md", "text": "wing flutters at"}}),
        "context": ("GET", "/context", {"params": {"q": "wing flutter", "budget": "200"}}),
        "status": ("GET", "/status", {}),
        "healthz": ("GET", "/healthz", {}),
    }
    assert set(requests) == {operation.name for operation in catalog.operations()}
    for operation in catalog.operations():
        method, path, options = requests[operation.name]
        response = client.request(method, path, **options)
        assert response.status_code == 200, (operation.name, response.text)
        answer = response.json()
        jsonschema.validate(answer, operation.response)
        assert _undeclared(answer, operation.response) == [], operation.name


def test_cite_answers_the_comment_or_the_closest_lines_and_names_an_unknown_source(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    wiki_files = sorted(service.sidecar.config.root.rglob("*.md"))
    before = [path.read_bytes() for path in wiki_files]
    found = client.post(
        "/cite", json={"source": "raw-sources/notes.md", "text": "Boundary layers thicken"}
    ).json()
    assert found["found"]["comment"] == "<!-- from: raw-sources/notes.md#L5 -->"
    assert found["found"]["text"] == "Boundary layers thicken downstream."
    near = client.post(
        "/cite", json={"source": "notes.md", "text": "Boundary layers get thinner downstream"}
    ).json()
    assert near["found"] is None and near["candidates"][0]["citation"].endswith("notes.md#L5")
    unknown = client.post("/cite", json={"source": "note.md", "text": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_source"
    assert unknown.json()["closest"] == ["raw-sources/notes.md"]
    assert [path.read_bytes() for path in wiki_files] == before  # read-only: nothing written


def test_a_body_too_large_is_a_declared_answer_of_every_operation(service):
    """BodyLimit refuses an oversized body on every route, a GET's too, before any handler."""
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    document = resolved(openapi(__version__))["paths"]
    for operation in catalog.operations():
        path = operation.path.replace("{key}", "wing")
        response = client.request(operation.method, path, content=b"x" * (MAX_BODY_BYTES + 1))
        assert response.status_code == 413, (operation.name, response.text)
        assert "413" in document[operation.path][operation.method.lower()]["responses"], path


def test_a_hit_with_more_pointers_than_five_is_as_documented(tmp_path):
    """How many pointers a hit carries is the wiki's max_pointers, not a number of the API."""
    sentences = " ".join(f"Sentence {n} tells how wings flutter at speed." for n in range(8))
    evidence = "\n\n".join(f"Paragraph {p}. {sentences}" for p in range(12)) + "\n"
    write_wiki(
        tmp_path,
        {"wing.md": page(title="Wing flutter", sources=["raw-sources/a.md"])},
        {"a.md": evidence},
        {"max_pointers": 8},
    )
    running = SidecarService(load_sidecar(tmp_path / "mkdocs.yml"), embed=False)
    running.start(watch=False)
    try:
        client = TestClient(create_app(running), base_url="http://127.0.0.1")
        document = resolved(client.get("/openapi.json").json())
        answer = client.get("/search", params={"q": "wing flutter"}).json()
    finally:
        running.stop()
    assert len(answer["hits"][0]["pointers"]) == 8
    search = document["paths"]["/search"]["get"]["responses"]["200"]
    jsonschema.validate(answer, search["content"]["application/json"]["schema"])


# The example of the issue: an alias of an operation is one more entry in the catalogue, and
# the route, the document and the tool follow.
NEIGHBOURS = replace(
    next(operation for operation in catalog.operations() if operation.name == "links"),
    name="neighbours",
    path="/pages/{key}/neighbours",
    summary="The pages around a page (an alias of /pages/{key}/links)",
    tool=Tool("page_neighbours", "The pages linking to and from a page, and its sources."),
)


def test_an_operation_added_to_the_catalogue_is_served_documented_and_a_tool(ops):
    catalogue = (*catalog.operations(), NEIGHBOURS)
    client = TestClient(Starlette(routes=routes(ops, catalogue)), base_url="http://127.0.0.1")
    response = client.get("/pages/wing/neighbours")
    assert response.status_code == 200
    assert [link["key"] for link in response.json()["backlinks"]] == ["shock"]
    assert client.get("/pages/nowhere/neighbours").json()["error"] == "unknown_page"
    assert "/pages/{key}/neighbours" in client.get("/openapi.json").json()["paths"]
    server = build_mcp(ops, catalogue)
    result = asyncio.run(server.call_tool("page_neighbours", {"key": "wing"}))
    assert [link["key"] for link in result.structured_content["backlinks"]] == ["shock"]


# --- the document a client generator reads, and requests refused alike on every surface -------


def test_the_document_validates_as_the_openapi_version_it_declares():
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation import OpenAPIV31SpecValidator

    document = openapi(__version__)
    assert document["openapi"] == "3.1.0"
    validate(document, cls=OpenAPIV31SpecValidator)
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert sorted(ids) == sorted(operation.name for operation in catalog.operations())
    # Every name is used, every reference names something.
    text = json.dumps(document)
    named = document["components"]["schemas"]
    for name in named:
        assert text.count(f'"#/components/schemas/{name}"') >= 1, f"{name} is never used"
    for ref in re.findall(r'"\$ref": "#/components/schemas/(\w+)"', text):
        assert ref in named
    assert "PageHit" in named and "Pointer" in named and "Error" in named


def test_an_unknown_parameter_is_refused_alike_in_a_query_and_a_body(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    by_query = client.get("/search", params={"q": "wing", "nosuch": "1"})
    by_body = client.post("/search", json={"query": "wing", "nosuch": 1})
    for response, where in ((by_query, "GET /search"), (by_body, "POST /search")):
        assert response.status_code == 422, response.text
        assert response.json()["error"] == "invalid_request"
        message = response.json()["message"]
        assert message.startswith("unknown "), message
        assert "'nosuch'" in message and f"{where} takes " in message and "limit" in message
    # A POST's query string is checked too: a parameter there is not silently dropped.
    assert client.post("/pages?nosuch=1", json={"ids": ["wing"]}).status_code == 422


def test_a_body_takes_the_query_as_q_as_the_get_spells_it(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    by_q = client.post("/search", json={"q": "wing flutter"}).json()
    by_query = client.post("/search", json={"query": "wing flutter"}).json()
    assert [h["key"] for h in by_q["hits"]] == [h["key"] for h in by_query["hits"]] != []
    both = client.post("/search", json={"q": "wing", "query": "shock"})
    assert both.status_code == 422 and "not both" in both.json()["message"]
    neither = client.post("/search", json={"limit": 3})
    assert neither.status_code == 422 and "query" in neither.json()["message"]


def test_a_long_list_in_an_error_is_told_by_its_count(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    ids = [f"ch_{n:016x}" for n in range(MAX_IDS + 1)]
    response = client.post("/chunks", json={"ids": ids})
    assert response.status_code == 422
    message = response.json()["message"]
    assert message == f"ids: at most {MAX_IDS} items; this list has {MAX_IDS + 1}"
    wrong_type = client.post("/pages", json={"ids": "wing" * 100})
    assert len(wrong_type.json()["message"]) < 200


def test_lanes_repeated_mean_the_same_as_lanes_comma_separated(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    repeated = client.get("/search?q=wing&lanes=lexical&lanes=token").json()
    joined = client.get("/search?q=wing&lanes=lexical,token").json()
    assert [run["name"] for run in repeated["lanes"]] == ["lexical", "token"]
    assert repeated["hits"] == joined["hits"]
    twice = client.get("/search?q=wing&limit=3&limit=4")
    assert twice.status_code == 422 and "give limit once" in twice.json()["message"]


def test_kind_takes_the_page_contracts_kinds_only(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    assert client.get("/search", params={"q": "wing", "kind": "page"}).status_code == 200
    bogus = client.get("/search", params={"q": "wing", "kind": "bogus"})
    assert bogus.status_code == 422 and bogus.json()["error"] == "bad_kind"
    assert "page, overview" in bogus.json()["message"]


def test_an_unknown_page_s_links_name_the_closest_keys(service):
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    response = client.get("/pages/wnig/links")
    assert response.status_code == 404
    assert response.json()["missing"][0]["closest"][0] == "wing"
    assert "closest: wing" in response.json()["message"]
