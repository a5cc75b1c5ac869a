"""The estimators of ``validate score`` (validation/estimators.py) against
known answers: hand-computed figures on small designs, the bootstrap's
spread against the linearised (delta-method) variance of the stratified
estimator and of the Rogan-Gladen rate, and the coverage of the 95%
interval over many seeded sheets of synthetic corpora with a known rate."""
import math

import numpy
import pytest

from spacy_paraphrase.validation.estimators import StratifiedSample
from spacy_paraphrase.validation.sheet import draw, stratum


def _two_strata():
    # stratum A (the model's "no"): 90 pairs, 10 coded, 2 paraphrases; B ("yes"): 10 pairs, all coded, 8
    strata = ["A"] * 90 + ["B"] * 10
    decisions = [0] * 90 + [1] * 10
    coded = list(range(10)) + list(range(90, 100))
    ref = [1, 1] + [0] * 8 + [1] * 8 + [0, 0]
    return StratifiedSample(list(range(100)), strata, decisions, coded), ref


def test_a_stratified_sample_is_weighted_back_to_the_corpus_by_hand():
    sample, ref = _two_strata()
    est = sample.estimate(ref, n_boot=200)
    # weights 9 (A) and 1 (B): tp 8, fp 2, fn 9 * 2 = 18, tn 9 * 8 = 72, corpus 100 pairs
    assert est["rate"]["value"] == pytest.approx(0.26)  # (90 * 0.2 + 10 * 0.8) / 100, not the sample's 0.5
    assert est["precision"]["value"] == pytest.approx(0.8)
    assert est["recall"]["value"] == pytest.approx(8 / 26)
    assert est["specificity"]["value"] == pytest.approx(72 / 74)
    assert est["f1"]["value"] == pytest.approx(2 * 0.8 * (8 / 26) / (0.8 + 8 / 26))
    assert est["accuracy"]["value"] == pytest.approx(0.8)
    # stratified by the decision: Rogan-Gladen is the weighted rate again (why it is not reported)
    assert est["rogan_gladen"]["value"] == pytest.approx(est["rate"]["value"])


def test_rogan_gladen_by_hand_on_a_simple_random_sample():
    # corpus of 10 pairs, the model says yes to 4 (p = 0.4); 8 coded: tp 3, fn 1, tn 3, fp 1
    decisions = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    coded = [0, 1, 2, 3, 4, 5, 6, 7]
    ref = [1, 1, 1, 0, 1, 0, 0, 0]
    est = StratifiedSample(list(range(10)), ["all"] * 10, decisions, coded).estimate(ref, n_boot=200)
    assert est["recall"]["value"] == 0.75 and est["specificity"]["value"] == 0.75
    assert est["rogan_gladen"]["value"] == pytest.approx((0.4 + 0.75 - 1) / 0.5)
    assert est["rate"]["value"] == pytest.approx(0.5)
    # Se + Sp <= 1: no information
    flat = StratifiedSample(list(range(10)), ["all"] * 10, decisions, coded).estimate([1, 0, 1, 0, 1, 0, 1, 0])
    assert flat["rogan_gladen"]["value"] is None


def _clustered(k=40, per=50, seed=0, rate=0.3):
    rng = numpy.random.default_rng(seed)
    pi = rng.beta(1.5, 1.5 * (1 - rate) / rate, k)  # conversations differ; mean rate
    clusters = numpy.repeat(numpy.arange(k), per)
    truth = (rng.random(k * per) < pi[clusters]).astype(float)
    decisions = numpy.where(truth == 1, rng.random(k * per) < 0.8, rng.random(k * per) < 0.1).astype(float)
    return rng, clusters, truth, decisions


def test_the_stratified_interval_matches_the_linearised_variance():
    # strata = the model's decision; 150 coded pairs of each from 40 conversations of 50 pairs that
    # differ (about 7 coded pairs a conversation: resampling pairs instead would be far too narrow)
    rng, clusters, truth, decisions = _clustered()
    strata = numpy.where(decisions == 1, "yes", "no")
    coded = numpy.concatenate([rng.choice(numpy.flatnonzero(strata == h), 150, replace=False) for h in ("no", "yes")])
    est = StratifiedSample(clusters, strata, decisions, coded).estimate(truth[coded], n_boot=4000, seed=1)
    # R = sum_h N_h ybar_h / N; z_c = sum_h [N_ch (ybar_h - R) + N_h (S_ch - n_ch ybar_h) / n_h] / N;
    # Var = k / (k - 1) sum_c z_c^2 (conversations as primary units drawn with replacement)
    n_total = len(decisions)
    ybar = {h: truth[coded][strata[coded] == h].mean() for h in ("no", "yes")}
    big_n = {h: (strata == h).sum() for h in ("no", "yes")}
    r = sum(big_n[h] * ybar[h] for h in ybar) / n_total
    assert est["rate"]["value"] == pytest.approx(r)
    z = numpy.zeros(clusters.max() + 1)
    for h in ("no", "yes"):
        in_h = coded[strata[coded] == h]
        numpy.add.at(z, clusters[strata == h], ybar[h] - r)
        numpy.add.at(z, clusters[in_h], big_n[h] * (truth[in_h] - ybar[h]) / len(in_h))
    sd = math.sqrt(len(z) / (len(z) - 1) * ((z / n_total) ** 2).sum())
    width = est["rate"]["high"] - est["rate"]["low"]
    assert width == pytest.approx(2 * 1.96 * sd, rel=0.1)


