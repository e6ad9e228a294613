"""The retrieval evaluation harness: BEIR loading with clear errors, the corpus as a wiki, and
the real indexes and query engine scored on a 100-document slice of the dev collection."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from groundwiki.core import compile_wiki, load_config
from groundwiki_sidecar import lanes
from groundwiki_sidecar.evaluation.collection import (
    Collection,
    CollectionError,
    Document,
    load_collection,
)
from groundwiki_sidecar.evaluation.corpus_wiki import page_keys, write_corpus_wiki
from groundwiki_sidecar.evaluation.harness import GRID_K, VariantRun, fusion_grid
from groundwiki_sidecar.evaluation.http_run import parity
from groundwiki_sidecar.evaluation.metrics import score_runs

pytestmark = pytest.mark.long  # tens of seconds in all: scheduled first (tests/conftest.py)

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "ir" / "cranfield"
GROUNDWIKI = str(Path(sys.executable).with_name("groundwiki"))
needs_cranfield = pytest.mark.skipif(
    not (CRANFIELD / "corpus.jsonl").exists(),
    reason=f"the dev collection is not at {CRANFIELD} (it lives in ../shared beside the project)",
)


def beir(root: Path, corpus: str, queries: str, qrels: str) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (root / "queries.jsonl").write_text(queries, encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return root


GOOD_CORPUS = (
    '{"_id": "d1", "title": "Wing flutter", "text": "Flutter grows with speed. It is dangerous."}\n'
    '{"_id": "d2", "title": "Shock waves", "text": "Shocks form ahead of blunt bodies."}\n'
)
GOOD_QUERIES = '{"_id": "q1", "text": "why do wings flutter"}\n{"_id": "q2", "text": "nothing"}\n'
GOOD_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t0\n"


def test_a_collection_loads_with_only_queries_that_have_relevant_documents(tmp_path: Path) -> None:
    collection = load_collection(beir(tmp_path, GOOD_CORPUS, GOOD_QUERIES, GOOD_QRELS))
    assert [d.id for d in collection.documents] == ["d1", "d2"]
    assert collection.queries == {"q1": "why do wings flutter"}
    assert collection.qrels == {"q1": {"d1": 2}}


@pytest.mark.parametrize(
    ("corpus", "qrels", "message"),
    [
        ('{"_id": "d1", "text": "x"}\nnot json\n', GOOD_QRELS, "corpus.jsonl:2: not JSON"),
        ('{"title": "no id"}\n', GOOD_QRELS, "corpus.jsonl:1: no '_id'"),
        (
            '{"_id": "d1"}\n{"_id": "d1"}\n',
            GOOD_QRELS,
            "corpus.jsonl:2: document 'd1' appears twice",
        ),
        (GOOD_CORPUS, "query-id\tcorpus-id\tscore\nq1 d1 2\n", "test.tsv:2: expected"),
        (GOOD_CORPUS, "q1\td1\thigh\n", "test.tsv:1: score 'high' is not an integer"),
    ],
)
def test_bad_collection_files_are_named_with_the_line(
    tmp_path: Path, corpus: str, qrels: str, message: str
) -> None:
    with pytest.raises(CollectionError, match=message.replace("(", r"\(")):
        load_collection(beir(tmp_path, corpus, GOOD_QUERIES, qrels))


def test_a_missing_collection_says_what_it_expects(tmp_path: Path) -> None:
    with pytest.raises(CollectionError, match="BEIR format"):
        load_collection(tmp_path / "nowhere")


def test_documents_become_valid_pages_with_unique_keys(tmp_path: Path) -> None:
    docs = (
        Document("A/1", "Lift", "Lift rises. Then it falls."),
        Document("a-1", "", "# not a heading [[not-a-link]] <!-- from: raw-sources/x.md -->"),
        Document("7", "Drag .", "drag . more drag text"),
    )
    collection = Collection("t", docs, {"q": "lift"}, {"q": {"A/1": 1}})
    key_to_doc = write_corpus_wiki(collection, tmp_path / "w", {"embed_chunks": False})
    assert sorted(key_to_doc.values()) == ["7", "A/1", "a-1"]
    assert len(set(page_keys(docs).values())) == 3
    wiki = compile_wiki(load_config(tmp_path / "w" / "mkdocs.yml"))
    pages = {key_to_doc[k]: page for k, page in wiki.pages.items()}
    assert not [problem for page in pages.values() for problem in page.problems]
    assert pages["A/1"].summary == "Lift rises." and pages["A/1"].summary_derived
    assert pages["7"].title == "Drag"
    assert not pages["a-1"].links and not pages["a-1"].citations


def test_metrics_count_unanswered_queries_as_zero() -> None:
    collection = Collection(
        "t",
        (Document("a", "", "x"), Document("b", "", "y")),
        {"q1": "x", "q2": "y"},
        {"q1": {"a": 1}, "q2": {"b": 1}},
    )
    scores = score_runs(collection, {"half": {"q1": ("a",)}, "all": {"q1": ("a",), "q2": ("b",)}})
    assert scores["all"] == {"nDCG@10": 1.0, "R@100": 1.0, "RR@10": 1.0}
    assert scores["half"] == {"nDCG@10": 0.5, "R@100": 0.5, "RR@10": 0.5}


def run_eval(*args: str) -> subprocess.CompletedProcess[str]:
    """In a process of its own: the embedding model's thread pools must not live on in the
    test process, where later tests fork workers (core/forking.py)."""
    return subprocess.run([GROUNDWIKI, "eval", *args], capture_output=True, text=True, timeout=900)


@needs_cranfield
def test_the_harness_scores_every_lane_and_both_baselines_on_a_slice(tmp_path: Path) -> None:
    """With `--http`: the same wiki served by a sidecar process answers every query over HTTP
    with the harness's own ranking, so the figures are what an agent gets."""
    collection = load_collection(CRANFIELD).sliced(50)
    assert len(collection.documents) == 50 and collection.queries
    output = tmp_path / "results.json"
    done = run_eval(str(CRANFIELD), "--docs", "50", "--http", "-o", str(output))
    assert done.returncode == 0, done.stderr
    for name in ("lexical", "semantic", "token", "hybrid", "bm25s", "fts5", "nDCG@10"):
        assert name in done.stdout
    data = json.loads(output.read_text())
    assert data["documents"] == 50 and data["queries"] == len(collection.queries)
    systems = data["systems"]
    assert set(systems) == {
        "lexical",
        "lexical:bm25",
        "semantic",
        "token",
        "hybrid",
        "hybrid:rrf",
        "hybrid:token-fused",
        "hybrid:fixed",
        "hybrid:http",
        "bm25s",
        "fts5",
    }
    for name, scores in systems.items():
        assert set(scores) == {"nDCG@10", "R@100", "RR@10"}
        for measure, value in scores.items():
            assert 0.0 <= value <= 1.0, (name, measure, value)
        assert scores["nDCG@10"] > 0.1, name  # every ranker finds something on this slice
    worse = min(systems["lexical"]["nDCG@10"], systems["semantic"]["nDCG@10"])
    assert systems["hybrid"]["nDCG@10"] >= worse
    assert data["timings"]["index"]["texts_embedded"] >= 50  # pages, and passages apart
    queries = len(collection.queries)
    assert data["parity"] == {
        "top": 10, "queries": queries, "identical": queries, "first_difference": None
    }  # fmt: skip
    assert systems["hybrid:http"] == systems["hybrid"]
    assert f"over HTTP: {queries} of {queries} queries have the same first 10 hits" in done.stdout


