"""MkDocs' `exclude_docs` (and its default `/templates/`) is honoured by the core: an excluded
file is no page for lint, the compile or an incremental compile told the paths that changed,
as it is none for the site."""

from __future__ import annotations

import yaml
from groundwiki.core import compile_wiki
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.lint.runner import run_lint
from groundwiki.core.wiki.compiler import CompileCache
from helpers.wikis import page, write_wiki

TEMPLATE = "---\ndate: {{date}}\ntags: {{tags}}\n---\n# {{title}}\n"


def _wiki(tmp_path, exclude: str | None = "/Daily templates/\n*.draft.md\n"):
    config_file = write_wiki(
        tmp_path,
        {
            "home.md": page(kind="overview", body="[[note]]\n"),
            "note.md": page(),
            "Daily templates/daily.md": TEMPLATE,
            "templates/weekly.md": TEMPLATE,
            "ideas.draft.md": TEMPLATE,
        },
    )
    if exclude is not None:
        data = yaml.safe_load(config_file.read_text())
        data["exclude_docs"] = exclude
        config_file.write_text(yaml.safe_dump(data))
    return load_config(config_file)


def test_excluded_files_are_no_pages_and_lint_says_nothing_of_them(tmp_path):
    config = _wiki(tmp_path)
    wiki = compile_wiki(config)
    assert sorted(wiki.pages) == ["home", "note"]
    paths = {finding.path for finding in run_lint(wiki).findings}
    assert not any("templates" in path.lower() or "draft" in path for path in paths), paths


def test_mkdocs_default_exclusion_holds_without_exclude_docs(tmp_path):
    config = _wiki(tmp_path, exclude=None)
    wiki = compile_wiki(config)
    assert "weekly" not in wiki.pages  # `/templates/`, as MkDocs leaves it out
    assert "daily" in wiki.pages  # nothing else excluded


def test_an_edit_of_an_excluded_file_leaves_the_incremental_compile_as_a_full_one(tmp_path):
    config = _wiki(tmp_path)
    files = CompileCache()
    first = compile_wiki(config, files=files)
    template = config.docs_dir / "Daily templates/new.md"
    template.write_text(TEMPLATE)
    note = config.docs_dir / "note.md"
    note.write_text(page(summary="Changed."))
    assert first.pages
    again = compile_wiki(config, files=files, changed=[template, note])
    assert sorted(again.pages) == ["home", "note"]
    assert again.pages["note"].summary == "Changed."
    assert sorted(compile_wiki(config).pages) == sorted(again.pages)


def test_the_defaults_alone_match_as_mkdocs_matcher_does():
    from groundwiki.core.config.exclusions import DEFAULT_PATTERNS, is_excluded
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(DEFAULT_PATTERNS)
    for relative in ("templates/a.md", "a/templates/b.md", ".hidden/a.md", "a/.b.md", "a.md",
                     "templatesx/a.md", "Templates/a.md", "x/y/z.md"):  # fmt: skip
        assert is_excluded((), relative) == spec.match_file(relative), relative
