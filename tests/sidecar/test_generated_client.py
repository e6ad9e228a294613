"""A client generated from the sidecar's OpenAPI document by openapi-python-client runs a search,
a hydration and a drill-down against a real sidecar process, and reads every answer into the
document's typed models: a construct the generator skips, a field the document leaves out or an
answer that does not fit its schema fails here."""

from __future__ import annotations

import importlib
import json
import pkgutil
import signal
import subprocess
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from groundwiki import __version__
from groundwiki_sidecar.api.openapi import openapi
from openapi_python_client.strings import snake_case
from test_sidecar_api import BIN, NOTES, _serve, _wiki

PACKAGE = "groundwiki_sidecar_generated_client"  # a name no other module of the tests takes
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@dataclass(frozen=True)
class Generated:
    document: dict[str, Any]
    package: ModuleType
    functions: dict[str, ModuleType]  # an operation's module (under api/<tag>/) by its name
    output: str  # what the generator printed


def _operations(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def _functions(package: str) -> dict[str, ModuleType]:
    """Every operation module the generator wrote, whatever tag folder it put it in."""
    api = importlib.import_module(f"{package}.api")
    found = {}
    for tag in pkgutil.iter_modules(api.__path__, f"{api.__name__}."):
        folder = importlib.import_module(tag.name)
        for module in pkgutil.iter_modules(folder.__path__, f"{folder.__name__}."):
            found[module.name.rsplit(".", 1)[1]] = importlib.import_module(module.name)
    return found


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    root = tmp_path_factory.mktemp("generated_client")
    document = openapi(__version__)
    (root / "openapi.json").write_text(json.dumps(document))
    # No post hooks: by default the generator runs ruff over what it wrote, which is slow and no
    # part of what this proves. --path: the document is read from disk, never over the network.
    config = {"package_name_override": PACKAGE, "post_hooks": []}
    (root / "config.json").write_text(json.dumps(config))
    run = subprocess.run(
        [
            str(BIN / "openapi-python-client"), "generate", "--path", str(root / "openapi.json"),
            "--output-path", str(root / PACKAGE), "--meta", "none",
            "--config", str(root / "config.json"),
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    sys.path.insert(0, str(root))
    try:
        yield Generated(document, importlib.import_module(PACKAGE), _functions(PACKAGE), output)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("generated_client_wiki")
    _wiki(root)
    process, base = _serve(root)
    yield base, root
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


@pytest.fixture
def client(generated: Generated, live: tuple[str, Path]) -> Iterator[Any]:
    # No bearer token: the test sidecar has none (GROUNDWIKI_TOKEN empty, on loopback). The
    # functions are typed for an AuthenticatedClient (`security` names the bearer scheme), and
    # take a Client as well.
    with generated.package.Client(
        base_url=live[0], timeout=httpx.Timeout(30), raise_on_unexpected_status=True
    ) as found:
        yield found


def _function(generated: Generated, operation_id: str) -> ModuleType:
    name = snake_case(operation_id)
    assert name in generated.functions, f"no function {name}; made: {sorted(generated.functions)}"
    return generated.functions[name]


def _call(generated: Generated, client: Any, operation_id: str, **arguments: Any) -> Any:
    """The operation's typed answer, after checking it is a 200 read into a generated model."""
    response = _function(generated, operation_id).sync_detailed(client=client, **arguments)
    assert response.status_code == 200, response.content
    return _typed(response.parsed)


def _body(generated: Generated, operation_id: str, **fields: Any) -> Any:
    """The operation's request body, built as the generated model its function takes."""
    function = _function(generated, operation_id).sync_detailed
    return typing.get_type_hints(function)["body"](**fields)


def _typed(model: Any) -> Any:
    """`model`, once it is shown to be a generated model with no field the document leaves out."""
    assert type(model).__module__.startswith(f"{PACKAGE}.models."), type(model)
    assert getattr(model, "additional_properties", {}) == {}, "fields the document does not name"
    return model


def test_the_generator_makes_a_function_of_every_operation(generated):
    # It skips, with a warning, an operation it cannot read (an unsupported content type, say).
    assert "Warning" not in generated.output, generated.output
    operations = _operations(generated.document)
    unnamed = [name for name, operation in operations if "operationId" not in operation]
    assert not unnamed, f"no operationId: {unnamed}"
    named = sorted(snake_case(operation["operationId"]) for _, operation in operations)
    assert sorted(generated.functions) == named
    for module in generated.functions.values():
        assert callable(module.sync_detailed) and callable(module.asyncio_detailed)


def test_the_client_is_generated_from_what_the_sidecar_serves(generated, client):
    served = client.get_httpx_client().get("/openapi.json")
    assert served.status_code == 200 and served.json() == generated.document


def test_a_generated_client_searches_hydrates_and_drills_down(generated, client, live):
    _, root = live
    # Search: the page that answers the question, with the chunks it cites.
    found = _call(generated, client, "search", q="why do wings flutter")
    hit = _typed(next(hit for hit in found.hits if hit.key == "wing"))
    assert hit.title == "Wing flutter" and hit.url == "wing/"
    pointer = _typed(hit.pointers[0])
    assert pointer.source == "notes.md" and pointer.start_line <= 3 <= pointer.end_line  # cites L3

    # Hydration: the page itself, by the key the hit gave.
    pages = _call(
        generated, client, "pages", body=_body(generated, "pages", ids=[hit.key], include_body=True)
    )
    assert not pages.missing
    page = _typed(pages.pages[0])
    assert (page.requested, page.key, page.via) == ("wing", "wing", "key")
    assert "Flutter. <!-- from: raw-sources/notes.md#L3 -->" in page.body
    assert [p.chunk_id for p in page.pointers] == [p.chunk_id for p in hit.pointers]

    # Drill-down: the chunk the pointer names, verbatim from the raw source.
    chunks = _call(
        generated, client, "chunks", body=_body(generated, "chunks", ids=[pointer.chunk_id])
    )
    assert not chunks.missing
    chunk = _typed(chunks.chunks[0])
    assert (chunk.id, chunk.source, chunk.start_line, chunk.end_line) == (
        pointer.chunk_id, pointer.source, pointer.start_line, pointer.end_line,
    )  # fmt: skip
    lines = (root / "raw-sources/notes.md").read_text().splitlines()
    assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    assert NOTES.splitlines()[2] in chunk.text  # the line the page cites
