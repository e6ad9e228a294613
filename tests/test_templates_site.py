"""A site overrides groundwiki's templates as it overrides its theme's: a file of the same name
under the theme's `custom_dir` (`overrides/groundwiki/lint.html`), in a real `mkdocs build`."""

from __future__ import annotations

from pathlib import Path

from conftest import page
from render_helpers import build_site

HOSTILE = "<img src=x onerror=alert(1)>"
ESCAPED = "&lt;img src=x onerror=alert(1)&gt;"
THEME = {"name": "material", "custom_dir": "overrides"}


def write_override(root: Path, name: str, text: str) -> None:
    path = root / "overrides" / "groundwiki" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


PAGES = {
    "index.md": page("The way in.", "# Home\n\nSee [[evil]].\n", title="Home"),
    "evil.md": page("About it.", "# Evil\n\nBack to [[index]].\n", title=HOSTILE),
}


def test_an_override_in_custom_dir_replaces_the_lint_page(tmp_path):
    write_override(
        tmp_path,
        "lint.html",
        "---\ntitle: Our checks\n---\n# Our checks\n\n"
        '<p class="ours">{{ counts[0][1] }} errors, by our own template.</p>\n',
    )
    site = build_site(tmp_path, PAGES, theme=THEME)
    html = (site / "groundwiki" / "lint" / "index.html").read_text()
    assert '<p class="ours">0 errors, by our own template.</p>' in html
    assert "gw-lint-counts" not in html


def test_an_override_in_custom_dir_replaces_the_footer_and_escapes_titles(tmp_path):
    write_override(
        tmp_path,
        "footer.html",
        "{% for b in backlinks %}"
        '<p class="our-backlink">Linked from {{ b.title }}</p>\n'
        "{% endfor %}",
    )
    site = build_site(tmp_path, PAGES, theme=THEME)
    html = (site / "index.html").read_text()
    assert f'<p class="our-backlink">Linked from {ESCAPED}</p>' in html
    assert HOSTILE not in html
    assert "gw-backlinks" not in html
