"""The handbook's evidence copies of project artifacts must match the artifacts themselves."""

from __future__ import annotations

from conftest import ROOT


def test_the_cited_schema_is_the_schema_the_core_validates_with():
    # When the contract changes, update the copy: the lock then flags every page citing it.
    packaged = ROOT / "plugins/groundwiki/core/schemas/page.schema.json"
    assert (ROOT / "raw-sources/schemas/page.schema.json").read_bytes() == packaged.read_bytes()
