"""Properties on arbitrary input: the frontmatter reader and the chunker never crash."""

from __future__ import annotations

from groundwiki.core.chunking import chunk_text
from groundwiki.core.extract import Extracted
from groundwiki.core.frontmatter import check_contract, split_page
from groundwiki.core.markdown import parse_body
from groundwiki.core.tokens import load_tokenizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Text that is likely to hit the interesting paths: fences, colons, brackets, newlines.
pieces = st.sampled_from(
    [
        "---",
        "\n",
        ": ",
        "[",
        "]",
        "[[",
        "]]",
        "#",
        "- ",
        "`",
        "```",
        "<!--",
        "-->",
        "|",
        "'",
        '"',
        " ",
    ]
)
page_text = st.lists(st.one_of(pieces, st.text(max_size=12)), max_size=60).map("".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(page_text)
def test_any_page_text_gives_data_or_a_finding(text):
    split = split_page(text, "wiki/x.md")
    data, problems = check_contract(split.data, split.field_lines, "wiki/x.md")
    assert isinstance(data, dict)
    for problem in (*split.problems, *problems):
        assert problem.at.path == "wiki/x.md" and problem.at.line >= 1 and problem.hint
    structure = parse_body(split.body, "wiki/x.md", split.body_line)
    for link in structure.links:
        assert link.at.line >= 1


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(max_size=3000), st.sampled_from(["text", "markdown", "csv", "html"]))
def test_any_text_chunks_within_budget_and_covers_it(text, fmt):
    chunks = chunk_text("x.txt", Extracted(fmt, text))
    tokenizer = load_tokenizer()
    lines = text.split("\n")
    for chunk in chunks:
        assert len(tokenizer.encode(chunk.text).ids) <= 256
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.text.strip()
    if text.strip():
        assert chunks
    assert len({c.id for c in chunks}) == len(chunks)
    assert chunks == chunk_text("x.txt", Extracted(fmt, text))
