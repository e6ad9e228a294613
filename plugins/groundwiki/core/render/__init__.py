"""Turning the compiled wiki into site content: pages, raw-source pages, generated pages, the
artifacts and redirects. Imports every core folder below it (lint/ included), never MkDocs."""
