import numpy
import pytest

from spacy_paraphrase.metrics import (
    expected_calibration_error,
    jaccard,
    pair_classification_scores,
    pearson,
    prf,
    ranks,
    spearman,
)


def test_prf_hand_computed_and_empty():
    assert prf(2, 1, 3) == pytest.approx((2 / 3, 2 / 5, 2 * (2 / 3) * (2 / 5) / (2 / 3 + 2 / 5)))
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)


def test_jaccard_is_none_when_a_side_is_empty():
    gold = numpy.array([True, True, False, False])
    assert jaccard(gold, numpy.array([False, True, True, False])) == pytest.approx(1 / 3)
    assert jaccard(gold, numpy.zeros(4, dtype=bool)) is None
    assert jaccard(numpy.zeros(4, dtype=bool), gold) is None


def test_ranks_average_ties_and_spearman():
    assert ranks(numpy.array([10.0, 30.0, 20.0, 30.0])).tolist() == [0.0, 2.5, 1.0, 2.5]
    x = numpy.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(x, x ** 3) == pytest.approx(1.0)
    assert pearson(x, x ** 3) < 1.0
    assert spearman(x[:1], x[:1]) is None
    assert pearson(x, numpy.ones(4)) is None


def test_expected_calibration_error_bins():
    scores = numpy.array([0.05, 0.95, 1.0])
    labels = numpy.array([0.0, 1.0, 0.0])
    # bin 0: |0.05 - 0|; bin 9 holds 0.95 and 1.0: |0.975 - 0.5|
    assert expected_calibration_error(scores, labels) == pytest.approx(0.05 / 3 + 2 / 3 * 0.475)
    assert expected_calibration_error(numpy.array([]), numpy.array([])) == 0.0


def test_pair_classification_scores():
    s = pair_classification_scores([True, True, False, False], [True, False, True, False], "x")
    assert s == pytest.approx({"x_pair_p": 0.5, "x_pair_r": 0.5, "x_pair_f": 0.5, "x_pair_acc": 0.5, "x_pair_macro_f": 0.5})
    s = pair_classification_scores([True, False, False], [True, False, False], "y")
    assert s["y_pair_acc"] == 1.0 and s["y_pair_macro_f"] == 1.0
    assert pair_classification_scores([], [], "z")["z_pair_acc"] == 0.0
