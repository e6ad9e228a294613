"""Obsidian syntax a reviewer found rendered wrong, each in a real `mkdocs build`."""

from __future__ import annotations

from pathlib import Path

import pytest
from render_helpers import article, build_site

DEEP = {
    "index.md": "# Hi\n\n" + ">" * 1000 + " [!tip] deep\n",
    "fine.md": "# Fine\n\nA page after the deep one.\n",
}


@pytest.fixture(scope="module")
def deep(tmp_path_factory) -> Path:
    return build_site(tmp_path_factory.mktemp("deep"), DEEP)


def test_a_callout_under_a_thousand_quotes_does_not_stop_the_build(deep):
    # build_site asserts the build succeeded; the page and its neighbour are both there.
    assert "Hi" in article(deep, ".")
    assert "A page after the deep one." in article(deep, "fine")
