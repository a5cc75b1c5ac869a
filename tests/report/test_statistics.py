"""The report's cluster-bootstrap intervals against known answers."""
import math

import numpy
import pytest

from spacy_paraphrase.report.statistics import NOT_ESTIMABLE, cluster_bootstrap, group_rates, score_histogram


def test_conversations_with_the_same_rate_give_a_point_interval():
    values = [1, 0] * 10
    clusters = [c for c in range(10) for _ in range(2)]
    rate = cluster_bootstrap(values, clusters)
    assert (rate.rate, rate.low, rate.high, rate.conversations, rate.pairs) == (0.5, 0.5, 0.5, 10, 20)


def test_one_conversation_is_not_estimable():
    rate = cluster_bootstrap([1, 0, 1], ["a", "a", "a"])
    assert rate.rate == pytest.approx(2 / 3)
    assert rate.low is None and rate.high is None and rate.note == NOT_ESTIMABLE


def test_the_interval_matches_the_normal_theory_one_for_whole_conversations():
    # 400 conversations of 5 pairs each, every pair of a conversation alike:
    # the rate is a mean of 400 independent 0/1 conversation values, whose
    # 95% interval is p +- 1.96 sqrt(p (1 - p) / 400).
    rng = numpy.random.default_rng(1)
    per_conversation = rng.random(400) < 0.3
    values = numpy.repeat(per_conversation, 5).astype(float)
    clusters = numpy.repeat(numpy.arange(400), 5)
    rate = cluster_bootstrap(values, clusters, n_boot=4000)
    p = per_conversation.mean()
    half = 1.96 * math.sqrt(p * (1 - p) / 400)
    assert rate.low == pytest.approx(p - half, abs=0.006)
    assert rate.high == pytest.approx(p + half, abs=0.006)
    # resampling pairs as if independent would be sqrt(5) times too narrow
    naive = cluster_bootstrap(values, numpy.arange(len(values)), n_boot=4000)
    ratio = (rate.high - rate.low) / (naive.high - naive.low)
    assert ratio == pytest.approx(math.sqrt(5), rel=0.12)


def test_the_ratio_estimator_weights_conversations_by_their_pairs():
    # two conversations: 1 pair (a paraphrase) and 3 pairs (none): rate 1/4;
    # the resamples are {A,A}: 1, {B,B}: 0, {A,B}: 1/4 -> interval [0, 1]
    rate = cluster_bootstrap([1, 0, 0, 0], ["A", "B", "B", "B"], n_boot=4000)
    assert rate.rate == 0.25 and rate.low == 0.0 and rate.high == 1.0


def test_the_same_seed_gives_the_same_interval():
    values, clusters = [1, 0, 1, 1, 0, 0], [1, 1, 2, 3, 3, 4]
    assert cluster_bootstrap(values, clusters, seed=3) == cluster_bootstrap(values, clusters, seed=3)


def test_group_rates_bootstrap_each_group_on_its_own():
    decisions = [1, 1, 0, 0, 1, 0]
    clusters = ["a", "a", "b", "c", "c", "d"]
    groups = ["x", "x", "y", None, "y", "y"]
    rows = group_rates(decisions, clusters, groups)
    assert [(r["group"], r["pairs"], r["paraphrases"], r["conversations"]) for r in rows] == [
        ("y", 3, 1, 3), ("x", 2, 2, 1)]
    assert rows[1]["rate"] == 1.0 and rows[1]["low"] is None and rows[1]["note"] == NOT_ESTIMABLE


def test_score_histogram_counts_every_scored_pair_once():
    bins = score_histogram([0.0, 0.05, 0.5, 1.0, None, 0.999], bins=10)
    assert sum(b["pairs"] for b in bins) == 5
    assert bins[0]["pairs"] == 2 and bins[5]["pairs"] == 1 and bins[-1]["pairs"] == 2


def test_the_bootstrap_draws_in_chunks_with_the_same_result(monkeypatch):
    from spacy_paraphrase.report import statistics

    rng = numpy.random.default_rng(0)
    values, clusters = rng.random(300) < 0.4, rng.integers(0, 60, 300)
    whole = cluster_bootstrap(values, clusters, n_boot=500)
    monkeypatch.setattr(statistics, "CHUNK", 60 * 7)  # 7 resamples at a time
    assert cluster_bootstrap(values, clusters, n_boot=500) == whole
