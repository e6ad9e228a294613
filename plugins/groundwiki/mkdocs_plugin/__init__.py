"""The MkDocs adapter: MkDocs events that call the compiler core, nothing more. Imports the core
and MkDocs; never the sidecar, so a site builds without the `[sidecar]` extra."""
