import numpy
import pytest
from spacy.training import Example

from spacy_paraphrase import make_pair_doc
from tests.util import write_paraphrase_annotations
from spacy_paraphrase.paraphrase_spans.scorer import reference_gold, score_paraphrase_spans


def _pair(nlp, probs, gold_words, gold_pair, n1=4, n2=4, votes=None, counts=None):
    words1 = [f"a{i}" for i in range(n1)]
    words2 = [f"b{i}" for i in range(n2)]
    pred = make_pair_doc(nlp, words1, words2)
    write_paraphrase_annotations(
        pred, numpy.asarray(probs, dtype="float32"), spans_key="paraphrase",
        cats_key="PARAPHRASE", threshold=0.5, highlight_threshold=0.5,
    )
    ref = make_pair_doc(nlp, words1, words2)
    ref.spans["paraphrase"] = []
    ref.spans["paraphrase"].attrs["token_targets"] = [float(x) for x in gold_words]
    if votes is not None:
        ref.spans["paraphrase"].attrs["votes"] = votes
        ref.spans["paraphrase"].attrs["highlight_counts"] = counts
    ref.cats["PARAPHRASE"] = float(gold_pair)
    return Example(pred, ref)


def test_hand_computed_scores(nlp):
    egs = [
        # TP pair. first turn: pred {0,1}, gold {1,2} -> J = 1/3; second: pred {4}, gold {4} -> 1
        _pair(nlp, [0.9, 0.8, 0.1, 0.1, 0.7, 0.2, 0.2, 0.2], [0, 1, 1, 0, 1, 0, 0, 0], 1),
        # FP pair (gold has no highlights -> excluded from both Jaccards)
        _pair(nlp, [0.9, 0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1], [0] * 8, 0),
        # FN pair: pair score 0.4 < 0.5 but the first turn has a highlight at 0.6
        # and the second none -> first turn J counts (pred {0}, gold {0} -> 1), second excluded
        _pair(nlp, [0.6, 0.1, 0.1, 0.1, 0.4, 0.1, 0.1, 0.1], [1, 0, 0, 0, 0, 1, 0, 0], 1),
        # TN pair
        _pair(nlp, [0.1] * 8, [0] * 8, 0),
    ]
    s = score_paraphrase_spans(egs, name="pp", highlight_threshold=0.5, threshold=0.5)
    assert s["pp_pair_p"] == pytest.approx(0.5)
    assert s["pp_pair_r"] == pytest.approx(0.5)
    assert s["pp_pair_f"] == pytest.approx(0.5)
    assert s["pp_pair_acc"] == pytest.approx(0.5)
    assert s["pp_pair_macro_f"] == pytest.approx(0.5)
    assert s["pp_jaccard_first"] == pytest.approx((1 / 3 + 1) / 2)
    assert s["pp_jaccard_first_n"] == 2
    assert s["pp_jaccard_second"] == pytest.approx(1.0)
    assert s["pp_jaccard_second_n"] == 1
    # token level: only the TP and FP pairs have output spans
    # TP pair: pred {0,1,4}, gold {1,2,4}: tp 2, fp 1, fn 1; FP pair: fp 2; FN pair: fn 2
    assert s["pp_token_p"] == pytest.approx(2 / 5)
    assert s["pp_token_r"] == pytest.approx(2 / 5)


def test_highlight_threshold_moves_jaccard_but_abs50_is_fixed(nlp):
    egs = [_pair(nlp, [0.45, 0.9, 0.1, 0.1, 0.9, 0.45, 0.1, 0.1], [1, 1, 0, 0, 1, 1, 0, 0], 1)]
    at50 = score_paraphrase_spans(egs, name="x", highlight_threshold=0.5)
    at40 = score_paraphrase_spans(egs, name="x", highlight_threshold=0.4)
    assert at50["x_jaccard_first"] == pytest.approx(0.5)
    assert at40["x_jaccard_first"] == pytest.approx(1.0)
    assert at40["x_jaccard_first_abs50"] == pytest.approx(0.5)


