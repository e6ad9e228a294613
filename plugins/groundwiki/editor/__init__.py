"""The editor layer: `groundwiki lsp`, a language server on the incremental core."""
