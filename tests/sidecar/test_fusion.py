"""Fusion: how the lanes' scored answers become one ranking (`lanes.Fusion`), and the `fusion`
setting that chooses the method."""

from __future__ import annotations

import pytest
from groundwiki.core.config.wiki_config import ConfigError
from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.settings import settings_from_mapping
from groundwiki_sidecar.lanes import Fusion, LaneRun, fuse_convex
from groundwiki_sidecar.lanes.adaptive import M0, M_MAX, adapted, multiplier
from groundwiki_sidecar.lanes.base import NORM_WINDOW, normalised
from helpers.sidecar_helpers import small_wiki

WEIGHTS = {"lexical": 1.0, "semantic": 2.0}


def run(name: str, *scored: tuple[str, float], state: str = "ok") -> LaneRun:
    return LaneRun.answered(name, scored) if state == "ok" else LaneRun(name, state)


def test_minmax_maps_each_lanes_scores_onto_zero_to_one():
    assert normalised([11.0, 7.0, 3.0], "minmax") == [1.0, 0.5, 0.0]


def test_zscore_measures_the_distance_above_the_lowest_in_standard_deviations():
    # mean 2, population standard deviation 2: (s - 0) / 2
    assert normalised([4.0, 4.0, 0.0, 0.0], "zscore") == [2.0, 2.0, 0.0, 0.0]


def test_a_lane_with_equal_scores_gives_each_candidate_its_full_weight():
    assert normalised([0.5, 0.5], "minmax") == [1.0, 1.0]
    assert normalised([0.5], "zscore") == [1.0]


def test_scores_below_the_normalisation_window_count_as_its_lowest():
    scores = [float(100 - i) for i in range(NORM_WINDOW + 10)]
    values = normalised(scores, "minmax")
    assert values[0] == 1.0 and values[NORM_WINDOW - 1] == 0.0
    assert values[NORM_WINDOW:] == [0.0] * 10


def test_convex_fusion_is_the_weighted_sum_of_normalised_scores():
    fused = fuse_convex(
        [
            run("lexical", ("a", 10.0), ("b", 6.0), ("c", 2.0)),
            run("semantic", ("b", 0.9), ("c", 0.7), ("a", 0.5)),
        ],
        WEIGHTS,
    )
    # a: 1.0 + 2 * 0.0; b: 0.5 + 2 * 1.0; c: 0.0 + 2 * 0.5 (a tie with a, both from two lanes)
    assert [(f.id, round(f.score, 9)) for f in fused] == [("b", 2.5), ("a", 1.0), ("c", 1.0)]
    assert fused[0].contributions == {"lexical": (2, 0.5), "semantic": (1, 2.0)}


def test_convex_fusion_tells_apart_what_ranks_alone_tie():
    # The lexical lane barely prefers a to b, the semantic lane strongly prefers b.
    runs = [
        run("lexical", ("a", 5.0), ("b", 4.9), ("c", 0.0)),
        run("semantic", ("b", 0.9), ("a", 0.2), ("c", 0.1)),
    ]
    equal = {"lexical": 1.0, "semantic": 1.0}
    assert [f.id for f in Fusion(equal, "rrf").fuse(runs)][:2] == ["a", "b"]  # a tie, by ID
    assert [f.id for f in Fusion(equal, "convex").fuse(runs)][:2] == ["b", "a"]


def test_a_lane_that_missed_a_candidate_gives_it_nothing():
    fused = fuse_convex(
        [run("lexical", ("a", 5.0), ("b", 1.0)), run("semantic", ("a", 0.8), ("c", 0.4))],
        WEIGHTS,
    )
    by_id = {f.id: f for f in fused}
    assert by_id["c"].contributions == {"semantic": (2, 0.0)}
    assert by_id["b"].score == 0.0 and by_id["a"].score == pytest.approx(3.0)


def test_the_explained_parts_add_up_to_the_score():
    for method in ("rrf", "convex"):
        fused = Fusion(WEIGHTS, method).fuse(
            [run("lexical", ("a", 3.0), ("b", 2.0)), run("semantic", ("b", 0.6), ("a", 0.2))]
        )
        for hit in fused:
            assert hit.score == pytest.approx(sum(p for _, p in hit.contributions.values()))


def test_ties_go_to_more_lanes_then_to_better_ranks_then_to_the_smaller_id():
    fused = fuse_convex(
        [
            run("lexical", ("z", 4.0), ("y", 4.0), ("x", 1.0)),
            run("semantic", ("x", 0.3), ("w", 0.3)),
        ],
        {"lexical": 1.0, "semantic": 1.0},
    )
    # All four score 1.0: x from two lanes; then z (rank 1); then w and y (rank 2), by ID.
    assert [f.id for f in fused] == ["x", "z", "w", "y"]


def test_a_lane_that_did_not_answer_is_left_out_of_convex_fusion():
    fused = fuse_convex(
        [run("lexical", ("a", 2.0), ("b", 1.0)), run("semantic", state="failed")], WEIGHTS
    )
    assert [f.contributions for f in fused] == [{"lexical": (1, 1.0)}, {"lexical": (2, 0.0)}]


