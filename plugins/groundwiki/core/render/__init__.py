"""Turning the compiled wiki into site content: pages, raw-source pages, generated pages."""