def test_highlight_scale_turn_max_in_the_scorer(nlp):
    # a contested pair: every probability is low, but the gold words are the
    # highest of their turns
    egs = [_pair(nlp, [0.2, 0.12, 0.02, 0.02, 0.3, 0.2, 0.02, 0.02], [1, 1, 0, 0, 1, 1, 0, 0], 1)]
    absolute = score_paraphrase_spans(egs, name="x", highlight_threshold=0.5)
    relative = score_paraphrase_spans(egs, name="x", highlight_threshold=0.5, highlight_scale="turn_max")
    assert absolute["x_jaccard_first_n"] == 0  # nothing reaches 0.5: no Jaccard
    assert relative["x_jaccard_first"] == pytest.approx(1.0)
    assert relative["x_jaccard_second"] == pytest.approx(1.0)
    # the fixed absolute-0.5 variant and the pair decision do not depend on the scale
    assert relative["x_jaccard_first_abs50"] == absolute["x_jaccard_first_abs50"]
    assert relative["x_pair_acc"] == absolute["x_pair_acc"]


def test_no_pairs_with_highlights_gives_zero_and_count(nlp):
    egs = [_pair(nlp, [0.1] * 8, [0] * 8, 0)]
    s = score_paraphrase_spans(egs, name="x")
    assert s["x_jaccard_first"] == 0.0 and s["x_jaccard_first_n"] == 0
    assert s["x_pair_acc"] == 1.0


def test_paper_gold_rebuilt_from_votes(nlp):
    # 3 annotators, 2 paraphrase votes; counts: word0 by 1 (=half of 2 -> gold), word1 by 0
    eg = _pair(nlp, [0.1] * 8, [0] * 8, 0, votes=[2, 3], counts=[1, 0, 2, 0, 0, 0, 1, 0])
    pair, words = reference_gold(eg.reference, "paraphrase", "PARAPHRASE")
    assert pair is True
    assert words.tolist() == [True, False, True, False, False, False, True, False]
    eg = _pair(nlp, [0.1] * 8, [0] * 8, 0, votes=[1, 3], counts=[1, 0, 0, 0, 1, 0, 0, 0])
    pair, words = reference_gold(eg.reference, "paraphrase", "PARAPHRASE")
    assert pair is False and not words.any()


def test_missing_predictions_is_an_error(nlp):
    eg = _pair(nlp, [0.1] * 8, [0] * 8, 0)
    del eg.predicted.spans["paraphrase"]
    with pytest.raises(ValueError, match="run the paraphrase_spans component"):
        score_paraphrase_spans([eg])


def test_soft_metrics_hand_computed(nlp):
    # two pairs, 4 annotators each; token shares = counts / 4
    e1 = _pair(nlp, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [0] * 8, 1, votes=[2, 4], counts=[2, 0, 0, 0, 4, 0, 0, 0])
    e2 = _pair(nlp, [0.9] * 8, [0] * 8, 1, votes=[4, 4], counts=[4] * 8)
    s = score_paraphrase_spans([e1, e2], name="x")
    shares = numpy.array([0.5, 0, 0, 0, 1, 0, 0, 0] + [1.0] * 8)
    probs = numpy.array([0.5] * 8 + [0.9] * 8)
    assert s["x_soft_token_brier"] == pytest.approx(numpy.mean((probs - shares) ** 2), rel=1e-5)
    ce = -(shares * numpy.log(probs) + (1 - shares) * numpy.log(1 - probs))
    assert s["x_soft_token_ce"] == pytest.approx(ce.mean(), rel=1e-5)
    # pair scores 0.5 and 0.9 vs vote shares 0.5 and 1.0: perfectly correlated
    assert s["x_soft_pair_pearson"] == pytest.approx(1.0)
    assert s["x_soft_pair_brier"] == pytest.approx((0 + 0.01) / 2)
    # ECE: bins [0.5,0.6) holds 0.5 with gold 1 -> |0.5-1|; [0.9,1.0] holds 0.9 gold 1 -> 0.1
    assert s["x_pair_ece"] == pytest.approx(0.5 * 0.5 + 0.5 * 0.1)


def test_soft_metrics_absent_without_counts(nlp):
    s = score_paraphrase_spans([_pair(nlp, [0.1] * 8, [0] * 8, 0)], name="x")
    assert s["x_soft_token_ce"] is None and s["x_soft_pair_pearson"] is None
    assert s["x_pair_ece"] == pytest.approx(0.1)