def test_the_fusion_setting_is_checked_against_the_methods():
    with pytest.raises(ConfigError, match=r"'fusion'.*use one of rrf, convex"):
        settings_from_mapping({"fusion": "max"})
    with pytest.raises(ConfigError, match=r"'fusion_normalise'.*use one of minmax, zscore"):
        settings_from_mapping({"fusion_normalise": "rank"})
    chosen = settings_from_mapping({"fusion": "convex", "fusion_normalise": "zscore"})
    assert chosen.fusion_rule() == Fusion(dict(chosen.weights), "convex", 60, "zscore", True)
    fixed = settings_from_mapping({"adaptive_fusion": False}).fusion_rule()
    assert fixed == Fusion(dict(chosen.weights), "convex", 60, "zscore", False)


def test_the_sidecar_fuses_by_the_method_its_settings_choose(tmp_path):
    chosen = {"fusion": "convex", "fusion_normalise": "minmax", "weights": {"lexical": 1.5}}
    service = SidecarService(small_wiki(tmp_path, chosen), embed=False)
    service.start(watch=False)
    operations = Operations(service)
    try:
        answer = operations.search("wing flutter speed", 10, explain=True)
    finally:
        operations.close()
        service.stop()
    top = answer["hits"][0]
    assert top["key"] == "wing"
    # Convex: the lexical lane's best candidate gets its whole weight, not weight / (k + 1).
    assert top["explain"]["lexical"] == {"rank": 1, "contribution": 1.5}


def measured(name: str, *scored: tuple[str, float], **signals: float) -> LaneRun:
    return LaneRun.answered(name, scored, signals=signals)


def test_the_multiplier_follows_the_lanes_measures_within_its_bounds():
    assert multiplier(0.5, 0.5, 8) == pytest.approx(M0 / 8)
    # Less of the query matched by BM25's best page, a closer best vector, a shorter
    # question: the other lanes count for more.
    assert multiplier(0.2, 0.6, 10) > multiplier(0.4, 0.6, 10)
    assert multiplier(0.4, 0.7, 10) > multiplier(0.4, 0.5, 10)
    assert multiplier(0.4, 0.6, 5) > multiplier(0.4, 0.6, 40)
    assert multiplier(0.001, 0.9, 1) == M_MAX and multiplier(1.0, 0.01, 500) == 1 / M_MAX
    assert multiplier(0.0, 0.5, 3) == M_MAX


def test_weights_adapt_only_with_both_measures():
    lexical = measured("lexical", ("a", 2.0), coverage=0.25, terms=4)
    semantic = measured("semantic", ("b", 0.9), similarity=0.5)
    weights = {"lexical": 1.0, "semantic": 0.7, "token": 0.5}
    factor = multiplier(0.25, 0.5, 4)
    assert adapted([lexical, semantic], weights) == {
        "lexical": 1.0, "semantic": 0.7 * factor, "token": 0.5 * factor
    }  # fmt: skip
    # Without a measure (a chunk search, a lane that failed) the configured weights hold.
    assert adapted([lexical, run("semantic", ("b", 0.9))], weights) == weights
    assert adapted([lexical, LaneRun("semantic", "timeout")], weights) == weights
    assert adapted([run("lexical", ("a", 2.0)), semantic], weights) == weights


def test_an_adaptive_fusion_trusts_the_semantic_lane_when_bm25_matches_little():
    """Two lanes that disagree: with the weights fixed the lexical lane's best comes first;
    when its best page matches a small share of the query and the nearest vector is close,
    the semantic lane's does; when BM25's best matches most of the query, the lexical lane's."""

    def runs(coverage: float) -> list[LaneRun]:
        return [
            measured("lexical", ("x", 9.0), ("y", 3.0), ("z", 1.0), coverage=coverage, terms=6),
            measured("semantic", ("y", 0.8), ("x", 0.5), ("z", 0.4), similarity=0.8),
        ]

    fixed = Fusion(WEIGHTS | {"semantic": 0.7}, "convex", normalise="zscore")
    adaptive = Fusion(WEIGHTS | {"semantic": 0.7}, "convex", normalise="zscore", adaptive=True)
    assert fixed.fuse(runs(0.1))[0].id == "x"
    assert adaptive.fuse(runs(0.1))[0].id == "y"
    assert adaptive.fuse(runs(0.9))[0].id == "x"
    # The parts still add up to each candidate's score.
    for found in adaptive.fuse(runs(0.1)):
        assert sum(part for _, part in found.contributions.values()) == pytest.approx(found.score)


def test_a_search_answer_gives_each_lanes_weight_and_measures(tmp_path):
    service = SidecarService(small_wiki(tmp_path), embed=False)
    service.start(watch=False)
    operations = Operations(service)
    try:
        answer = operations.search("wing flutter speed", 10)
    finally:
        operations.close()
        service.stop()
    lexical = next(lane for lane in answer["lanes"] if lane["name"] == "lexical")
    assert lexical["weight"] == 1.0  # no semantic lane without the model: nothing to adapt to
    assert 0 < lexical["measured"]["coverage"] <= 1 and lexical["measured"]["terms"] == 3
