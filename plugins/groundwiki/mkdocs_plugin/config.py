"""The `groundwiki` plugin options, validated by MkDocs before any build work starts."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from ..core.config import Options

_DEFAULTS = Options()


class GroundwikiConfig(base.Config):
    raw_sources = c.Type(str, default=_DEFAULTS.raw_sources)
    lock = c.Type(str, default=_DEFAULTS.lock)
    max_pointers = c.Type(int, default=_DEFAULTS.max_pointers)
    rules = c.Type(dict, default={})
    baseline = c.Type(str, default=_DEFAULTS.baseline)
    strict = c.Type(bool, default=_DEFAULTS.strict)
