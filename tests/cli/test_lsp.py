"""`groundwiki lsp` end to end: a real LSP client (pytest-lsp) starts the server as a process
over stdio on a wiki written here, opens and edits pages, and asks for diagnostics,
definitions, hovers, completions, references, renames and quick fixes (whose edits are applied
to the files here, as the editor would, and the wiki compiled again)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.edit.editor_wiki import EditorWiki
from groundwiki.core.evidence.lock import write_lock
from groundwiki.core.lint.runner import collect_findings
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import compile_wiki
from helpers.edit_walk import compile_state, differences
from helpers.wikis import page, write_wiki
from helpers.workspace_edits import apply_workspace_edit, path_of
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "groundwiki", "lsp"])

PAGES = {
    "alpha.md": page(
        "The first page.",
        "# Alpha\n\nSee [[beta#Second]] and [[beta]].\n\nA claim. <!-- from: raw-sources/notes.md#L2-L3 -->\n",
    ),
    "beta.md": page("The second page.", "# Beta\n\n## Second\n\nText ^block1\n", aliases=["Bee"]),
    "gamma.md": page("The third page.", "# Gamma\n\nBack to [[alpha]].\n"),
    "delta.md": page(None, "# Delta\n\nDelta lists the fourth things. Then more.\n"),
}
# An editor that applies file moves in a workspace edit (VS Code, Neovim).
CAPABILITIES = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[
                types.ResourceOperationKind.Create,
                types.ResourceOperationKind.Rename,
            ],
        )
    )
)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    root: Path = request.getfixturevalue("tmp_path")
    write_wiki(root, PAGES, {"notes.md": "one\ntwo\nthree\nfour\n"})
    request.node.stash[ROOT] = root
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=CAPABILITIES,
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


def compiled(request: pytest.FixtureRequest) -> Wiki:
    """The wiki as the files now stand, compiled from scratch (not by the server)."""
    return compile_wiki(load_config(request.node.stash[ROOT] / "mkdocs.yml"))


def text_of(request: pytest.FixtureRequest, name: str) -> str:
    return (request.node.stash[ROOT] / "wiki" / name).read_text(encoding="utf-8")


@pytest.mark.asyncio
async def test_rename_on_a_link_is_the_rename_tool_as_one_workspace_edit(
    client: LanguageClient, request: pytest.FixtureRequest
) -> None:
    uri = uri_of(request, "alpha.md")
    text = text_of(request, "alpha.md")
    lines = text.splitlines()
    open_page(client, uri, text, version=7)
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    line = next(i for i, t in enumerate(lines) if "[[beta]]" in t)
    column = lines[line].index("[[beta]]") + 2
    where = types.TextDocumentIdentifier(uri=uri)
    at = types.Position(line=line, character=column + 1)

    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=where, position=at)
    )
    assert isinstance(prepared, types.PrepareRenamePlaceholder)
    assert prepared.placeholder == "beta"
    assert (prepared.range.start.line, prepared.range.start.character) == (line, column)
    assert prepared.range.end.character == column + len("beta")

    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=where, position=at, new_name="bravo")
    )
    assert edit is not None and edit.document_changes is not None
    moves = [c for c in edit.document_changes if isinstance(c, types.RenameFile)]
    assert [(m.old_uri, m.new_uri) for m in moves] == [
        (uri_of(request, "beta.md"), uri_of(request, "bravo.md"))
    ]
    edited = {
        c.text_document.uri: c
        for c in edit.document_changes
        if isinstance(c, types.TextDocumentEdit)
    }
    # The linking page (open: at its version) and the renamed page (its old name kept as an
    # alias), both addressed where they are before the move; the moves come last.
    assert set(edited) == {uri, uri_of(request, "beta.md")}
    assert edited[uri].text_document.version == 7
    assert edit.document_changes[-1] == moves[0]
    rewritten = "".join(e.new_text for e in edited[uri].edits if isinstance(e, types.TextEdit))
    assert "[[bravo#Second]]" in rewritten and "[[bravo]]" in rewritten
    assert not (request.node.stash[ROOT] / "wiki" / "bravo.md").exists()  # the editor moves it

    apply_workspace_edit(edit)
    after = compiled(request)
    assert "beta.md" not in {p.doc_path for p in after.all_pages}
    assert "bravo" in after.pages and "beta" in after.pages["bravo"].aliases
    alpha = after.pages["alpha"]
    targets = {after.resolve(link, alpha).key for link in alpha.links if link.target}  # type: ignore[union-attr]
    assert targets == {"bravo"}
    assert not [f for f in collect_findings(after) if f.rule == "broken-link"]


@pytest.mark.asyncio
async def test_rename_in_the_frontmatter_renames_the_page_and_refuses_a_taken_name(
    client: LanguageClient, request: pytest.FixtureRequest
) -> None:
    uri = uri_of(request, "gamma.md")
    open_page(client, uri, text_of(request, "gamma.md"))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    where = types.TextDocumentIdentifier(uri=uri)
    top = types.Position(line=1, character=2)
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=where, position=top)
    )
    assert isinstance(prepared, types.PrepareRenamePlaceholder) and prepared.placeholder == "gamma"
    prose = types.Position(line=len(text_of(request, "gamma.md").splitlines()) - 1, character=1)
    assert (
        await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=where, position=prose)
        )
        is None
    )

    with pytest.raises(JsonRpcException) as refused:
        await client.text_document_rename_async(
            types.RenameParams(text_document=where, position=top, new_name="alpha")
        )
    assert "already" in refused.value.message and "choose another name" in refused.value.message
    assert refused.value.code == types.LSPErrorCodes.RequestFailed

    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=where, position=top, new_name="notes/gamma")
    )
    assert edit is not None
    apply_workspace_edit(edit)
    after = compiled(request)
    assert after.pages["gamma"].doc_path == "notes/gamma.md"
    alpha = text_of(request, "alpha.md")
    assert alpha == PAGES["alpha.md"]  # it links to beta, not to gamma
    assert not [f for f in collect_findings(after) if f.rule == "broken-link"]


async def quick_fixes(
    client: LanguageClient, uri: str, line: int, diagnostics: list[types.Diagnostic]
) -> list[types.CodeAction]:
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=line, character=0),
            ),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    return [action for action in found or [] if isinstance(action, types.CodeAction)]


@pytest.mark.asyncio
async def test_a_moved_citation_is_fixed_in_the_page_and_the_lock(
    client: LanguageClient, request: pytest.FixtureRequest
) -> None:
    root = request.node.stash[ROOT]
    config = load_config(root / "mkdocs.yml")
    write_lock(config.lock_path, compile_wiki(config).lock_entries(), root)
    (root / "raw-sources" / "notes.md").write_text("zero\none\ntwo\nthree\nfour\n")
    uri = uri_of(request, "alpha.md")
    open_page(client, uri, text_of(request, "alpha.md"))
    found = await diagnostics_of(client, uri)
    while not any(d.code == "moved-source" for d in found):
        found = await diagnostics_of(client, uri)
    moved = next(d for d in found if d.code == "moved-source")

    actions = await quick_fixes(client, uri, moved.range.start.line, [moved])
    assert [list(a.diagnostics or ()) for a in actions] == [[moved]]
    action = actions[0]
    assert action.kind == types.CodeActionKind.QuickFix and "lines 3-4" in action.title
    assert action.edit is not None and action.edit.document_changes is not None
    files = {
        path_of(c.text_document.uri).name
        for c in action.edit.document_changes
        if isinstance(c, types.TextDocumentEdit)
    }
    assert files == {"alpha.md", "wiki.lock"}
    assert "#L2-L3" in text_of(request, "alpha.md")  # the editor applies it, not the server

    apply_workspace_edit(action.edit)
    assert "<!-- from: raw-sources/notes.md#L3-L4 -->" in text_of(request, "alpha.md")
    rules = {f.rule for f in collect_findings(compiled(request)) if f.path == "wiki/alpha.md"}
    assert not rules & {"moved-source", "unlocked-source", "drifted-source"}


@pytest.mark.asyncio
async def test_a_missing_summary_is_fixed_with_the_first_sentence(
    client: LanguageClient, request: pytest.FixtureRequest
) -> None:
    uri = uri_of(request, "delta.md")
    open_page(client, uri, text_of(request, "delta.md"))
    found = await diagnostics_of(client, uri)
    while not any(d.code == "missing-summary" for d in found):
        found = await diagnostics_of(client, uri)
    missing = next(d for d in found if d.code == "missing-summary")
    assert await quick_fixes(client, uri, 5, []) == []  # not on the finding's line

    actions = await quick_fixes(client, uri, missing.range.start.line, [missing])
    assert [list(a.diagnostics or ()) for a in actions] == [[missing]]
    assert actions[0].edit is not None
    apply_workspace_edit(actions[0].edit)
    after = compiled(request)
    delta = after.pages["delta"]
    assert delta.summary == "Delta lists the fourth things." and not delta.summary_derived
    assert not [
        f for f in collect_findings(after) if f.rule == "missing-summary" and "delta" in f.path
    ]


def test_keystrokes_compile_and_lint_as_the_same_text_saved_would(tmp_path: Path) -> None:
    # In the process, as the server compiles: a keystroke puts the buffer's page in the last
    # compile's place (the files left as they were), and the per-page results and findings are
    # the last compile's with the stale pages' made again. Each must equal a compile from
    # scratch of the text saved, whatever the edit reaches: a broken link, a new heading a link
    # names, an alias, a citation, a page keyed by its path (two files share its name).
    pages = {**PAGES, "more/beta.md": page("Another beta.", "# Beta again\n\nSee [[gamma]].\n")}
    config = load_config(write_wiki(tmp_path, pages, {"notes.md": "one\ntwo\nthree\nfour\n"}))
    editor = EditorWiki(config)
    editor.compile()
    docs = config.docs_dir
    typed = {
        docs / "gamma.md": [
            "\nAnd [[nowhere]].\n",
            "\nAnd [[beta#Third]] and [[delta]].\n",
            "\nA claim. <!-- from: raw-sources/notes.md#L1-L2 -->\n",
        ],
        docs / "beta.md": ["\n## Third\n", "\nText ^block2\n", ""],
        docs / "delta.md": ["\nSee [[alpha]].\n", ""],
    }
    saved = {path: path.read_text(encoding="utf-8") for path in typed}
    for path, text in saved.items():
        editor.open(path, text)
    editor.compile()  # as on open: the files looked at again
    aliased = saved[docs / "delta.md"].replace("---\n", "---\naliases: [Bee]\n", 1)
    buffers = dict(saved)
    for step in range(4):
        for path, edits in typed.items():
            base = aliased if path.name == "delta.md" and step % 2 else saved[path]
            buffers[path] = base + "".join(edits[: step % (len(edits) + 1)])
            editor.open(path, buffers[path])
            kept = editor.compile(rescan=False)
            assert kept.wiki.changed_pages is not None, "the keystroke compiled every page"
            for each, text in buffers.items():
                each.write_text(text, encoding="utf-8")
            try:
                full = compile_wiki(config)
                assert list(kept.findings) == collect_findings(full), (step, path.name)
                assert not differences(compile_state(kept.wiki), compile_state(full))
            finally:
                for each, text in saved.items():
                    each.write_text(text, encoding="utf-8")
