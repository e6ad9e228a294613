"""Applying a language server's `WorkspaceEdit` to the files on disk, as an editor does when the
writer accepts a rename or a quick fix: text edits at their positions, then file moves."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path


def path_of(uri: str) -> Path:
    found = to_fs_path(uri)
    assert found, uri
    return Path(found)


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Positions are (line, character) in `text` as it was: applied from the last backwards."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        return starts[position.line] + position.character

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


def apply_workspace_edit(edit: types.WorkspaceEdit) -> None:
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            path = path_of(change.text_document.uri)
            with path.open(encoding="utf-8", newline="") as handle:
                text = handle.read()
            edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
            with path.open("w", encoding="utf-8", newline="") as handle:
                handle.write(apply_text_edits(text, edits))
        elif isinstance(change, types.RenameFile):
            target = path_of(change.new_uri)
            assert not target.exists(), target
            target.parent.mkdir(parents=True, exist_ok=True)
            path_of(change.old_uri).rename(target)
        else:
            raise AssertionError(f"not expected here: {change}")
