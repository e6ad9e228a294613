"""The writers' tools planned as edits: new pages, renames, moved citations, text edits. Imports the layers below it and lint/."""
