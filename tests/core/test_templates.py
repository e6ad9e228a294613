"""The HTML groundwiki adds (generated pages, each page's footer) comes from Jinja2 templates a
site may override from its own folders; what a template prints is escaped, overrides included."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
from groundwiki.core.lint import run_lint
from groundwiki.core.render.body.slots import Rendered
from groundwiki.core.render.generated import graph_page, index_page, lint_page, tags_page
from groundwiki.core.render.page import RenderOptions, render_page
from groundwiki.core.render.templates import TemplateProblem, Templates, markdown_text
from groundwiki.core.wiki.graph import build_graph
from helpers.wikis import page

HOSTILE = '<img src=x onerror="alert(1)">'


def override(folder: Path, name: str, text: str) -> Templates:
    path = folder / "groundwiki" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return Templates([folder])


def rendered(wiki, key: str, templates: Templates | None = None) -> Rendered:
    options = RenderOptions(templates=templates) if templates else RenderOptions()
    return render_page(wiki, wiki.pages[key], wiki.layout, build_graph(wiki).backlinks(), options)


@pytest.fixture
def wiki(make_wiki):
    return make_wiki(
        {
            "a.md": page("About A.", "# A\n\nSee [[b]].\n", title=HOSTILE, tags=["t"]),
            "b.md": page("About B.", "# B\n\nText.\n", tags=["t"]),
        }
    )


def test_an_override_replaces_the_lint_page(wiki, tmp_path):
    templates = override(tmp_path / "overrides", "lint.html", "# Our lint: {{ counts[0][0] }}\n")
    assert lint_page(wiki, run_lint(wiki), wiki.layout, templates) == "# Our lint: error\n"


def test_an_override_replaces_the_footer(wiki, tmp_path):
    text = "{% for b in backlinks %}Linked from {{ b.title }}{% endfor %}"
    templates = override(tmp_path / "overrides", "footer.html", text)
    assert rendered(wiki, "b", templates).markdown.endswith(
        "\n\nLinked from &lt;img src=x onerror=&quot;alert(1)&quot;&gt;\n"
    )


def test_the_package_template_serves_what_a_site_does_not_override(wiki, tmp_path):
    templates = override(tmp_path / "overrides", "lint.html", "ours\n")
    assert graph_page(wiki.layout, templates) == graph_page(wiki.layout)
    assert rendered(wiki, "b", templates) == rendered(wiki, "b")


def test_the_first_folder_given_wins(wiki, tmp_path):
    override(tmp_path / "theme", "graph.html", "theme\n")
    override(tmp_path / "custom", "graph.html", "custom\n")
    templates = Templates([tmp_path / "custom", tmp_path / "theme"])
    assert graph_page(wiki.layout, templates) == "custom\n"


@pytest.mark.parametrize("listing", [tags_page, index_page])
def test_a_hostile_title_is_escaped_in_the_listings(wiki, listing):
    rendered = listing(wiki, wiki.layout)
    html = rendered.markdown + "".join(rendered.late_slots.values())
    assert HOSTILE not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


def test_an_override_cannot_print_a_title_as_html(wiki, tmp_path):
    text = "{% for tag in tags %}{% for p in tag.pages %}{{ p.title }}|{% endfor %}{% endfor %}"
    templates = override(tmp_path / "overrides", "tags.html", text)
    markdown = tags_page(wiki, wiki.layout, templates).markdown
    assert markdown == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;|B|"


def test_a_broken_override_names_its_file_and_line(wiki, tmp_path):
    templates = override(tmp_path / "overrides", "lint.html", "line one\n{% if %}\n")
    with pytest.raises(TemplateProblem, match=r"groundwiki/lint\.html:2: .*fix it"):
        lint_page(wiki, run_lint(wiki), wiki.layout, templates)


def test_an_override_naming_an_unknown_value_names_its_file_and_line(wiki, tmp_path):
    templates = override(tmp_path / "overrides", "graph.html", "one\ntwo {{ no_such }}\n")
    with pytest.raises(TemplateProblem, match=r"groundwiki/graph\.html:2: .*no_such"):
        graph_page(wiki.layout, templates)


def test_an_override_failing_while_it_renders_names_its_file_and_line(wiki, tmp_path):
    templates = override(tmp_path / "overrides", "lint.html", "one\n{{ counts + 1 }}\n")
    with pytest.raises(TemplateProblem, match=r"groundwiki/lint\.html:2: .*TypeError"):
        lint_page(wiki, run_lint(wiki), wiki.layout, templates)


# --- checked before a build renders anything ---------------------------------------------------


def test_the_package_templates_pass_the_check():
    Templates().check()


def test_the_check_names_an_override_that_does_not_parse(tmp_path):
    templates = override(tmp_path / "overrides", "tags.html", "# Tags\n\n{% for %}\n")
    with pytest.raises(TemplateProblem, match=r"groundwiki/tags\.html:3: .*does not parse"):
        templates.check()


def test_the_check_names_the_line_that_includes_a_missing_template(tmp_path):
    text = 'One\n{% include "groundwiki/part.html" %}\n'
    templates = override(tmp_path / "overrides", "footer.html", text)
    with pytest.raises(
        TemplateProblem, match=r"groundwiki/footer\.html:2: .*'groundwiki/part\.html'"
    ):
        templates.check()


def test_the_check_follows_an_include_into_the_overrides(tmp_path):
    override(tmp_path / "overrides", "part.html", "{% if %}\n")
    text = 'One\n{% include "groundwiki/part.html" %}\n'
    templates = override(tmp_path / "overrides", "footer.html", text)
    with pytest.raises(TemplateProblem, match=r"groundwiki/part\.html:1: "):
        templates.check()


# --- text for Markdown as for HTML --------------------------------------------------------------

ACTIVE = "[click](javascript:alert(8)) ![i](javascript:alert(2)) {: onclick=alert(9) } `c` *e*"


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]


def as_site_html(markdown_text: str) -> _Elements:
    """The elements Python-Markdown (with attr_list, as material sites have it) makes of it."""
    elements = _Elements()
    elements.feed(markdown.markdown(markdown_text, extensions=["attr_list"]))
    return elements


@pytest.fixture
def active(make_wiki):
    return make_wiki(
        {
            "a.md": page(ACTIVE, "# A\n\nSee [[b]].\n", title=ACTIVE),
            "b.md": page("About B.", "# B\n\nText.\n"),
        }
    )


@pytest.mark.parametrize(
    "printed",
    [
        "{{ b.title }}",
        "{{ b.title|e }}",
        "{{ b.title|upper|e }}",
        "{{ b.title|safe }}",
        "{{ b.title|replace('click', 'tap') }}",
        "{{ 'From ' ~ b.title }}",
        "{{ backlinks|map(attribute='title')|join(', ') }}",
        "{{ b.summary }}",
    ],
)
def test_an_override_printing_a_value_in_markdown_makes_no_element(active, tmp_path, printed):
    text = "{% for b in backlinks %}\nLinked from " + printed + "\n{% endfor %}"
    templates = override(tmp_path / "overrides", "footer.html", text)
    footer = rendered(active, "b", templates).markdown.split("\n\n")[-1]
    assert "javascript" in footer.lower()
    elements = as_site_html(footer)
    assert elements.tags == ["p"] and elements.attributes == []


def test_a_value_printed_in_markdown_reads_as_typed(active, tmp_path):
    text = "{% for b in backlinks %}\nLinked from {{ b.title }}\n{% endfor %}"
    templates = override(tmp_path / "overrides", "footer.html", text)
    footer = rendered(active, "b", templates).markdown.split("\n\n")[-1]
    paragraph = markdown.markdown(footer, extensions=["attr_list"])
    assert html.unescape(paragraph) == f"<p>Linked from {ACTIVE}</p>"


def test_a_line_end_in_a_value_does_not_start_a_block():
    assert markdown_text("a\n# b\r\n[x]: javascript:y") == (
        "a&#10;# b&#13;&#10;&#91;x&#93;: javascript:y"
    )


def test_a_value_without_markdown_characters_escapes_as_html_alone():
    value = '<b class="x">Tom\'s _notes_ & (more): #1 - 2 + 3 = ~4!</b>'
    assert markdown_text(value) == html.escape(value)
