"""The lock records exactly what each page cites; drift is a change in that text and nothing else."""

from __future__ import annotations

from groundwiki.core import compile_wiki, load_config, run_lint
from groundwiki.core.evidence.lock import read_lock, write_lock
from helpers.wikis import page

SOURCE = "".join(f"Line {n} of the design notes.\n" for n in range(1, 41))


def lock_and_edit(make_wiki, tmp_path, body, new_source):
    wiki = make_wiki({"p.md": page(body=body)}, {"notes.md": SOURCE})
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    (tmp_path / "raw-sources/notes.md").write_text(new_source)
    return {f.rule for f in run_lint(compile_wiki(wiki.config)).findings}


def test_the_lock_file_is_sorted_tab_separated_text(make_wiki, tmp_path):
    body = (
        "<!-- from: raw-sources/notes.md#L5-L6 -->\n\n<!-- from: raw-sources/notes.md#L1-L2 -->\n"
    )
    wiki = make_wiki(
        {"p.md": page(body=body), "a.md": page(sources=["raw-sources/notes.md"])},
        {"notes.md": SOURCE},
    )
    change = write_lock(wiki.config.lock_path, wiki.lock_entries())
    assert change.written and change.added == len(wiki.lock_entries())
    rows = [
        line.split("\t")
        for line in (tmp_path / "wiki.lock").read_text().splitlines()
        if not line.startswith("#")
    ]
    assert rows == sorted(rows)
    assert ["p", "raw-sources/notes.md#L1-L2"] in [r[:2] for r in rows]
    assert ["a", "raw-sources/notes.md"] in [r[:2] for r in rows]
    assert any(r[1].startswith("chunk:ch_") for r in rows)
    assert all(len(r) == 4 and len(r[2]) == 64 for r in rows)


def test_locking_twice_changes_nothing(make_wiki, tmp_path):
    wiki = make_wiki({"p.md": page(sources=["raw-sources/notes.md#L1-L3"])}, {"notes.md": SOURCE})
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    before = (tmp_path / "wiki.lock").read_text()
    assert not write_lock(wiki.config.lock_path, compile_wiki(wiki.config).lock_entries()).written
    assert (tmp_path / "wiki.lock").read_text() == before


