"""The theme's templates compiled once per server, not once per rebuild.

MkDocs makes a new Jinja environment for every build (and the search plugin another), and a
new environment compiles every template it renders again: mkdocs-material's main.html with its
partials took about 0.6 s of each rebuild under `mkdocs serve`. Jinja's own bytecode cache, kept in memory across the
server's builds, hands the next environment the compiled code; Jinja checks each template's
source against the checksum stored with it, so an edited template is compiled again.
"""

from __future__ import annotations

from typing import Any

from jinja2.bccache import Bucket, BytecodeCache
from mkdocs.theme import Theme


class MemoryBytecodeCache(BytecodeCache):
    def __init__(self) -> None:
        self.stored: dict[str, bytes] = {}
        self.settings: str | None = None  # what the environments it served were made from

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self.stored.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.stored[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self.stored = {}

    def serve(self, theme: Theme, settings: str) -> None:
        """Give every environment `theme` makes this cache (MkDocs' own, and the one the search
        plugin reads its translations with); `settings` names what the theme and its
        environments are made from (the config file's text): code compiled for other settings
        is dropped."""
        if settings != self.settings:
            self.stored, self.settings = {}, settings
        make = theme.get_env

        def get_env() -> Any:
            env = make()
            env.bytecode_cache = self
            return env

        # The theme is made again with the config of each build: this wraps its own method once.
        theme.get_env = get_env  # type: ignore[method-assign]