def test_groundwiki_eval_refuses_a_bad_page_vector(tmp_path: Path) -> None:
    folder = beir(tmp_path / "c", GOOD_CORPUS, GOOD_QUERIES, GOOD_QRELS)
    done = run_eval(str(folder), "--page-vector", "everything")
    assert done.returncode == 2
    assert "page_vector" in done.stderr and "lead, summary" in done.stderr


@needs_cranfield
def test_a_kept_folder_is_reused_so_a_second_run_embeds_nothing(tmp_path: Path) -> None:
    kept, first, second = tmp_path / "kept", tmp_path / "first.json", tmp_path / "second.json"
    for output in (first, second):
        done = run_eval(str(CRANFIELD), "--docs", "20", "--keep", str(kept), "-o", str(output))
        assert done.returncode == 0, done.stderr
    assert json.loads(first.read_text())["timings"]["index"]["texts_embedded"] >= 20
    again = json.loads(second.read_text())
    assert again["timings"]["index"]["texts_embedded"] == 0
    assert again["systems"] == json.loads(first.read_text())["systems"]
    runs = json.loads((kept / "cranfield[:20]" / "lead" / "lane-runs.json").read_text())
    answer = next(iter(runs["lanes"]["lexical"].values()))
    assert len(answer["ranked"]) == len(answer["scores"]) > 0


