"""BM25F over Whoosh postings: the formula, the postings decoding, segments, deletions, filters
and ties, checked against a plain-Python reference on real Whoosh indexes."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import pytest
from groundwiki_sidecar.index.bm25f import Bm25f, analyse, bound_terms
from groundwiki_sidecar.index.segment_cache import SegmentCache, _walk, postings
from whoosh import index
from whoosh.analysis import StemmingAnalyzer
from whoosh.fields import ID, TEXT, Schema

WORDS = [
    "wing",
    "flutter",
    "lift",
    "drag",
    "boundary",
    "layer",
    "shock",
    "wave",
    "nozzle",
    "heat",
    "plate",
    "cone",
]


def schema() -> Schema:
    stem = StemmingAnalyzer()
    return Schema(
        id=ID(stored=True, unique=True),
        title=TEXT(analyzer=stem),
        body=TEXT(analyzer=stem),
        mode=ID(stored=True),
    )


def corpus(count: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {
            "id": f"doc-{n:04d}",
            "title": " ".join(rng.choices(WORDS, k=rng.randint(1, 4))),
            "body": " ".join(rng.choices(WORDS, k=rng.randint(3, 40))),
            "mode": "never" if n % 7 == 0 else "auto",
        }
        for n in range(count)
    ]


def build(
    folder: Path, batches: list[list[dict[str, str]]], deletes: list[str] = ()
) -> index.Index:
    folder.mkdir(parents=True, exist_ok=True)
    ix = index.create_in(str(folder), schema())
    for batch in batches:  # one commit each, so the index has several segments
        writer = ix.writer()
        for doc in batch:
            writer.add_document(**doc)
        writer.commit(merge=False)
    if deletes:
        writer = ix.writer()
        for doc_id in deletes:
            writer.delete_by_term("id", doc_id)
        writer.commit(merge=False)
    return ix


def reference(
    ix: index.Index, docs: list[dict[str, str]], query: str, weights: dict[str, float]
) -> list[tuple[str, float]]:
    """BM25F by the textbook, one document at a time, with Whoosh's stored field lengths; a
    term the query repeats weighs as often as it occurs."""
    sch = ix.schema
    terms = Counter(analyse(sch, "body", query))
    analysed = {
        d["id"]: {f: [sch[f].to_bytes(t) for t in sch[f].process_text(d[f])] for f in weights}
        for d in docs
    }
    with ix.searcher() as searcher:
        lengths = {}
        for docnum, stored in searcher.reader().iter_docs():
            lengths[stored["id"]] = {
                f: searcher.reader().doc_field_length(docnum, f, 0) or 0 for f in weights
            }
    n = len(docs)
    average = {f: sum(lengths[d["id"]][f] for d in docs) / n for f in weights}
    scores: dict[str, float] = {}
    for term, repeats in terms.items():
        tf_prime = {}
        for d in docs:
            value = 0.0
            for f, w in weights.items():
                tf = analysed[d["id"]][f].count(term)
                value += w * tf / ((1 - 0.75) + 0.75 * lengths[d["id"]][f] / average[f])
            if value:
                tf_prime[d["id"]] = value
        df = len(tf_prime)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for doc_id, value in tf_prime.items():
            scores[doc_id] = scores.get(doc_id, 0.0) + repeats * idf * value / (1.2 + value)
    return sorted(((k, round(v, 9)) for k, v in scores.items()), key=lambda p: (-p[1], p[0]))


@pytest.mark.parametrize(
    "query",
    ["wing flutter", "shock waves on a cone", "heat", "lifting drags", "wing, wing and lift"],
)
def test_bm25f_matches_the_textbook_formula_across_segments_and_deletions(
    tmp_path: Path, query: str
) -> None:
    docs = corpus(400, seed=3)
    deleted = [d["id"] for d in docs[::9]]
    ix = build(tmp_path / "ix", [docs[:150], docs[150:300], docs[300:]], deleted)
    live = [d for d in docs if d["id"] not in deleted]
    weights = {"title": 3.0, "body": 1.0}
    expected = reference(ix, live, query, weights)
    with ix.searcher() as searcher:
        assert len(searcher.reader().leaf_readers()) > 1
        got = Bm25f(weights).rank(searcher, SegmentCache(), analyse(ix.schema, "body", query), 500)
    assert [k for k, _ in got] == [k for k, _ in expected]
    for (_, ours), (_, theirs) in zip(got, expected, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-6)


def test_one_field_of_weight_one_is_plain_bm25(tmp_path: Path) -> None:
    docs = corpus(200, seed=5)
    ix = build(tmp_path / "ix", [docs])
    with ix.searcher() as searcher:
        got = Bm25f({"body": 1.0}).rank(
            searcher, SegmentCache(), analyse(ix.schema, "body", "nozzle plate"), 50
        )
    assert [k for k, _ in got] == [
        k for k, _ in reference(ix, docs, "nozzle plate", {"body": 1.0})
    ][:50]


def test_a_term_the_query_repeats_weighs_as_often_as_it_occurs(tmp_path: Path) -> None:
    """Counted once per query, both questions rank B first; counted as often as they occur
    (bm25s, Lucene), the question that insists on "wing" prefers the page that says it twice."""
    filler = [{"id": f"f{n}", "title": "", "body": "flutter drag", "mode": "auto"} for n in (1, 2)]
    docs = [
        {"id": "A", "title": "", "body": "wing wing", "mode": "auto"},
        {"id": "B", "title": "", "body": "wing flutter", "mode": "auto"},
        *filler,
    ]
    ix = build(tmp_path / "ix", [docs])
    order = {}
    with ix.searcher() as searcher:
        for query in ("flutter flutter wing", "wing wing flutter"):
            terms = analyse(ix.schema, "body", query)
            ranked = Bm25f({"body": 1.0}).rank(searcher, SegmentCache(), terms, 10)
            order[query] = [k for k, _ in ranked if k in ("A", "B")]
    assert order == {"flutter flutter wing": ["B", "A"], "wing wing flutter": ["A", "B"]}


def test_rankers_of_different_fields_share_one_segment_cache(tmp_path: Path) -> None:
    """A segment read for a body-only ranker holds no title lengths: a title-weighting ranker
    using the same cache afterwards reads its own, and ranks as it does with a cache of its own."""
    ix = build(tmp_path / "ix", [corpus(100, seed=17)])
    cache = SegmentCache()
    with ix.searcher() as searcher:
        terms = analyse(ix.schema, "body", "wing flutter")
        Bm25f({"body": 1.0}).rank(searcher, cache, terms, 10)
        shared = Bm25f({"title": 3.0, "body": 1.0}).rank(searcher, cache, terms, 10)
        alone = Bm25f({"title": 3.0, "body": 1.0}).rank(searcher, SegmentCache(), terms, 10)
    assert shared == alone


def bounding_index(tmp_path: Path) -> index.Index:
    """ "wing" on every page (weighs little), "drag" and "flutter" on one each (weigh alike)."""
    docs = [{"id": f"p{n}", "title": "", "body": "wing lift", "mode": "auto"} for n in range(8)]
    docs[0]["body"] += " drag"
    docs[1]["body"] += " flutter"
    return build(tmp_path / "ix", [docs[:4], docs[4:]])


@pytest.mark.parametrize(
    ("query", "kept"), [("drag flutter", [b"drag"]), ("flutter drag", [b"flutter"])]
)
def test_a_long_query_keeps_the_terms_weighing_most_ties_by_first_position(
    tmp_path: Path, query: str, kept: list[bytes]
) -> None:
    """Three occurrences of a term every page holds weigh less than one rare term; of two rare
    terms weighing alike, the first in the query stays. "sailplane" is on no page: dropped
    without counting as left out, since it could score nothing."""
    ix = bounding_index(tmp_path)
    terms = analyse(ix.schema, "body", f"wing {query} wing sailplane wing")
    with ix.searcher() as searcher:
        bounded = bound_terms(searcher, SegmentCache(), ("title", "body"), terms, limit=1)
    assert (bounded.terms, bounded.distinct, bounded.left_out) == (kept, 3, 2)
    assert bounded.report().startswith("2 of the query's 3 distinct terms")


def test_a_query_within_the_bound_is_scored_whole(tmp_path: Path) -> None:
    ix = bounding_index(tmp_path)
    terms = analyse(ix.schema, "body", "wing drag wing sailplane")
    with ix.searcher() as searcher:
        bounded = bound_terms(searcher, SegmentCache(), ("title", "body"), terms, limit=4)
    assert (bounded.terms, bounded.left_out, bounded.report()) == (terms, 0, "")


def test_block_decoding_gives_the_postings_whoosh_walks(tmp_path: Path) -> None:
    """A common term spans many 128-posting blocks; a rare one is inlined in the term info."""
    docs = corpus(1000, seed=7)
    docs.append({"id": "rare", "title": "x", "body": "sailplane", "mode": "auto"})
    ix = build(tmp_path / "ix", [docs])
    with ix.searcher() as searcher:
        reader = searcher.reader()
        for term in (b"wing", b"sailplan"):
            ids, tf = postings(reader, "body", term)
            walked_ids, walked_tf = _walk(reader.postings("body", term))
            assert ids.tolist() == walked_ids.tolist()
            assert tf.tolist() == walked_tf.tolist()
        assert len(postings(reader, "body", b"wing")[0]) > 128
        assert len(postings(reader, "body", b"absent")[0]) == 0


def test_equal_scores_are_ordered_by_id_whatever_the_segments(tmp_path: Path) -> None:
    twins = [
        {"id": f"twin-{n}", "title": "lift", "body": "lift drag", "mode": "auto"}
        for n in (5, 1, 4, 2, 3)
    ]
    rankings = []
    for name, batches in (("one", [twins]), ("split", [twins[3:], twins[:3]])):
        ix = build(tmp_path / name, batches)
        with ix.searcher() as searcher:
            ranked = Bm25f({"body": 1.0}).rank(searcher, SegmentCache(), [b"lift"], 3)
        rankings.append([k for k, _ in ranked])
    assert rankings[0] == rankings[1] == ["twin-1", "twin-2", "twin-3"]


def test_require_and_exclude_filter_before_the_cut(tmp_path: Path) -> None:
    docs = corpus(300, seed=11)
    ix = build(tmp_path / "ix", [docs])
    never = {d["id"] for d in docs if d["mode"] == "never"}
    with ix.searcher() as searcher:
        model, cache = Bm25f({"title": 2.0, "body": 1.0}), SegmentCache()
        terms = analyse(ix.schema, "body", "boundary layer")
        everything = model.rank(searcher, cache, terms, 1000)
        shown = model.rank(searcher, cache, terms, 20, exclude=[("mode", b"never")])
        only = model.rank(searcher, cache, terms, 1000, require=[("mode", b"never")])
    assert [k for k, _ in shown] == [k for k, _ in everything if k not in never][:20]
    assert {k for k, _ in only} == never & {k for k, _ in everything}


def test_a_postings_cache_over_its_limit_drops_the_oldest(tmp_path: Path) -> None:
    ix = build(tmp_path / "ix", [corpus(500, seed=13)])
    cache = SegmentCache(postings_bytes=4000)
    with ix.searcher() as searcher:
        reader = searcher.reader().leaf_readers()[0][0]
        for term in (b"wing", b"lift", b"drag", b"cone"):
            cache.postings(reader, "body", term)
    assert cache._held <= 4000
    assert len(cache._postings) < 4


def test_a_kept_tf_prime_is_never_read_for_other_segments_or_deletions(tmp_path: Path) -> None:
    docs = corpus(300, seed=17)
    ix = build(tmp_path / "ix", [docs[:150], docs[150:]])
    weights = {"title": 3.0, "body": 1.0}
    model, cache = Bm25f(weights), SegmentCache()
    terms = analyse(ix.schema, "body", "wing flutter lift")
    with ix.searcher() as searcher:
        before = model.rank(searcher, cache, terms, 500)
    assert before == reference(ix, docs, "wing flutter lift", weights)[: len(before)]
    writer = ix.writer()  # an edit: one document deleted, two added, in a new segment
    writer.delete_by_term("id", before[0][0])
    for number in range(2):
        writer.add_document(id=f"new{number}", title="wing flutter", body="lift on a wing")
    writer.commit(merge=False)
    live = [d for d in docs if d["id"] != before[0][0]]
    live += [{"id": f"new{n}", "title": "wing flutter", "body": "lift on a wing"} for n in (0, 1)]
    with ix.searcher() as searcher:
        after = model.rank(searcher, cache, terms, 500)  # the same cache, kept from before
        fresh = model.rank(searcher, SegmentCache(), terms, 500)
    assert after == fresh
    assert [k for k, _ in after] == [
        k for k, _ in reference(ix, live, "wing flutter lift", weights)
    ]
    assert before[0][0] not in {k for k, _ in after} and {"new0", "new1"} <= {k for k, _ in after}


def test_a_term_whose_every_holder_in_a_segment_is_deleted_is_scored_from_the_others(
    tmp_path: Path,
) -> None:
    first = [{"id": "a", "title": "wing", "body": "flutter"}]
    second = [{"id": "b", "title": "wing", "body": "lift"}, {"id": "c", "title": "x", "body": "y"}]
    ix = build(tmp_path / "ix", [first, second], deletes=["a"])
    with ix.searcher() as searcher:
        got = Bm25f({"title": 1.0}).rank(searcher, SegmentCache(), [b"wing"], 10)
    assert [key for key, _ in got] == ["b"]


def test_the_ceiling_is_the_query_weight_no_document_reaches(tmp_path: Path) -> None:
    """Σ qtf · idf over the terms some document holds: every score stays below it, and a term
    no document holds adds nothing to it."""
    docs = corpus(300, seed=11)
    ix = build(tmp_path / "ix", [docs[:100], docs[100:]])
    told: list[float] = []
    query = "wing wing flutter zeppelin"
    with ix.searcher() as searcher:
        got = Bm25f({"title": 3.0, "body": 1.0}).rank(
            searcher, SegmentCache(), analyse(ix.schema, "body", query), 300, ceiling=told.append
        )
    n = len(docs)
    df = {
        term: sum(term in (d["title"] + " " + d["body"]).split() for d in docs)
        for term in ("wing", "flutter")
    }
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    assert told == [pytest.approx(2 * idf["wing"] + idf["flutter"], rel=1e-9)]
    assert got and all(score < told[0] for _, score in got)
