"""`groundwiki lsp` end to end: a real LSP client (pytest-lsp) starts the server as a process
over stdio on a wiki written here, opens and edits pages, and asks for diagnostics,
definitions, hovers, completions and references."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from helpers.wikis import page, write_wiki
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "groundwiki", "lsp"])

PAGES = {
    "alpha.md": page(
        "The first page.",
        "# Alpha\n\nSee [[beta#Second]] and [[beta]].\n\nA claim. <!-- from: raw-sources/notes.md#L2-L3 -->\n",
    ),
    "beta.md": page("The second page.", "# Beta\n\n## Second\n\nText ^block1\n", aliases=["Bee"]),
    "gamma.md": page("The third page.", "# Gamma\n\nBack to [[alpha]].\n"),
}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    root: Path = request.getfixturevalue("tmp_path")
    write_wiki(root, PAGES, {"notes.md": "one\ntwo\nthree\nfour\n"})
    request.node.stash[ROOT] = root
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="wiki")],
        )
    )
    yield
    await lsp_client.shutdown_session()


ROOT = pytest.StashKey[Path]()


def uri_of(request: pytest.FixtureRequest, name: str) -> str:
    return (request.node.stash[ROOT] / "wiki" / name).as_uri()


def open_page(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=version, text=text
            )
        )
    )


def change_page(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def completed(client: LanguageClient, uri: str, text: str, version: int) -> set[str]:
    """The labels completed at the end of `text`, once the page holds it."""
    change_page(client, uri, text, version)
    lines = text.splitlines()
    end = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    items = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=end)
    )
    assert items is not None
    return {
        item.label for item in (items.items if isinstance(items, types.CompletionList) else items)
    }


async def diagnostics_of(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics.get(uri, []))


@pytest.mark.asyncio
async def test_an_unsaved_edit_gets_its_findings_and_loses_them_when_fixed(
    client: LanguageClient, request: pytest.FixtureRequest
) -> None:
    uri = uri_of(request, "gamma.md")
    text = (request.node.stash[ROOT] / "wiki" / "gamma.md").read_text(encoding="utf-8")
    open_page(client, uri, text)
    change_page(client, uri, text + "\nAnd [[nowhere]].\n", 2)
    found = await diagnostics_of(client, uri)
    while not any(d.code == "broken-link" for d in found):
        found = await diagnostics_of(client, uri)
    broken = next(d for d in found if d.code == "broken-link")
    assert "nowhere" in broken.message and broken.severity == types.DiagnosticSeverity.Error
    assert broken.range.start.line == text.count("\n") + 1  # the added line, 0-based
    change_page(client, uri, text, 3)
    while any(d.code == "broken-link" for d in await diagnostics_of(client, uri)):
        pass
    # The file on disk never changed: the findings came from the buffer.
    assert "nowhere" not in (request.node.stash[ROOT] / "wiki" / "gamma.md").read_text()


@pytest.mark.asyncio
async def test_definition_hover_completion_and_references(
    client: LanguageClient, request: pytest.FixtureRequest
) -> None:
    uri = uri_of(request, "alpha.md")
    text = (request.node.stash[ROOT] / "wiki" / "alpha.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    open_page(client, uri, text)
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    line = next(i for i, t in enumerate(lines) if "[[beta#Second]]" in t)
    at = types.Position(line=line, character=lines[line].index("[[beta#Second]]") + 3)
    where = types.TextDocumentIdentifier(uri=uri)

    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=where, position=at)
    )
    assert isinstance(found, types.Location)
    assert found.uri == uri_of(request, "beta.md")
    beta = (request.node.stash[ROOT] / "wiki" / "beta.md").read_text().splitlines()
    assert beta[found.range.start.line] == "## Second"

    hovered = await client.text_document_hover_async(
        types.HoverParams(text_document=where, position=at)
    )
    assert hovered is not None and isinstance(hovered.contents, types.MarkupContent)
    assert "**Beta**" in hovered.contents.value and "The second page." in hovered.contents.value

    cite_line = next(i for i, t in enumerate(lines) if "from: raw-sources" in t)
    cite_at = types.Position(line=cite_line, character=lines[cite_line].index("raw-sources") + 2)
    source = await client.text_document_definition_async(
        types.DefinitionParams(text_document=where, position=cite_at)
    )
    assert isinstance(source, types.Location) and source.uri.endswith("raw-sources/notes.md")
    assert source.range.start.line == 1  # #L2, 0-based
    cited = await client.text_document_hover_async(
        types.HoverParams(text_document=where, position=cite_at)
    )
    assert cited is not None and isinstance(cited.contents, types.MarkupContent)
    assert "two\nthree" in cited.contents.value and "unlocked" in cited.contents.value

    typed = text + "\nMore: [[be"
    labels = await completed(client, uri, typed, 2)
    assert {"beta", "Bee"} <= labels and "gamma" not in labels
    assert "Second" in await completed(client, uri, typed + "ta#", 3)

    gamma = uri_of(request, "gamma.md")
    backlinks = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=where,
            position=types.Position(line=0, character=0),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert backlinks is not None and [b.uri for b in backlinks] == [gamma]
