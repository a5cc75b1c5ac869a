"""Precision / recall / F1, the weighted sample and the Rogan-Gladen rate
with their bootstrap intervals, against known answers."""
import math

import numpy
import pytest

from spacy_paraphrase.validation.scoring import confusion, model_scores, rogan_gladen, sample_weights


def test_confusion_by_hand():
    pred = [1, 1, 1, 0, 0, 0, 1, 0]
    ref = [1, 1, 0, 0, 0, 1, 1, 0]  # tp 3, fp 1, fn 1, tn 3
    assert confusion(pred, ref, [1] * 8) == pytest.approx(
        {"precision": 0.75, "recall": 0.75, "specificity": 0.75, "f1": 0.75})
    # weights 2 on the false positive, 3 on the false negative: tp 3, fp 2, fn 3, tn 3
    weighted = confusion(pred, ref, [1, 1, 2, 1, 1, 3, 1, 1])
    assert weighted == pytest.approx({"precision": 0.6, "recall": 0.5, "specificity": 0.6, "f1": 6 / 11})


def test_confusion_without_positives_is_none_not_zero():
    assert confusion([0, 0], [0, 0], [1, 1]) == {"precision": None, "recall": None, "specificity": 1.0, "f1": None}


def test_rogan_gladen_by_hand():
    assert rogan_gladen(0.3, 0.8, 0.9) == pytest.approx(0.2 / 0.7)
    assert rogan_gladen(0.05, 0.8, 0.9) == 0.0  # (0.05 - 0.1) / 0.7 < 0: clipped
    assert rogan_gladen(0.99, 0.8, 0.9) == 1.0
    assert rogan_gladen(0.3, 0.5, 0.5) is None  # Se + Sp <= 1: no information
    assert rogan_gladen(0.3, None, 0.9) is None


def test_a_stratified_sample_is_weighted_back_to_the_corpus():
    # stratum A: 90 pairs in the corpus, 10 coded, 2 paraphrases; B: 10, 10 coded, 8:
    # the corpus rate is (90 * 0.2 + 10 * 0.8) / 100 = 0.26, not the sample's 0.5
    strata = ["A"] * 10 + ["B"] * 10
    ref = [1, 1] + [0] * 8 + [1] * 8 + [0, 0]
    weights = sample_weights(strata, {"A": 90, "B": 10})
    assert weights.tolist() == [9.0] * 10 + [1.0] * 10
    scores = model_scores(ref, ref, strata, {"A": 90, "B": 10}, [1, 0] * 50, list(range(100)), n_boot=500)
    assert scores["rates"]["sample_weighted"]["value"] == pytest.approx(0.26)


def _corpus(n_conv=300, per=4, rate=0.3, seed=0):
    rng = numpy.random.default_rng(seed)
    decisions = (rng.random(n_conv * per) < rate).astype(float)
    return decisions, numpy.repeat(numpy.arange(n_conv), per)


def test_a_perfect_model_has_point_intervals_and_its_own_rate_as_corrected_rate():
    decisions, clusters = _corpus()
    ref = [1] * 30 + [0] * 70
    scores = model_scores(ref, ref, ["all"] * 100, {"all": len(decisions)}, decisions, clusters, n_boot=2000)
    for key in ("precision", "recall", "specificity", "f1"):
        assert (scores[key]["value"], scores[key]["low"], scores[key]["high"]) == (1.0, 1.0, 1.0)
    corrected, model = scores["rates"]["rogan_gladen"], scores["rates"]["model"]
    assert corrected["value"] == pytest.approx(model["value"])
    # Se = Sp = 1 in every resample: the interval is the model rate's conversation bootstrap
    assert corrected["low"] == pytest.approx(model["low"], abs=0.01)
    assert corrected["high"] == pytest.approx(model["high"], abs=0.01)


def test_recall_interval_matches_the_normal_theory_one():
    # 1000 coded positives, the model finds 800: recall 0.8 +- 1.96 sqrt(0.8 * 0.2 / 1000)
    ref = [1] * 1000 + [0] * 1000
    pred = [1] * 800 + [0] * 200 + [0] * 900 + [1] * 100
    decisions, clusters = _corpus()
    scores = model_scores(pred, ref, ["all"] * 2000, {"all": 2000}, decisions, clusters, n_boot=3000)
    half = 1.96 * math.sqrt(0.8 * 0.2 / 1000)
    assert scores["recall"]["value"] == 0.8 and scores["specificity"]["value"] == 0.9
    assert scores["recall"]["low"] == pytest.approx(0.8 - half, abs=0.004)
    assert scores["recall"]["high"] == pytest.approx(0.8 + half, abs=0.004)


def test_corrected_rate_interval_matches_the_delta_method():
    # Se 0.8 on 500 positives, Sp 0.9 on 500 negatives, the model rate p of a
    # corpus of 300 conversations: Var(RG) ~ (Var p + RG^2 Var Se + (1-RG)^2 Var Sp) / J^2
    ref = [1] * 500 + [0] * 500
    pred = [1] * 400 + [0] * 100 + [0] * 450 + [1] * 50
    decisions, clusters = _corpus(rate=0.35, seed=4)
    scores = model_scores(pred, ref, ["all"] * 1000, {"all": 1000}, decisions, clusters, n_boot=4000)
    model = scores["rates"]["model"]
    p = model["value"]
    j = 0.8 + 0.9 - 1
    rg = (p + 0.9 - 1) / j
    assert scores["rates"]["rogan_gladen"]["value"] == pytest.approx(rg)
    var_p = ((model["high"] - model["low"]) / (2 * 1.96)) ** 2
    var = (var_p + rg ** 2 * 0.8 * 0.2 / 500 + (1 - rg) ** 2 * 0.9 * 0.1 / 500) / j ** 2
    width = scores["rates"]["rogan_gladen"]["high"] - scores["rates"]["rogan_gladen"]["low"]
    assert width == pytest.approx(2 * 1.96 * math.sqrt(var), rel=0.1)


def test_one_conversation_leaves_the_corrected_interval_not_estimable():
    ref = [1, 1, 0, 0]
    scores = model_scores([1, 0, 0, 0], ref, ["all"] * 4, {"all": 4}, [1, 0, 0, 0], ["c"] * 4, n_boot=200)
    corrected = scores["rates"]["rogan_gladen"]
    assert corrected["value"] == pytest.approx((0.25 + 1 - 1) / (0.5 + 1 - 1))
    assert corrected["low"] is None and "not estimable" in corrected["note"]
    assert scores["rates"]["model"]["low"] is None
