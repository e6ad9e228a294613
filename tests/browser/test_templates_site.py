"""A site overrides groundwiki's templates as it overrides its theme's: a file of the same name
under the theme's `custom_dir` (`overrides/groundwiki/lint.html`), in a real `mkdocs build`.

An override is the site's own code, but what it prints is the wiki's: a value stays text wherever
the override puts it, in HTML or in Markdown, and a broken override stops the build naming itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from helpers.browsing import served
from helpers.render_helpers import build_site
from helpers.site_builds import build
from helpers.wikis import page, write_wiki

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


# --- what an override prints is text ----------------------------------------------------------

# Markdown that acts, in a title, a summary and a tag: a link, an image, attributes (attr_list).
LINK_TITLE = "[click](javascript:alert(8)) {: onclick=alert(9) }"
IMAGE_SUMMARY = "![i](javascript:alert(2)) <b>{: onclick=alert(3) }</b> *not em*"
ATTRIBUTE_TAG = "x {: onclick=alert(10) }"
HOSTILE_PAGES = {
    "index.md": page(IMAGE_SUMMARY, "# Home\n\nSee [[md]].\n", title="Home"),
    "md.md": page("Plain.", "# MD\n\nBack to [[index]].\n", title=LINK_TITLE, tags=[ATTRIBUTE_TAG]),
}
# Each value printed where the Markdown around it reads it: in a paragraph, in a heading, in a
# list item (nothing wraps them in a block-level HTML element).
MARKDOWN_FOOTER = (
    "{% for b in backlinks %}\nLinked from {{ b.title }}: {{ b.summary }}\n{% endfor %}\n"
)
MARKDOWN_TAGS = (
    "---\ntitle: Tags\n---\n# Tags\n{% for tag in tags %}\n\n## {{ tag.name }}\n\n"
    "{% for p in tag.pages %}\n- {{ p.title }}\n{% endfor %}\n{% endfor %}\n"
)


@pytest.fixture(scope="module")
def markdown_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("markdown-override")
    write_override(root, "footer.html", MARKDOWN_FOOTER)
    write_override(root, "tags.html", MARKDOWN_TAGS)
    return build_site(root, HOSTILE_PAGES, theme=THEME, markdown_extensions=["attr_list"])


MARKDOWN_PAGES = ("index.html", "md/index.html", "groundwiki/tags/index.html")


class _Attributes(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attributes: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += [(name, value or "") for name, value in attrs]


def attributes(html: str) -> list[tuple[str, str]]:
    parser = _Attributes()
    parser.feed(html)
    return parser.attributes


@pytest.mark.parametrize("url", MARKDOWN_PAGES)
def test_an_override_printing_values_in_markdown_makes_no_link_or_attribute(markdown_site, url):
    found = attributes((markdown_site / url).read_text())
    assert not [a for a in found if a[0].startswith("on")]
    assert not [a for a in found if a[1].strip().lower().startswith("javascript:")]


@pytest.fixture(scope="module")
def markdown_base(markdown_site) -> Iterator[str]:
    with served(markdown_site) as base:
        yield base


# What a reader's click runs, without leaving the page: every inline click handler, and every
# link to a javascript: URL.
CLICK_ALL = """() => {
  for (const element of document.querySelectorAll("article *")) {
    if (typeof element.onclick === "function") element.onclick();
    if (element.protocol === "javascript:") element.click();
  }
}"""


def test_values_an_override_prints_in_markdown_run_nothing_in_a_browser(markdown_base, dialog_tab):
    browser_tab, seen = dialog_tab
    for url in MARKDOWN_PAGES:
        browser_tab.goto(markdown_base + url, wait_until="load")
        browser_tab.evaluate(CLICK_ALL)
        browser_tab.wait_for_timeout(100)
    assert not seen, seen


def test_values_an_override_prints_in_markdown_read_as_typed(markdown_base, dialog_tab):
    browser_tab, _ = dialog_tab
    browser_tab.goto(markdown_base, wait_until="load")
    paragraph = browser_tab.locator("article p", has_text="Linked from").inner_text()
    assert paragraph == f"Linked from {LINK_TITLE}: Plain."
    browser_tab.goto(markdown_base + "md/", wait_until="load")
    paragraph = browser_tab.locator("article p", has_text="Linked from").inner_text()
    assert paragraph == f"Linked from Home: {IMAGE_SUMMARY}"
    browser_tab.goto(markdown_base + "groundwiki/tags/", wait_until="load")
    assert browser_tab.locator("article h2").inner_text() == ATTRIBUTE_TAG
    assert browser_tab.locator("article li").inner_text() == LINK_TITLE


def test_an_override_in_custom_dir_replaces_the_footer_and_escapes_titles(tmp_path):
    # Printed in a paragraph Markdown reads: the title must be text for HTML and for Markdown.
    write_override(
        tmp_path, "footer.html", "{% for b in backlinks %}\nLinked from {{ b.title }}\n{% endfor %}"
    )
    evil = page("About it.", "# Evil\n\nBack to [[index]].\n", title=f"{HOSTILE} [x](y)")
    pages = {**PAGES, "evil.md": evil}
    site = build_site(tmp_path, pages, theme=THEME)
    html = (site / "index.html").read_text()
    assert f"<p>Linked from {ESCAPED} &#91;x&#93;(y)</p>" in html
    assert HOSTILE not in html
    assert "gw-backlinks" not in html


# --- a broken override stops the build --------------------------------------------------------


def build_with_footer(root: Path, footer: str):
    """`mkdocs build` of a two-page wiki whose theme overrides the footer with `footer`."""
    config = write_wiki(root, PAGES)
    data = yaml.safe_load(config.read_text())
    data["theme"] = THEME
    config.write_text(yaml.safe_dump(data))
    write_override(root, "footer.html", footer)
    return build(config)


def test_a_footer_override_that_does_not_parse_fails_the_build_before_any_page(tmp_path):
    result = build_with_footer(tmp_path, "{% for b in backlinks %}\n{% if %}\n{% endfor %}\n")
    assert result.returncode == 1
    assert "overrides/groundwiki/footer.html:2: " in result.stderr
    assert "Error reading page" not in result.stderr  # no page was built
    assert "Please report" not in result.stderr


def test_a_footer_override_including_a_missing_template_fails_the_build(tmp_path):
    result = build_with_footer(tmp_path, 'One\n{% include "groundwiki/part.html" %}\n')
    assert result.returncode == 1
    assert "overrides/groundwiki/footer.html:2: " in result.stderr
    assert "groundwiki/part.html" in result.stderr
    assert "Error reading page" not in result.stderr


@pytest.mark.parametrize(
    ("footer", "error"),
    [("One\n{{ nothing }}\n", "nothing"), ("One\n{{ backlinks + 1 }}\n", "TypeError")],
    ids=["undefined", "type-error"],
)
def test_a_footer_override_failing_on_a_page_fails_the_build(tmp_path, footer, error):
    result = build_with_footer(tmp_path, footer)
    assert result.returncode == 1
    assert "overrides/groundwiki/footer.html:2: " in result.stderr
    assert error in result.stderr
    assert "Please report" not in result.stderr
