"""Each lint rule fires on a fixture that breaks it, with file, line and a fix hint."""

from __future__ import annotations

from groundwiki.core import compile_wiki, load_config, run_lint
from groundwiki.core.evidence.lock import write_lock
from groundwiki.core.lint.baseline import write_baseline
from groundwiki.core.lint.runner import collect_findings
from helpers.wikis import ROOT, page

NOTES = "first line.\nsecond line.\nthird line.\n"


def findings(wiki, rule):
    return [f for f in run_lint(wiki).findings if f.rule == rule]


def only(wiki, rule):
    (found,) = findings(wiki, rule)
    assert found.hint and found.message
    return found


def test_invalid_frontmatter(make_wiki):
    f = only(make_wiki({"a.md": "---\nsummary: [oops\n---\n"}), "invalid-frontmatter")
    assert f.path == "wiki/a.md" and f.severity == "error"


def test_unreadable_page(make_wiki):
    wiki = make_wiki({"ok.md": page()})
    (wiki.config.docs_dir / "bad.md").write_bytes("---\nsummary: caf\xe9\n---\n".encode("latin-1"))
    f = only(compile_wiki(wiki.config), "unreadable-page")
    assert f.path == "wiki/bad.md" and "UTF-8" in f.hint


def test_schema_violation(make_wiki):
    f = only(make_wiki({"a.md": "---\nsummary: s\nkind: chapter\n---\n"}), "schema-violation")
    assert (f.path, f.line) == ("wiki/a.md", 3)


def test_missing_summary(make_wiki):
    f = only(make_wiki({"a.md": "---\ntitle: No summary\n---\n"}), "missing-summary")
    assert f.path == "wiki/a.md" and "summary" in f.hint


def test_missing_summary_is_not_reported_twice_for_a_bad_summary(make_wiki):
    wiki = make_wiki({"a.md": "---\nsummary: 3\n---\n"})
    assert findings(wiki, "missing-summary") == []
    assert findings(wiki, "schema-violation")


def test_duplicate_key_is_two_names_that_differ_only_in_case_in_one_folder(make_wiki):
    f = only(make_wiki({"a/same.md": page(), "a/Same.md": page()}), "duplicate-key")
    assert f.path == "wiki/a/same.md" and "wiki/a/Same.md" in f.message


def test_notes_with_one_name_in_two_folders_are_two_pages(make_wiki):
    """Obsidian allows it, and links to them use paths: both are pages, keyed by path."""
    wiki = make_wiki(
        {
            "a/same.md": page(),
            "b/Same.md": page(),
            "from.md": page(body="[[a/same]] [[B/Same|label]] [[same]]\n"),
        }
    )
    assert not findings(wiki, "duplicate-key")
    assert set(wiki.pages) >= {"a/same", "b/same"}
    source = wiki.pages["from"]
    assert [wiki.resolve(link, source).key for link in source.links] == [
        "a/same",
        "b/same",
        "a/same",
    ]
    (ambiguous,) = findings(wiki, "ambiguous-link")
    assert "wiki/b/Same.md" in ambiguous.message and "[[a/same]]" in ambiguous.hint


def test_alias_collision_is_a_link_by_a_name_several_pages_claim(make_wiki):
    wiki = make_wiki(
        {
            "a.md": page(aliases=["b", "shared", "mine"]),
            "b.md": page(),
            "c.md": page(aliases=["Shared"]),
            "d.md": page(aliases=["unused"]),
            "e.md": page(aliases=["Unused"]),
            "from.md": page(body="[[b]] [[shared]] [[mine]]\n"),
        }
    )
    found = findings(wiki, "alias-collision")
    # `[[b]]` is page b's name, which always wins; `[[mine]]` has one claimant.
    (only_one,) = found
    assert (only_one.path, only_one.detail, only_one.severity) == (
        "wiki/from.md",
        "shared",
        "warning",
    )
    assert "wiki/a.md (followed)" in only_one.message and "wiki/c.md" in only_one.message


def test_broken_link_for_wikilinks_refs_and_markdown_links(make_wiki):
    wiki = make_wiki({"a.md": page(refs=["ghost"], body="[[phantom]] and [x](nowhere.md)\n")})
    found = findings(wiki, "broken-link")
    assert [(f.line, f.detail) for f in found] == [
        (2, "ref:ghost"),
        (6, "wikilink:phantom"),
        (6, "link:nowhere.md"),
    ]


def test_broken_link_suggests_close_keys(make_wiki):
    wiki = make_wiki({"a.md": page(body="[[lock]]\n"), "lock-and-drift.md": page()})
    assert "[[lock-and-drift]]" in only(wiki, "broken-link").hint


def test_broken_anchor(make_wiki):
    wiki = make_wiki(
        {
            "a.md": page(body="[[b#Nope]] [[b#Real Part]] [[b#real-part]]\n"),
            "b.md": page(body="## Real Part\n"),
        }
    )
    assert only(wiki, "broken-anchor").detail == "b#Nope"


def test_missing_source(make_wiki):
    wiki = make_wiki(
        {"a.md": page(body="x <!-- from: raw-sources/dir/notes.md -->\n")}, {"notes.md": NOTES}
    )
    f = only(wiki, "missing-source")
    assert (f.path, f.line) == ("wiki/a.md", 4)
    assert "did you mean raw-sources/notes.md?" in f.hint


def test_source_outside_raw(make_wiki):
    f = only(
        make_wiki({"a.md": page(body="<!-- from: raw-sources/../mkdocs.yml -->\n")}),
        "source-outside-raw",
    )
    assert f.severity == "error"


