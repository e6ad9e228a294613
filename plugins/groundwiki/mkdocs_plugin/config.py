"""The `groundwiki` plugin options, validated by MkDocs before any build work starts."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from ..core.config import MISSING_SUMMARY, Options

_DEFAULTS = Options()


class GroundwikiConfig(base.Config):
    # Read by the compiler core too (the CLI and the sidecar see the same values).
    raw_sources = c.Type(str, default=_DEFAULTS.raw_sources)
    lock = c.Type(str, default=_DEFAULTS.lock)
    max_pointers = c.Type(int, default=_DEFAULTS.max_pointers)
    rules = c.Type(dict, default={})
    baseline = c.Type(str, default=_DEFAULTS.baseline)
    strict = c.Type(bool, default=_DEFAULTS.strict)
    missing_summary = c.Choice(MISSING_SUMMARY, default=_DEFAULTS.missing_summary)
    # What the site shows.
    backlinks = c.Type(bool, default=True)
    sources = c.Type(bool, default=True)
    graph = c.Type(bool, default=True)
    raw_source_pages = c.Type(bool, default=True)
    redirects = c.Type(bool, default=True)
    # `auto`: MkDocs' own navigation up to `compact_above` pages, a short one beyond that.
    navigation = c.Choice(("auto", "full", "compact"), default="auto")
    compact_above = c.Type(int, default=300)
    # The sidecar's own settings (host, port, index folder, model...): validated by the sidecar.
    sidecar = c.Type(dict, default={})
