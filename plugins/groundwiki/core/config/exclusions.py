"""Files of the docs folder that are no pages, as MkDocs excludes them: its defaults (names
starting with a dot, a `templates/` folder at the root) and mkdocs.yml's `exclude_docs`
(gitignore patterns, one per line). Lint, the site's generated pages and the sidecar leave
them out alike, so a vault's templates folder (`{{date}}` placeholders) is no page anywhere.

mkdocs.yml's `draft_docs` are left out the same way, except under `mkdocs serve`, which
previews them as MkDocs does: a draft is no page of the published wiki, so lint, the built
site and the sidecar do not see it, and a link to it is a broken link there.
"""

from __future__ import annotations

from functools import cache

from pathspec import GitIgnoreSpec

# MkDocs' own, always applied before a site's (mkdocs.structure.files).
DEFAULT_PATTERNS = (".*", "/templates/")


@cache
def _spec(patterns: tuple[str, ...]) -> GitIgnoreSpec:
    return GitIgnoreSpec.from_lines([*DEFAULT_PATTERNS, *patterns])


@cache
def _drafts(patterns: tuple[str, ...]) -> GitIgnoreSpec:
    return GitIgnoreSpec.from_lines(patterns)


def is_draft(patterns: tuple[str, ...], relative: str) -> bool:
    """Whether `relative` matches `draft_docs` (matched apart from `exclude_docs`, as MkDocs
    does: a `!pattern` of one list never brings back a file the other leaves out)."""
    return bool(patterns) and _drafts(patterns).match_file(relative)


def is_excluded(patterns: tuple[str, ...], relative: str) -> bool:
    """Whether the file at `relative` (from the docs folder, forward slashes) is excluded."""
    if not patterns:
        # MkDocs' defaults alone, without the matcher: asked of every page file on each walk.
        return relative.startswith("templates/") or any(
            part.startswith(".") for part in relative.split("/")
        )
    return _spec(patterns).match_file(relative)
