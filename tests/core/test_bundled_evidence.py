"""The handbook's evidence copies of project artifacts must match the artifacts themselves."""

from __future__ import annotations

import pytest
from helpers.wikis import ROOT

# When an artifact changes, copy it again: the lock then flags every page that cites the copy,
# so the handbook is re-read where it describes what changed.
COPIES = {
    **{
        f"raw-sources/schemas/{name}.schema.json": f"plugins/groundwiki/core/schemas/{name}.schema.json"
        for name in ("page", "graph", "lint", "pages", "explorer")
    },
    "raw-sources/build/Makefile.txt": "Makefile",
    "raw-sources/ci/pre-commit-hooks.yaml": ".pre-commit-hooks.yaml",
}


@pytest.mark.parametrize(("copy", "artifact"), sorted(COPIES.items()))
def test_the_cited_copy_matches_the_artifact(copy, artifact):
    assert (ROOT / copy).read_bytes() == (ROOT / artifact).read_bytes(), f"cp {artifact} {copy}"


def test_the_cited_openapi_document_is_the_one_the_sidecar_serves():
    import json

    from groundwiki import __version__
    from groundwiki_sidecar.api.openapi import openapi

    served = json.dumps(openapi(__version__), indent=2) + "\n"
    assert (ROOT / "raw-sources/api/openapi.json").read_text() == served, (
        "regenerate raw-sources/api/openapi.json (see its page, reference/sidecar-api.md)"
    )


# The copies of command output (raw-sources/cli/) are compared with what the command prints by
# tests/cli/test_help_copies.py, which runs it.
