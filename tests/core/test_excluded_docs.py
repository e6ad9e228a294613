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


def _drafted(tmp_path, drafts: str = "drafts/\n"):
    config_file = write_wiki(
        tmp_path,
        {
            "home.md": page(kind="overview", body="[[note]] [[idea]] [[secret]]\n"),
            "note.md": page(),
            "drafts/idea.md": page(),
            "secret.md": "---\ntitle: Secret\npublish: false\n---\nNot for readers.\n",
        },
    )
    data = yaml.safe_load(config_file.read_text())
    data["draft_docs"] = drafts
    config_file.write_text(yaml.safe_dump(data))
    return load_config(config_file)


def test_drafts_and_unpublished_notes_are_no_pages_and_links_to_them_are_broken(tmp_path):
    config = _drafted(tmp_path)
    wiki = compile_wiki(config)
    assert sorted(wiki.pages) == ["home", "note"]
    assert wiki.unpublished == ("secret.md",)
    findings = run_lint(wiki).findings
    assert not any("drafts/" in f.path or "secret" in f.path for f in findings)
    broken = sorted(f.message for f in findings if f.rule == "broken-link")
    assert len(broken) == 2 and "idea" in broken[0] and "secret" in broken[1], broken


def test_publishing_a_note_again_makes_it_a_page_in_an_incremental_compile(tmp_path):
    config = _drafted(tmp_path)
    files = CompileCache()
    assert "secret" not in compile_wiki(config, files=files).pages
    secret = config.docs_dir / "secret.md"
    secret.write_text("---\ntitle: Secret\npublish: true\n---\nFor readers now.\n")
    again = compile_wiki(config, files=files, changed=[secret])
    assert "secret" in again.pages and again.unpublished == ()
    note = config.docs_dir / "note.md"
    note.write_text("---\ntitle: Note\npublish: false\n---\nHidden now.\n")
    hidden = compile_wiki(config, files=files, changed=[note])
    assert "note" not in hidden.pages and hidden.unpublished == ("note.md",)
    assert sorted(compile_wiki(config).pages) == sorted(hidden.pages)