def grid_run() -> tuple[Collection, VariantRun]:
    """Two queries answered by hand: the lexical lane right on q1, the semantic lane on q2."""
    collection = Collection(
        "t",
        tuple(Document(d, "", d) for d in "abc"),
        {"q1": "x", "q2": "y"},
        {"q1": {"a": 1}, "q2": {"b": 1}},
    )
    run = VariantRun("lead", hybrid={"q1": (), "q2": ()})
    answers = {
        "lexical": {"q1": (("a", 9.0), ("b", 1.0)), "q2": (("c", 5.0), ("b", 4.0))},
        "semantic": {"q1": (("b", 0.9), ("a", 0.8)), "q2": (("b", 0.7), ("c", 0.1))},
        "token": {"q1": (("c", 1.0),), "q2": (("c", 1.0),)},
    }
    for lane, by_query in answers.items():
        run.lanes[lane] = {q: tuple(d for d, _ in scored) for q, scored in by_query.items()}
        run.scores[lane] = {q: tuple(s for _, s in scored) for q, scored in by_query.items()}
        state = "standby" if lane == "token" else "ok"
        run.states[lane] = dict.fromkeys(by_query, state)
    return collection, run


def test_the_grid_scores_every_method_with_every_weight_combination() -> None:
    collection, run = grid_run()
    rows = fusion_grid(collection, run)
    combos = len(lanes.get("semantic").grid)  # the token lane only fills in: held
    rrf = [r for r in rows if r["method"] == "rrf"]
    convex = [r for r in rows if r["method"] == "convex"]
    # each with the weights fixed and adapting per query
    assert len(rrf) == 2 * combos * len(GRID_K)
    assert len(convex) == 2 * combos * len(lanes.NORMALISATIONS)
    assert {r["adaptive"] for r in rows} == {False, True}
    assert {r["k"] for r in rrf} == set(GRID_K) and all("normalise" not in r for r in rrf)
    assert {r["normalise"] for r in convex} == set(lanes.NORMALISATIONS)
    assert all(r["weights"]["lexical"] == 1.0 for r in rows)
    assert [r["nDCG@10"] for r in rows] == sorted((r["nDCG@10"] for r in rows), reverse=True)


def test_parity_counts_the_queries_whose_first_hits_match_in_order() -> None:
    harness = {"q1": ("a", "b", "c"), "q2": ("a", "b"), "q3": ("x",)}
    served = {"q1": ("a", "b", "d"), "q2": ("b", "a"), "q3": ("x",)}
    assert parity(harness, served, top=2) == {
        "top": 2, "queries": 3, "identical": 2, "first_difference": "q2"
    }  # fmt: skip
    assert parity(harness, harness, top=10)["first_difference"] is None
