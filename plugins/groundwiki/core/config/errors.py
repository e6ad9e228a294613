"""The root of groundwiki's own errors.

Every error that means "the user's input or setup cannot be used as it is" derives from
`GroundwikiError`, and its message says what to do. Each adapter (the CLI, the MkDocs plugin,
the sidecar) catches this one class at its edge and reports it in its own way; anything else
that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class GroundwikiError(Exception):
    """A problem the user can fix; the message names the file (and line) and the fix."""
