"""`groundwiki lsp`: a language server (pygls, over stdio) for writers of a groundwiki wiki in
VS Code, Neovim, Helix or Zed. The wiki is the one whose mkdocs.yml is in the
workspace's root folder (or `-f`); every change to an open page recompiles what it reaches
(core/edit/editor_wiki.py) and republishes the lint findings of the open pages and of the pages the
change affected. The answers themselves are core/edit/editor_answers.py's.

Protocol positions are 0-based; the compiler's are 1-based. Columns are counted in characters:
for text outside Unicode's basic plane an editor counting UTF-16 units may be off by one.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from groundwiki import __version__
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.wiki_config import find_config_file, load_config
from groundwiki.core.edit import editor_answers as features
from groundwiki.core.edit import editor_edits as changes
from groundwiki.core.edit.editor_wiki import Compiled, EditorWiki
from groundwiki.core.edit.edits import Planned
from groundwiki.core.lint.findings import Finding
from groundwiki.core.model.records import Page
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.editor.workspace_edits import workspace_edit

log = logging.getLogger("groundwiki.lsp")
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
KIND = {
    "page": types.CompletionItemKind.File,
    "alias": types.CompletionItemKind.Reference,
    "heading": types.CompletionItemKind.Reference,
    "block": types.CompletionItemKind.Reference,
    "source": types.CompletionItemKind.File,
}


# After a keystroke the compile waits this long for the next one, and a request the editor
# sends with the keystroke (a completion) is answered first, from the last compile. Such a
# request arrives within a millisecond or two; the wait is part of every diagnostic's delay.
DEBOUNCE_S = 0.02


class WikiServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("groundwiki", __version__)
        self.editor: EditorWiki | None = None
        self.published: set[str] = set()  # URIs with diagnostics shown
        self._pending: asyncio.TimerHandle | None = None

    def published_pending(self) -> None:
        """A compile runs now: a later one waiting for the keystrokes to pause is not needed."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def publish_soon(self) -> None:
        """Compile and publish once the keystrokes pause (`DEBOUNCE_S`)."""
        if self._pending is not None:
            self._pending.cancel()
        self._pending = asyncio.get_running_loop().call_later(
            DEBOUNCE_S, lambda: _publish(self, rescan=False)
        )


