"""The one-pass index terms (index/terms.py) equal what Whoosh's stemming analyzer indexes, on
texts that try each of its steps, on the handbook's pages, and in the postings of a real index."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from groundwiki_sidecar.index.documents import PageRecord
from groundwiki_sidecar.index.terms import Terms, analysed
from groundwiki_sidecar.index.whoosh_index import (
    PAGE_TEXT_FIELDS,
    LexicalIndex,
    page_fields,
    page_schema,
)
from whoosh.analysis import StandardAnalyzer, StemmingAnalyzer

ROOT = Path(__file__).resolve().parents[2]

TRICKY = [
    "",
    "   \n\t ",
    "Use **tags** and **file links**: *emphasis* and ***both***",  # Whoosh keeps `*` in words
    "v1.2.3 e.g. U.S.A. 3.14 ...dots... a.b. end.",
    "İstanbul ǅemal ΣΊΣΥΦΟΣ straße ﬁne Ǆ",  # lowercasing that changes length or case folds
    "snake_case CamelCase kebab-case __dunder__ x_ _y",
    "a I an the of to is it by us we be or on at as if tbd",  # stop words and short words
    "running runs ran runner generalizations hopefully caresses ponies",
    "日本語のテキスト 中文 한국어 العربية עברית",
    "emoji 🙂 in words🙂here and #tags [[wiki links]] `code` <b>html</b>",
    "x" * 300 + " " + "word " * 50,
]


@pytest.fixture(scope="module")
def analyzer() -> StemmingAnalyzer:
    return StemmingAnalyzer()


def reference(analyzer: object, text: str) -> list[str]:
    return [token.text for token in analyzer(text)]  # type: ignore[operator]


@pytest.mark.parametrize("text", TRICKY)
def test_the_terms_equal_the_analyzers_on_tricky_texts(
    analyzer: StemmingAnalyzer, text: str
) -> None:
    assert Terms(analyzer)(text) == reference(analyzer, text)


def test_the_terms_equal_the_analyzers_on_the_handbook(analyzer: StemmingAnalyzer) -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "wiki").rglob("*.md"))]
    assert texts
    terms = Terms(analyzer)
    for text in texts:
        assert terms(text) == reference(analyzer, text)


def test_the_terms_equal_the_analyzers_on_random_text(analyzer: StemmingAnalyzer) -> None:
    alphabet = "ab.*_-' \n\tÉéİıß1２🙂"
    rng = random.Random(29)
    terms = Terms(analyzer)
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert terms(text) == reference(analyzer, text), text


def test_an_analyzer_of_another_shape_is_run_as_it_is() -> None:
    analyzer = StandardAnalyzer()  # no stemmer: the one-pass reading does not apply
    text = "Running **fast** over U.S.A."
    assert Terms(analyzer)(text) == reference(analyzer, text)


def record(uid: str, title: str, body: str) -> PageRecord:
    return PageRecord(
        key=uid, title=title, summary="", tags=("one-tag",), body=body, kind="concept",
        usage_mode="reference", stale_since=None, archived_since=None, path=f"wiki/{uid}.md",
        lead="", scope="global",
    )  # fmt: skip


def test_an_index_holds_the_same_postings_and_the_title_as_written(tmp_path: Path) -> None:
    """Documents analysed before Whoosh sees them make the postings that plain text makes,
    and the stored title is the title, not its terms."""
    rng = random.Random(7)
    words = ["Wing", "flutter", "**lift**", "drag.", "U.S.", "the", "running", "İz", "a_b"]
    records = [
        record(f"p{i}", f"Title {i} of the wings", " ".join(rng.choices(words, k=60)))
        for i in range(40)
    ]
    fast = LexicalIndex(tmp_path / "fast")
    fast.apply(records, [], [], [], fresh=True)
    plain = page_schema()
    for rec in records[:3]:
        doc = page_fields(rec)
        text = {field: doc[field] for field in PAGE_TEXT_FIELDS}
        analysed(plain, [doc], PAGE_TEXT_FIELDS)
        for field in PAGE_TEXT_FIELDS:
            assert doc[field] == reference(plain[field].analyzer, text[field])
        assert doc["_stored_title"] == rec.title
    with fast.pages.searcher() as searcher:
        stored = {fields["id"]: fields["title"] for fields in searcher.all_stored_fields()}
        lexicon = {field: sorted(searcher.lexicon(field)) for field in ("title", "body", "key")}
    assert stored == {r.uid: r.title for r in records}
    # What plain text gives, term by term, through Whoosh's own analysis of the same schema.
    expected_body = sorted(
        {t.encode() for r in records for t in reference(plain["body"].analyzer, r.body)}
    )
    assert lexicon["body"] == expected_body
    assert b"**lift**" in lexicon["body"] and b"wing" in lexicon["title"]
