"""Big raw sources: the page shows the first lines and the cited ranges, links the full text and
warns; chunking takes memory near the file's size. Real `mkdocs build` runs (slow)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.site_builds import build_material_site, html
from helpers.wikis import page, write_wiki

LINES = 200_000
CAP = 1_000
HOSTILE = 150_001  # a cited line whose text is markup


def log_line(number: int) -> str:
    if number == HOSTILE:
        return "<script>alert('big')</script>"
    return f"event {number} ok"


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    text = "".join(log_line(n) + "\n" for n in range(1, LINES + 1))
    write_wiki(
        root,
        {
            "index.md": page(
                body="# Home\n\nIt starts. <!-- from: raw-sources/app.log#L3-L4 -->\n\n"
                "Much later. <!-- from: raw-sources/app.log#L150000-L150002 -->\n"
            ),
            "small.md": page(
                body="# Small\n\nFew lines. <!-- from: raw-sources/small.log#L2 -->\n"
            ),
        },
        {"app.log": text, "small.log": "one\ntwo\nthree\n"},
        {"source_page_lines": CAP},
    )
    result = build_material_site(root)
    assert result.returncode == 0, result.stderr
    return root


def shown_lines(text: str) -> set[int]:
    return {int(n) for n in re.findall(r'class="gw-line" id="L(\d+)"', text)}


def test_the_page_of_a_big_source_shows_the_first_lines_and_the_cited_ranges(big):
    shown = shown_lines(html(big, "raw-sources/app.log"))
    assert set(range(1, CAP + 1)) <= shown
    assert {150_000, 150_001, 150_002} <= shown


def test_lines_past_the_cap_outside_the_cited_ranges_are_left_out(big):
    text = html(big, "raw-sources/app.log")
    shown = shown_lines(text)
    assert CAP + 100 not in shown and LINES not in shown
    assert f"event {LINES} ok" not in text
    assert len(shown) < CAP + 100  # the cap and the cited ranges with a little context


def test_the_page_of_a_big_source_stays_small(big):
    size = (big / "site/raw-sources/app.log/index.html").stat().st_size
    assert size < 1_000_000, size  # the whole text would be about 30 MB of HTML


def test_the_page_says_what_it_shows_and_links_the_full_text(big):
    text = html(big, "raw-sources/app.log")
    assert f"Showing lines 1–{CAP:,} and the cited ranges of {LINES:,} lines" in text
    link = re.search(r'<a class="gw-full-text" href="([^"]+)"', text)
    assert link is not None
    full = (big / "site/raw-sources/app.log" / link.group(1)).read_text(encoding="utf-8")
    assert full.splitlines()[LINES - 1] == f"event {LINES} ok"


def test_the_full_text_is_served_as_plain_text(big):
    text = html(big, "raw-sources/app.log")
    link = re.search(r'<a class="gw-full-text" href="([^"]+)"', text)
    assert link is not None and link.group(1).endswith(".txt")


def test_a_cited_line_past_the_cap_is_escaped(big):
    text = html(big, "raw-sources/app.log")
    assert "&lt;script&gt;alert(&#x27;big&#x27;)&lt;/script&gt;" in text
    assert "<script>alert(" not in text


def test_a_citation_past_the_cap_links_to_lines_on_the_page(big):
    home = html(big, "")
    assert 'href="raw-sources/app.log/#L150000-L150002"' in home
    assert 'id="L150000"' in html(big, "raw-sources/app.log")


def test_a_citation_past_the_cap_points_at_its_chunk(big):
    index = json.loads((big / "site/groundwiki/pages.json").read_text())
    (home,) = [entry for entry in index["pages"] if entry["key"] == "index"]
    covered = {n for p in home["pointers"] for n in range(p["start_line"], p["end_line"] + 1)}
    assert {150_000, 150_001, 150_002} <= covered


def test_lint_warns_of_a_source_past_the_cap_with_the_fix(big):
    report = json.loads((big / "site/groundwiki/lint.json").read_text())
    (found,) = [f for f in report["findings"] if f["rule"] == "large-source"]
    assert found["severity"] == "warning"
    assert found["path"] == "raw-sources/app.log"
    assert "source_page_lines" in found["hint"]


def test_a_small_source_shows_every_line_and_no_note(big):
    text = html(big, "raw-sources/small.log")
    assert shown_lines(text) == {1, 2, 3}
    assert "gw-full-text" not in text
    report = json.loads((big / "site/groundwiki/lint.json").read_text())
    assert not [f for f in report["findings"] if f["path"] == "raw-sources/small.log"]


# A log has no sentence ends and no blank lines: one paragraph of the whole file, which the
# tokenizer used to take whole (250 times the text's size at its peak).
MEASURE = """
import resource, sys
from groundwiki.core.sources.chunking import chunk_text
from groundwiki.core.sources.extract import Extracted
from groundwiki.core.sources.tokens import count_tokens
count_tokens(["warm up the tokenizer"])
text = "".join(f"2024-05-01T12:00:00Z INFO worker-{n % 17} id={n:08d} status=200\\n"
               for n in range(20_000))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
chunks = chunk_text("app.log", Extracted("text", text))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(text), (after - before) * 1024, len(chunks))
"""


def test_chunking_a_big_log_takes_memory_near_its_size():
    result = subprocess.run(
        [sys.executable, "-c", MEASURE], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    size, grew, chunks = map(int, result.stdout.split())
    assert chunks > 100
    assert grew < 30 * size, f"peak grew by {grew / size:.0f}x the text's size"
