"""The MkDocs adapter: MkDocs events that call the compiler core, nothing more."""
