"""Properties on arbitrary input: the frontmatter reader and the chunker never crash."""

from __future__ import annotations

import yaml
from groundwiki.core.chunking import chunk_text
from groundwiki.core.extract import Extracted, _extract_html, _markdown_heading_lines
from groundwiki.core.frontmatter import check_contract, split_page
from groundwiki.core.markdown import parse_body
from groundwiki.core.tokens import load_tokenizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Text that is likely to hit the interesting paths: fences, colons, brackets, newlines.
PIECES = [
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
page_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=60).map(
    "".join
)
SETTINGS = settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)


@SETTINGS
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


one_line = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=40
).filter(lambda s: s.strip() == s and s)
valid_frontmatter = st.fixed_dictionaries(
    {"summary": one_line},
    optional={
        "title": one_line,
        "tags": st.lists(one_line, unique=True, max_size=4),
        "refs": st.lists(one_line, max_size=4),
        "aliases": st.lists(one_line, max_size=3),
        "usage_mode": st.sampled_from(["always", "auto", "never"]),
        "kind": st.sampled_from(["page", "overview"]),
        "owner": one_line,
    },
)


@SETTINGS
@given(valid_frontmatter)
def test_valid_frontmatter_round_trips_without_findings(fields):
    text = "---\n" + yaml.safe_dump(fields, allow_unicode=True) + "---\nbody\n"
    split = split_page(text, "wiki/x.md")
    data, problems = check_contract(split.data, split.field_lines, "wiki/x.md")
    assert (split.problems, problems) == ((), ())
    assert data == fields


def extracted(fmt: str, text: str) -> Extracted:
    if fmt == "html":
        return _extract_html(text)
    if fmt == "markdown":
        return Extracted(fmt, text, frozenset(_markdown_heading_lines(text)))
    return Extracted(fmt, text)


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["\n", "# ", "## H\n", "<h2>", "</h2>", ". ", "<p>"]),
            st.text(max_size=80),
        ),
        max_size=60,
    ).map("".join),
    st.sampled_from(["text", "markdown", "csv", "html"]),
)
def test_any_text_chunks_within_budget_and_deterministically(text, fmt):
    source = extracted(fmt, text)
    chunks = chunk_text("x.txt", source)
    tokenizer = load_tokenizer()
    lines = (source.text or "").split("\n")
    for chunk in chunks:
        measured = len(tokenizer.encode(chunk.text).ids)
        assert measured == chunk.tokens <= 256
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.text.strip()
    if (source.text or "").strip():
        assert chunks
    assert len({c.id for c in chunks}) == len(chunks)
    assert chunks == chunk_text("x.txt", extracted(fmt, text))
