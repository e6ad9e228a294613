"""A change the writers' tools planned (core/edit/editor_edits.py: whole-file texts and moves)
as an LSP `WorkspaceEdit` for the editor to apply: the lines that differ in each file, then the
file moves, so the edits address each file where the editor has it now."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from lsprotocol import types
from pygls.uris import from_fs_path

from groundwiki.core.edit.edits import Planned

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

# The version of a file open in the editor (None: not open), so a stale edit is refused.
Versions = Callable[[str], int | None]


def text_edits(before: str, after: str) -> list[types.TextEdit]:
    """The runs of whole lines that differ: an editor shows (and undoes) them as written, and
    no column needs counting in UTF-16 units."""
    old, new = _LINE.findall(before), _LINE.findall(after)
    found: list[types.TextEdit] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        found.append(
            types.TextEdit(
                range=types.Range(start=_position(old, i1), end=_position(old, i2)),
                new_text="".join(new[j1:j2]),
            )
        )
    return found


def _position(lines: list[str], index: int) -> types.Position:
    """The start of line `index`; past the last line, the end of the text (which may end
    without a line break, and a line the text does not have is no position)."""
    if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return types.Position(line=index, character=0)
    return types.Position(line=len(lines) - 1, character=len(lines[-1]))


def uri(path: object) -> str:
    return from_fs_path(str(path)) or ""


def workspace_edit(
    planned: list[Planned], versions: Versions, *, document_changes: bool = True
) -> types.WorkspaceEdit:
    """New files first, then the text edits, each to the file where it is before any move,
    then the moves. Without `document_changes` (an editor that takes only `changes`), no file
    can be made or moved: the caller asks for it only for changes to files that exist."""
    created: list[types.CreateFile] = []
    edits: list[types.TextDocumentEdit] = []
    moves: list[types.RenameFile] = []
    for change in planned:
        source = uri(change.moved_from or change.path)
        if change.before is None:
            created.append(types.CreateFile(uri=source))
        if change.before != change.after:
            edits.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=source, version=versions(source)
                    ),
                    edits=list(text_edits(change.before or "", change.after)),
                )
            )
        if change.moved_from is not None:
            moves.append(
                types.RenameFile(
                    old_uri=source,
                    new_uri=uri(change.path),
                    options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
                )
            )
    if not document_changes:
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in edits:
            changes[edit.text_document.uri] = [
                item for item in edit.edits if isinstance(item, types.TextEdit)
            ]
        return types.WorkspaceEdit(changes=changes)
    return types.WorkspaceEdit(document_changes=[*created, *edits, *moves])