def test_invalid_citation_past_the_end_of_the_source(make_wiki):
    wiki = make_wiki(
        {"a.md": page(body="<!-- from: raw-sources/notes.md#L2-L40 -->\n")}, {"notes.md": NOTES}
    )
    assert "3 lines" in only(wiki, "invalid-citation").message


def test_a_line_after_the_final_newline_is_past_the_end(make_wiki):
    wiki = make_wiki(
        {"a.md": page(body="<!-- from: raw-sources/notes.md#L4 -->\n")}, {"notes.md": NOTES}
    )
    assert "the source has 3 lines" in only(wiki, "invalid-citation").message


def test_a_duplicate_key_page_still_has_its_links_and_citations_checked(make_wiki):
    wiki = make_wiki(
        {
            "team/Setup.md": page(),
            "team/setup.md": page(body="[[nowhere]] <!-- from: raw-sources/missing.md -->\n"),
        }
    )
    rules = {(f.rule, f.path) for f in run_lint(wiki).findings}
    assert {
        ("duplicate-key", "wiki/team/setup.md"),
        ("broken-link", "wiki/team/setup.md"),
        ("missing-source", "wiki/team/setup.md"),
    } <= rules


def test_unreadable_source(make_wiki):
    wiki = make_wiki({"a.md": page()}, {"blob.bin": b"\x00\x00binary"})
    f = only(wiki, "unreadable-source")
    assert f.path == "raw-sources/blob.bin" and f.severity == "warning"


def test_symlinked_folders_and_dangling_links_are_reported_not_followed(make_wiki, tmp_path):
    import os

    wiki = make_wiki({"a.md": page()}, {"real/notes.md": NOTES})
    os.symlink(tmp_path / "raw-sources/real", tmp_path / "raw-sources/alias-dir")
    os.symlink(tmp_path / "raw-sources/nowhere.md", tmp_path / "raw-sources/dangling.md")
    found = {f.path: f.message for f in findings(compile_wiki(wiki.config), "unreadable-source")}
    assert "symlink to a folder" in found["raw-sources/alias-dir"]
    assert "symlink to nothing" in found["raw-sources/dangling.md"]


def test_a_folder_named_like_a_page_is_not_a_page(make_wiki, tmp_path):
    wiki = make_wiki({"a.md": page()})
    (tmp_path / "wiki/assets.md").mkdir()
    assert set(compile_wiki(wiki.config).pages) == {"a"}


def test_uncited_source(make_wiki):
    f = only(make_wiki({"a.md": page()}, {"lonely.md": NOTES}), "uncited-source")
    assert f.severity == "info" and f.path == "raw-sources/lonely.md"


def test_orphan_page_spares_the_overview(make_wiki):
    wiki = make_wiki(
        {"home.md": page(kind="overview", body="[[b]]\n"), "b.md": page(), "c.md": page()}
    )
    assert only(wiki, "orphan-page").path == "wiki/c.md"


def test_link_to_archived(make_wiki):
    wiki = make_wiki({"a.md": page(body="[[old]]\n"), "old.md": page(archived_since="2025-01-01")})
    assert "2025-01-01" in only(wiki, "link-to-archived").message


def test_unlocked_source(make_wiki):
    wiki = make_wiki(
        {"a.md": page(body="<!-- from: raw-sources/notes.md#L1-L2 -->\n")}, {"notes.md": NOTES}
    )
    assert only(wiki, "unlocked-source").severity == "warning"


def test_drifted_source_and_moved_source_after_the_lock(make_wiki, tmp_path):
    body = "<!-- from: raw-sources/a.md#L2-L2 -->\n\n<!-- from: raw-sources/b.md#L1-L2 -->\n"
    wiki = make_wiki({"p.md": page(body=body)}, {"a.md": NOTES, "b.md": NOTES})
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    (tmp_path / "raw-sources/a.md").write_text("first line.\nsecond line, edited.\nthird line.\n")
    (tmp_path / "raw-sources/b.md").write_text("new opening line.\n" + NOTES)
    wiki = compile_wiki(wiki.config)
    assert only(wiki, "drifted-source").line == 4
    moved = only(wiki, "moved-source")
    assert moved.line == 6 and "raw-sources/b.md#L2-L3" in moved.hint


def test_rules_can_be_switched_off_or_regraded(make_wiki):
    wiki = make_wiki(
        {"a.md": page(body="[[nowhere]]\n"), "b.md": page()},
        options={"rules": {"broken-link": "warning", "orphan-page": "off"}},
    )
    report = run_lint(wiki)
    assert {f.rule: f.severity for f in report.findings} == {"broken-link": "warning"}


def test_the_baseline_silences_known_findings_but_not_new_ones(make_wiki, tmp_path):
    wiki = make_wiki(
        {"a.md": page(body="[[one]]\n"), "home.md": page(kind="overview", body="[[a]]\n")}
    )
    write_baseline(wiki.config.baseline_path, collect_findings(wiki))
    # The known finding moves down a line and a new one appears: only the new one shows.
    (tmp_path / "wiki/a.md").write_text(page(body="intro\n\n[[one]] [[two]]\n"))
    report = run_lint(compile_wiki(wiki.config))
    assert [f.detail for f in report.findings] == ["wikilink:two"]
    assert report.baselined == 1


def test_the_bundled_wiki_is_clean():
    wiki = compile_wiki(load_config(ROOT / "mkdocs.yml"))
    report = run_lint(wiki, use_baseline=False)
    assert report.findings == ()
    assert len(wiki.pages) >= 10
