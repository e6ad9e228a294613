"""groundwiki: a grounded wiki compiled by one core for MkDocs, the sidecar and the CLI."""

__version__ = "0.1.0"