def test_the_locked_hash_is_of_exactly_the_cited_lines(make_wiki):
    import hashlib

    wiki = make_wiki(
        {"p.md": page(body="<!-- from: raw-sources/notes.md#L3-L4 -->\n")}, {"notes.md": SOURCE}
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    expected = hashlib.sha256(
        b"Line 3 of the design notes.\nLine 4 of the design notes."
    ).hexdigest()
    first = hashlib.sha256(b"Line 3 of the design notes.").hexdigest()[:16]
    record = read_lock(wiki.config.lock_path).get("p", "raw-sources/notes.md#L3-L4")
    assert (record.sha256, record.first_line) == (expected, first)


def test_editing_the_cited_lines_drifts_the_page(make_wiki, tmp_path):
    edited = SOURCE.replace("Line 10 of", "Line ten of")
    rules = lock_and_edit(
        make_wiki, tmp_path, "<!-- from: raw-sources/notes.md#L9-L11 -->\n", edited
    )
    assert "drifted-source" in rules


def test_an_edit_elsewhere_in_the_source_does_not_drift_the_page(make_wiki, tmp_path):
    edited = SOURCE.replace("Line 30 of", "Line thirty of")
    rules = lock_and_edit(
        make_wiki, tmp_path, "<!-- from: raw-sources/notes.md#L9-L11 -->\n", edited
    )
    assert rules.isdisjoint({"drifted-source", "moved-source", "unlocked-source"})


def test_cited_text_pushed_down_by_an_insert_is_moved_not_drifted(make_wiki, tmp_path):
    edited = "A new first line.\nAnother.\n" + SOURCE
    rules = lock_and_edit(
        make_wiki, tmp_path, "<!-- from: raw-sources/notes.md#L9-L11 -->\n", edited
    )
    assert "moved-source" in rules and "drifted-source" not in rules


def test_a_whole_file_citation_drifts_on_any_edit(make_wiki, tmp_path):
    edited = SOURCE.replace("Line 30 of", "Line thirty of")
    rules = lock_and_edit(make_wiki, tmp_path, "<!-- from: raw-sources/notes.md -->\n", edited)
    assert "drifted-source" in rules


def test_a_new_citation_after_the_lock_is_unlocked(make_wiki, tmp_path):
    wiki = make_wiki(
        {"p.md": page(body="<!-- from: raw-sources/notes.md#L1-L1 -->\n")}, {"notes.md": SOURCE}
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    (tmp_path / "wiki/p.md").write_text(
        page(
            body="<!-- from: raw-sources/notes.md#L1-L1 -->\n<!-- from: raw-sources/notes.md#L2-L2 -->\n"
        )
    )
    found = [f for f in run_lint(compile_wiki(wiki.config)).findings if f.rule == "unlocked-source"]
    assert [f.detail for f in found] == ["raw-sources/notes.md#L2"]


def test_a_damaged_lock_is_a_finding_and_lock_rewrites_it(make_wiki, tmp_path):
    wiki = make_wiki({"p.md": page(sources=["raw-sources/notes.md#L1-L3"])}, {"notes.md": SOURCE})
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    lock_file = tmp_path / "wiki.lock"
    lock_file.write_text(lock_file.read_text() + "<<<<<<< HEAD\n")
    wiki = compile_wiki(wiki.config)
    (bad,) = [f for f in run_lint(wiki).findings if f.rule == "invalid-lock"]
    assert (bad.path, bad.line) == ("wiki.lock", len(lock_file.read_text().splitlines()))
    assert write_lock(wiki.config.lock_path, wiki.lock_entries()).written
    assert "<<<<<<<" not in lock_file.read_text()


def test_cited_text_moved_from_the_end_of_a_shrunk_file_is_moved(make_wiki, tmp_path):
    rules = lock_and_edit(
        make_wiki,
        tmp_path,
        "<!-- from: raw-sources/notes.md#L38-L40 -->\n",
        SOURCE.split("\n", 5)[5],
    )
    assert "moved-source" in rules
    assert rules.isdisjoint({"drifted-source", "invalid-citation"})


def test_a_source_unreadable_after_the_lock_is_an_error_and_stays_locked(make_wiki, tmp_path):
    wiki = make_wiki(
        {"p.md": page(body="<!-- from: raw-sources/notes.md#L2-L3 -->\n")}, {"notes.md": SOURCE}
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    (tmp_path / "raw-sources/notes.md").write_bytes(b"\x00\x01binary")
    wiki = compile_wiki(wiki.config)
    (error,) = [f for f in run_lint(wiki).findings if f.rule == "invalid-citation"]
    assert error.path == "wiki/p.md" and "cannot be read" in error.message
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    # The citation's record is kept, not silently dropped (only its pointer chunk goes).
    assert read_lock(wiki.config.lock_path).get("p", "raw-sources/notes.md#L2-L3")


def test_a_renamed_page_keeps_its_drift_check_through_its_alias(make_wiki, tmp_path):
    body = "<!-- from: raw-sources/notes.md#L2-L3 -->\n"
    wiki = make_wiki({"old-name.md": page(body=body)}, {"notes.md": SOURCE})
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    (tmp_path / "wiki/old-name.md").rename(tmp_path / "wiki/new-name.md")
    (tmp_path / "wiki/new-name.md").write_text(page(body=body, aliases=["old-name"]))
    (tmp_path / "raw-sources/notes.md").write_text(SOURCE.replace("Line 3 of", "Line three of"))
    rules = {f.rule for f in run_lint(compile_wiki(wiki.config)).findings}
    assert "drifted-source" in rules and "unlocked-source" not in rules


def test_lock_records_of_a_vanished_page_are_reported(make_wiki, tmp_path):
    wiki = make_wiki(
        {"gone.md": page(sources=["raw-sources/notes.md#L1-L1"])}, {"notes.md": SOURCE}
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    (tmp_path / "wiki/gone.md").unlink()
    (stale,) = [
        f for f in run_lint(compile_wiki(wiki.config)).findings if f.rule == "stale-lock-entry"
    ]
    assert stale.path == "wiki.lock" and stale.detail == "gone"


def test_tabs_in_names_survive_the_lock_file(tmp_path):
    from groundwiki.core.evidence.lock import LockEntry

    entry = LockEntry("odd\tkey", "raw-sources/a\tb.md#L1-L1", "0" * 64, "1" * 16)
    write_lock(tmp_path / "wiki.lock", [entry])
    lock = read_lock(tmp_path / "wiki.lock")
    assert lock.problems == ()
    assert lock.get("odd\tkey", "raw-sources/a\tb.md#L1-L1").first_line == "1" * 16


def test_a_lock_without_first_line_hashes_still_finds_moves(make_wiki, tmp_path):
    wiki = make_wiki(
        {"p.md": page(body="<!-- from: raw-sources/notes.md#L9-L11 -->\n")}, {"notes.md": SOURCE}
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    lock_file = tmp_path / "wiki.lock"
    three_columns = ["\t".join(line.split("\t")[:3]) for line in lock_file.read_text().splitlines()]
    lock_file.write_text("\n".join(three_columns) + "\n")
    (tmp_path / "raw-sources/notes.md").write_text("New line.\n" + SOURCE)
    rules = {f.rule for f in run_lint(compile_wiki(wiki.config)).findings}
    assert "moved-source" in rules and "drifted-source" not in rules


def test_lock_does_not_accept_moved_text_at_the_old_range(make_wiki, tmp_path):
    rules = lock_and_edit(
        make_wiki, tmp_path, "<!-- from: raw-sources/notes.md#L9-L11 -->\n", "New.\n" + SOURCE
    )
    assert "moved-source" in rules
    wiki = compile_wiki(load_config(tmp_path / "mkdocs.yml"))
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    still = {f.rule for f in run_lint(compile_wiki(wiki.config)).findings}
    assert "moved-source" in still  # until the citation says #L10-L12


def test_a_single_line_is_recorded_as_written_and_old_records_still_count(make_wiki, tmp_path):
    wiki = make_wiki(
        {"p.md": page(body="<!-- from: raw-sources/notes.md#L2 -->\n")}, {"notes.md": SOURCE}
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    lock_file = tmp_path / "wiki.lock"
    assert "raw-sources/notes.md#L2\t" in lock_file.read_text()
    lock_file.write_text(lock_file.read_text().replace("notes.md#L2\t", "notes.md#L2-L2\t"))
    (tmp_path / "raw-sources/notes.md").write_text(SOURCE.replace("Line 2 of", "Line two of"))
    rules = {f.rule for f in run_lint(compile_wiki(wiki.config)).findings}
    assert "drifted-source" in rules and "unlocked-source" not in rules


def test_the_lock_says_which_pointer_chunks_each_page_was_locked_against(make_wiki):
    wiki = make_wiki(
        {
            "p.md": page(sources=["raw-sources/notes.md#L1-L3"]),
            "q.md": page(sources=["raw-sources/notes.md#L30-L32"]),
        },
        {"notes.md": SOURCE},
    )
    write_lock(wiki.config.lock_path, wiki.lock_entries())
    lock = read_lock(wiki.config.lock_path)
    pointed = {key: {p.chunk_id for p in wiki.pointers[key]} for key in ("p", "q")}
    assert lock.chunk_ids("p") == pointed["p"] and lock.chunk_ids("q") == pointed["q"]
    assert lock.chunk_ids() == pointed["p"] | pointed["q"]
    assert lock.chunk_ids("nowhere") == frozenset()
