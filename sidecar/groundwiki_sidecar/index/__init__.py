"""The indexes kept in step with the files: Whoosh, Chroma, the SQLite state, the watcher and the viewer's snapshot. Imports embedding/ and below."""