def build_server(config_file: Path | None = None) -> WikiServer:
    """`config_file`: the wiki's mkdocs.yml; by default the one at or above the workspace's
    folder."""
    server = WikiServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: WikiServer, params: types.InitializedParams) -> None:
        root = ls.workspace.root_path
        try:
            config = load_config(config_file or find_config_file(Path(root) if root else None))
        except GroundwikiError as exc:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"groundwiki: {exc}")
            )
            return
        ls.editor = EditorWiki(config)
        _publish(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: WikiServer, params: types.DidOpenTextDocumentParams) -> None:
        _changed(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: WikiServer, params: types.DidChangeTextDocumentParams) -> None:
        if _buffer_changed(ls, params.text_document.uri):
            ls.publish_soon()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: WikiServer, params: types.DidSaveTextDocumentParams) -> None:
        _changed(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: WikiServer, params: types.DidCloseTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if ls.editor is not None and path:
            ls.editor.close(Path(path))
            _publish(ls)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: WikiServer, params: types.DefinitionParams) -> types.Location | None:
        found = _at(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        page, lines, line, column = found
        place = features.definition(_wiki(ls), page, lines, line, column)
        return None if place is None else _location(place)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: WikiServer, params: types.HoverParams) -> types.Hover | None:
        found = _at(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        text = features.hover(_wiki(ls), *found)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=["[", "#", "^", "/"]),
    )
    def completion(ls: WikiServer, params: types.CompletionParams) -> types.CompletionList:
        document = ls.workspace.get_text_document(params.text_document.uri)
        if ls.editor is None:
            return types.CompletionList(is_incomplete=False, items=[])
        line, column = params.position.line + 1, params.position.character + 1
        lines = [text.rstrip("\r\n") for text in document.lines]
        items = features.completions(_wiki(ls), lines, line, column)
        return types.CompletionList(
            is_incomplete=len(items) >= features.COMPLETION_LIMIT,
            items=[
                types.CompletionItem(label=item.label, kind=KIND[item.kind], detail=item.detail)
                for item in items
            ],
        )

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: WikiServer, params: types.ReferenceParams) -> list[types.Location]:
        found = _at(ls, params.text_document.uri, params.position)
        if found is None:
            return []
        return [_location(place) for place in features.references(_wiki(ls), *found)]

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(
        ls: WikiServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        target = _rename_target(ls, params.text_document.uri, params.position)
        if target is None:
            return None
        start = types.Position(line=target.line - 1, character=target.column - 1)
        end = types.Position(line=start.line, character=start.character + target.length)
        return types.PrepareRenamePlaceholder(
            range=types.Range(start=start, end=end), placeholder=target.name
        )

    @server.feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    def rename(ls: WikiServer, params: types.RenameParams) -> types.WorkspaceEdit:
        target = _rename_target(ls, params.text_document.uri, params.position)
        if target is None:
            raise _failed(
                "put the cursor on a link to a page, or in a page's frontmatter, to rename "
                "that page"
            )
        if not _can_move_files(ls):
            raise _failed(
                "this editor does not let a language server move files: rename the page with "
                f"`groundwiki rename {target.page.key} {params.new_name}` in a terminal"
            )
        assert ls.editor is not None
        try:
            _, planned = changes.rename_changes(
                _wiki(ls), target.page, params.new_name, ls.editor.buffers.texts
            )
        except GroundwikiError as exc:
            raise _failed(str(exc)) from None
        return _workspace_edit(ls, planned)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: WikiServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return _quick_fixes(ls, params.text_document.uri, params.range)

    return server


def _failed(message: str) -> JsonRpcException:
    """A request refused, with what the writer can do instead (the editor shows the message)."""
    return JsonRpcException(f"groundwiki: {message}", code=types.LSPErrorCodes.RequestFailed)


def _settle(ls: WikiServer) -> None:
    """Before a change is planned: the compile of the last keystrokes, not yet made (the
    debounce), is made now, so positions in the buffers and the compile agree."""
    if ls._pending is not None:
        _publish(ls, rescan=False)


def _rename_target(
    ls: WikiServer, uri: str, position: types.Position
) -> changes.RenameTarget | None:
    _settle(ls)
    found = _at(ls, uri, position)
    return None if found is None else changes.rename_target(_wiki(ls), *found)


def _can_move_files(ls: WikiServer) -> bool:
    workspace = ls.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace is not None else None
    return bool(
        edit is not None
        and edit.document_changes
        and types.ResourceOperationKind.Rename in (edit.resource_operations or ())
    )


def _workspace_edit(ls: WikiServer, planned: list[Planned]) -> types.WorkspaceEdit:
    documents = ls.workspace.text_documents

    def version(uri: str) -> int | None:
        return documents[uri].version if uri in documents else None

    workspace = ls.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace is not None else None
    versioned = bool(edit is not None and edit.document_changes)
    return workspace_edit(planned, version, document_changes=versioned)


def _quick_fixes(ls: WikiServer, uri: str, wanted: types.Range) -> list[types.CodeAction]:
    """The fixes of the findings on the lines asked about: a moved citation's range, a
    missing summary."""
    _settle(ls)
    editor, path = ls.editor, to_fs_path(uri)
    if editor is None or not path or editor.compiled is None:
        return []
    page = editor.page_at(Path(path))
    if page is None:
        return []
    wiki, buffers = editor.wiki, editor.buffers.texts
    actions: list[types.CodeAction] = []
    for finding in editor.compiled.findings_of(page.rel_path):
        if not wanted.start.line <= finding.line - 1 <= wanted.end.line:
            continue
        if finding.rule == changes.MOVED:
            for state in changes.moved_states(wiki, page):
                at = state.citation.at
                if (at.line, at.column) != (finding.line, finding.column):
                    continue
                planned = changes.moved_fix(wiki, state, buffers)
                if planned is not None and state.moved_to is not None:
                    lines = "{}-{}".format(*state.moved_to)
                    title = f"Cite lines {lines}, where the text now stands, and relock it"
                    actions.append(_action(ls, title, finding, planned))
        elif finding.rule == changes.MISSING_SUMMARY:
            planned = changes.summary_fix(wiki, page, buffers)
            if planned is not None:
                actions.append(
                    _action(ls, "Add its first sentence as the summary", finding, planned)
                )
    return actions


def _action(
    ls: WikiServer, title: str, finding: Finding, planned: list[Planned]
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[_diagnostic(finding)],
        is_preferred=True,
        edit=_workspace_edit(ls, planned),
    )


def _wiki(ls: WikiServer) -> Wiki:
    assert ls.editor is not None
    return ls.editor.wiki


def _changed(ls: WikiServer, uri: str) -> None:
    """An open page was opened or saved: read it from the buffer, look at the files on disk
    again, recompile, publish."""
    if _buffer_changed(ls, uri):
        _publish(ls)


def _buffer_changed(ls: WikiServer, uri: str) -> bool:
    """The page's text from the editor's buffer; whether the document is a page file."""
    editor, path = ls.editor, to_fs_path(uri)
    if editor is None or not path or not path.endswith(".md"):
        return False
    editor.open(Path(path), ls.workspace.get_text_document(uri).source)
    return True


def _publish(ls: WikiServer, rescan: bool = True) -> None:
    """Recompile, then publish the findings of the open pages and of the pages the change
    affected (after the first compile: of every page with an error or a warning). A page shown
    before that has no findings now gets an empty list; a page the change did not reach keeps
    what it was shown.

    Only the affected pages' findings are looked at and turned into diagnostics: after a
    keystroke that is a page or two of 10,000, and a URI made for every finding of the wiki
    cost more than the keystroke's lint."""
    ls.published_pending()
    editor = ls.editor
    if editor is None:
        return
    compiled = editor.compile(rescan)
    root = editor.config.root
    affected: dict[str, tuple[Finding, ...]] = {}
    if compiled.stale is None:
        for path in {f.path for f in compiled.findings if f.severity in {"error", "warning"}}:
            affected[from_fs_path(str(root / path)) or ""] = compiled.findings_of(path)
    else:
        by_doc = compiled.by_doc
        for page in (by_doc[doc] for doc in compiled.stale if doc in by_doc):
            affected[from_fs_path(str(page.path)) or ""] = compiled.findings_of(page.rel_path)
    opened: set[str] = set()
    for buffer in editor.buffers.texts:
        uri = from_fs_path(str(buffer)) or ""
        opened.add(uri)
        if uri not in affected:
            affected[uri] = _findings_at(compiled, root, buffer)
    for uri in sorted(affected.keys() - {""}):
        found = affected[uri]
        if not found and uri not in ls.published and uri not in opened:
            continue  # nothing shown, nothing to show (an open page always gets its list)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[_diagnostic(f) for f in found])
        )
        if found:
            ls.published.add(uri)
        else:
            ls.published.discard(uri)


