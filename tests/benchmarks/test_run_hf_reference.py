"""benchmarks.run_hf_reference: scoring the reference's predictions."""
import numpy
import pytest

from benchmarks import run_hf_reference


def test_hf_reference_final_scores_under_both_highlight_rules(nlp):
    """The reference's scoring of one set of dev predictions (no training):
    the turn_max rule changes only the highlights, never the pair decisions."""
    from spacy_paraphrase import make_pair_doc

    rng = numpy.random.default_rng(0)
    refs, probs = [], []
    for i in range(8):
        ref = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f", "g"])
        ref.spans["paraphrase"] = [ref[1:3], ref[5:6]] if i % 2 == 0 else []
        ref.cats["PARAPHRASE"] = float(i % 2 == 0)
        refs.append(ref)
        scale = 0.9 if i % 4 == 0 else 0.3  # clear and contested pairs
        p = (0.05 + 0.08 * rng.random(len(ref))).astype("float32")
        if i % 2 == 0:
            p[[1, 2, 5]] = scale
        probs.append(p)
    cfg = {"spans_key": "paraphrase", "cats_key": "PARAPHRASE", "threshold": 0.5, "highlight_threshold": 0.5}
    absolute = run_hf_reference.final_scores(refs, probs, nlp, cfg)
    relative = run_hf_reference.final_scores(refs, probs, nlp, dict(cfg, highlight_scale="turn_max"))
    for part in (absolute, relative):
        assert set(part) == {"default", "tuned_on_dev", "tuned_thresholds", "cross_tuned", "cross_tuned_spread"}
    acc = "paraphrase_spans_pair_acc"
    assert relative["default"][acc] == absolute["default"][acc]
    # at 0.5 the contested pairs' gold words (0.3) are missed by the absolute
    # rule and found by turn_max (0.3 / 0.3 >= 0.5)
    assert absolute["default"]["paraphrase_spans_jaccard_first_n"] == 2
    assert relative["default"]["paraphrase_spans_jaccard_first"] == pytest.approx(1.0)
    assert relative["default"]["paraphrase_spans_jaccard_first_n"] == 4