def test_the_rogan_gladen_interval_is_joint_and_matches_the_delta_method():
    # a simple random sample of 600 pairs: p (the whole corpus), Se and Sp come from the same
    # conversations; RG = (p + Sp - 1) / J, dRG = (dp + (1 - RG) dSp - RG dSe) / J
    rng, clusters, truth, decisions = _clustered(seed=3)
    coded = rng.choice(len(truth), 600, replace=False)
    est = StratifiedSample(clusters, ["all"] * len(truth), decisions, coded).estimate(truth[coded], n_boot=4000)
    y, d, c = truth[coded], decisions[coded], clusters[coded]
    p = decisions.mean()
    se, sp = (d * y).sum() / y.sum(), ((1 - d) * (1 - y)).sum() / (1 - y).sum()
    j = se + sp - 1
    rg = (p + sp - 1) / j
    assert est["rogan_gladen"]["value"] == pytest.approx(rg)
    k = clusters.max() + 1
    zp = numpy.bincount(clusters, decisions - p, k) / len(decisions)
    zse = numpy.bincount(c, y * (d - se), k) / y.sum()
    zsp = numpy.bincount(c, (1 - y) * ((1 - d) - sp), k) / (1 - y).sum()
    sd = math.sqrt(k / (k - 1) * (((zp + (1 - rg) * zsp - rg * zse) / j) ** 2).sum())
    width = est["rogan_gladen"]["high"] - est["rogan_gladen"]["low"]
    assert width == pytest.approx(2 * 1.96 * sd, rel=0.1)


def test_a_perfect_model_has_point_intervals_for_its_errors():
    rng, clusters, truth, _ = _clustered(k=100, per=5)
    coded = rng.choice(len(truth), 100, replace=False)
    est = StratifiedSample(clusters, ["all"] * len(truth), truth, coded).estimate(truth[coded], n_boot=500)
    for key in ("precision", "recall", "specificity", "f1"):
        assert (est[key]["value"], est[key]["low"], est[key]["high"]) == (1.0, 1.0, 1.0)
    assert est["rogan_gladen"]["value"] == pytest.approx(truth.mean())


def test_a_small_stratum_coded_whole_keeps_its_interval():
    # 200 conversations of 5 pairs; stratum "edge" = 2 pairs of 2 conversations, both coded: a resample
    # without those conversations has no "edge" pair in the corpus either, and is usable
    rng, clusters, truth, decisions = _clustered(k=200, per=5, seed=5)
    strata = numpy.where(decisions == 1, "yes", "no").astype(object)
    strata[[0, 5]] = "edge"
    coded = numpy.concatenate([[0, 5], rng.choice(numpy.flatnonzero(strata != "edge"), 100, replace=False)])
    est = StratifiedSample(clusters, strata, decisions, coded).estimate(truth[coded], n_boot=500)
    assert est["rate"]["low"] is not None and est["rate"]["low"] < est["rate"]["value"] < est["rate"]["high"]


def test_one_conversation_leaves_every_interval_not_estimable():
    est = StratifiedSample(["c"] * 4, ["all"] * 4, [1, 0, 0, 0], [0, 1, 2, 3]).estimate([1, 1, 0, 0], n_boot=200)
    assert est["rate"]["value"] == 0.5 and est["rogan_gladen"]["value"] == pytest.approx(0.5)
    assert all(e["low"] is None and "fewer than 2 conversations" in e["note"] for e in est.values())


def _records(rng, k, per, rate):
    """A synthetic corpus: conversations whose rates differ (mean ``rate``),
    true labels, a model whose score is noisy (errors near its threshold)."""
    pi = rng.beta(2.0, 2.0 * (1 - rate) / rate, k)
    clusters = numpy.repeat(numpy.arange(k), per)
    truth = (rng.random(k * per) < pi[clusters]).astype(float)
    score = numpy.clip(numpy.where(truth == 1, 0.65, 0.35) + rng.normal(0, 0.18, k * per), 0, 1)
    return [{"pair_id": f"p{i}", "conversation_id": f"c{clusters[i]}", "score": float(score[i]),
             "is_paraphrase": bool(score[i] >= 0.5), "margin": float(score[i] - 0.5)} for i in range(k * per)], truth


@pytest.mark.parametrize("stratify,figures", [("margin", ("rate",)), ("none", ("rate", "rogan_gladen"))])
def test_the_95_interval_covers_the_true_rate_of_93_to_97_percent_of_sheets(stratify, figures):
    # 500 seeded corpora (80 conversations of 12 pairs, true rate 0.3 on average, conversations that
    # differ), each with a sheet of 300 pairs drawn by 'validate sheet' and coded without error;
    # resampling pairs instead of conversations covers 86-92%
    rate, covered = 0.3, {key: 0 for key in figures}
    for seed in range(500):
        rng = numpy.random.default_rng(seed)
        records, truth = _records(rng, 80, 12, rate)
        sample, design = draw(records, 300, stratify, seed)
        row = {r["pair_id"]: i for i, r in enumerate(records)}
        coded = [row[r["pair_id"]] for r in sample]
        strata = [stratum(r, stratify) for r in records]  # as validate score recomputes them
        est = StratifiedSample([r["conversation_id"] for r in records], strata,
                               [float(r["is_paraphrase"]) for r in records], coded).estimate(
            truth[coded], n_boot=400, seed=seed)
        for key in figures:
            covered[key] += est[key]["low"] <= rate <= est[key]["high"]
    for key in figures:
        assert 0.93 <= covered[key] / 500 <= 0.97, (key, covered[key])
