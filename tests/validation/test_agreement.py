"""Cohen's kappa, Krippendorff's alpha and the majority against known answers."""
import numpy
import pytest

from spacy_paraphrase.validation.agreement import cohen_kappa, krippendorff_alpha, majority, mean_vote, percent_agreement

nan = numpy.nan


def test_cohen_kappa_by_hand():
    # agree on 8 of 10 (p_o = 0.8), each coder says 1 five times (p_e = 0.5): kappa = 0.3 / 0.5
    a = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1]
    b = [1, 1, 1, 0, 0, 0, 0, 1, 1, 0, nan]  # the last item only a coded: left out
    assert cohen_kappa(a, b) == pytest.approx(0.6)


def test_cohen_kappa_is_none_when_not_defined():
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None
    assert cohen_kappa([1, nan], [nan, 1]) is None


def test_krippendorff_alpha_of_krippendorffs_own_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the
    # 4 coders x 12 units example with missing values: nominal alpha = 0.743
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    assert krippendorff_alpha(data) == pytest.approx(0.743, abs=0.0005)


def test_krippendorff_alpha_of_two_binary_coders_by_hand():
    # units (1,1) (0,0) (1,0) (0,0): coincidences o00 = 4, o11 = 2, o01 = o10 = 1;
    # n0 = 5, n1 = 3, n = 8: D_o = 2/8, D_e = 2*5*3/(8*7), alpha = 1 - D_o/D_e = 8/15
    assert krippendorff_alpha([[1, 0, 1, 0], [1, 0, 0, 0]]) == pytest.approx(8 / 15)


def test_krippendorff_alpha_is_none_without_two_coders_or_variation():
    assert krippendorff_alpha([[1, 0, 1]]) is None
    assert krippendorff_alpha([[1, nan], [nan, 0]]) is None
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None


def test_majority_is_strict_and_a_tie_follows_the_rule():
    matrix = [[1, 1, 0, 1, nan], [1, 0, 0, nan, nan], [0, nan, 0, nan, nan]]
    for rule, tie in (("half", 0.5), ("paraphrase", 1.0), ("not-paraphrase", 0.0)):
        ref, ties = majority(matrix, rule)
        assert ref[:4].tolist() == [1.0, tie, 0.0, 1.0] and numpy.isnan(ref[4])
        assert ties.tolist() == [False, True, False, False, False]
    ref, _ = majority(matrix, "exclude")
    assert numpy.isnan(ref[1]) and ref[0] == 1.0
    assert majority(matrix)[0][1] == 0.5  # the default: half, never silently "no"
    with pytest.raises(ValueError, match="choose one of half, exclude, paraphrase, not-paraphrase"):
        majority(matrix, "coin")


def test_mean_vote_is_the_share_of_yes():
    vote = mean_vote([[1, 1, 0, nan], [1, 0, nan, nan], [0, nan, 0, nan]])
    assert vote[:3].tolist() == pytest.approx([2 / 3, 0.5, 0.0]) and numpy.isnan(vote[3])


def test_percent_agreement_counts_agreeing_coder_pairs():
    # item 1: 3 coders 1,1,0 -> 2 of 6 ordered pairs agree; item 2: 1,1 -> 2 of 2
    assert percent_agreement([[1, 1], [1, 1], [0, nan]]) == pytest.approx(4 / 8)