def _findings_at(compiled: Compiled, root: Path, path: Path) -> tuple[Finding, ...]:
    """The findings of the file at `path` (findings name files from the wiki root)."""
    try:
        return compiled.findings_of(path.relative_to(root).as_posix())
    except ValueError:
        return ()


def _diagnostic(finding: Finding) -> types.Diagnostic:
    start = types.Position(line=max(finding.line - 1, 0), character=max(finding.column - 1, 0))
    return types.Diagnostic(
        range=types.Range(
            start=start, end=types.Position(line=start.line, character=start.character + 1)
        ),
        message=f"{finding.message} ({finding.hint})",
        severity=SEVERITY.get(finding.severity, types.DiagnosticSeverity.Information),
        code=finding.rule,
        source="groundwiki",
    )


def _at(
    ls: WikiServer, uri: str, position: types.Position
) -> tuple[Page, list[str], int, int] | None:
    """The compiled page of the document, its lines and the 1-based position; None when the
    document is no page of the wiki."""
    editor, path = ls.editor, to_fs_path(uri)
    if editor is None or not path:
        return None
    page = editor.page_at(Path(path))
    if page is None:
        return None
    lines = [line.rstrip("\r\n") for line in ls.workspace.get_text_document(uri).lines]
    return page, lines, position.line + 1, position.character + 1


def _location(place: features.Place) -> types.Location:
    start = types.Position(line=max(place.line - 1, 0), character=max(place.column - 1, 0))
    end = types.Position(line=start.line, character=start.character + place.length)
    return types.Location(
        uri=from_fs_path(str(place.path)) or "", range=types.Range(start=start, end=end)
    )


def main(config_file: Path | None = None) -> int:
    """Serve over stdio until the editor closes the connection."""
    build_server(config_file).start_io()
    return 0
