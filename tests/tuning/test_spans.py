import numpy
import pytest
import spacy
from spacy.training import Example

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.tuning.search import DEFAULT_VALUES
from spacy_paraphrase.tuning.spans import annotate, cross_tuned_scores, sweep, tune
from tests.util import write_paraphrase_annotations

CFG = {"spans_key": "paraphrase", "cats_key": "PARAPHRASE", "threshold": 0.5, "highlight_threshold": 0.5}
NAME = "paraphrase_spans"


def _examples(n=12, noise=0.0, seed=0, spread=1.0):
    """Pairs whose scores separate gold paraphrases (pair score 0.7-0.9) from
    the others (0.3-0.6); gold words get 0.35, other words 0.2."""
    rng = numpy.random.default_rng(seed)
    nlp = spacy.blank("en")
    out = []
    for i in range(n):
        gold = i % 2 == 0
        ref = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f", "g"])
        pred = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f", "g"])
        ref.spans["paraphrase"] = [ref[1:3], ref[5:6]] if gold else []
        ref.cats["PARAPHRASE"] = float(gold)
        probs = numpy.full(len(pred), 0.2, dtype="float32")
        top = 0.7 + spread * 0.2 * rng.random() if gold else 0.3 + spread * 0.3 * rng.random()
        if gold:
            probs[[1, 2, 5]] = 0.35
        probs[0] = probs[4] = top
        probs += noise * rng.standard_normal(len(probs)).astype("float32")
        write_paraphrase_annotations(pred, numpy.clip(probs, 0, 1), **{k: CFG[k] for k in CFG})
        out.append(Example(pred, ref))
    return out


def test_sweep_scores_each_value_and_restores_annotations():
    examples = _examples()
    before = [list(eg.predicted.spans["paraphrase"]) for eg in examples]
    results = sweep(examples, CFG, NAME, "threshold", [0.0, 0.65, 1.01])
    assert [r["value"] for r in results] == [0.0, 0.65, 1.01]
    assert results[0][f"{NAME}_pair_r"] == 1.0 and results[0][f"{NAME}_pair_acc"] == 0.5
    assert results[1][f"{NAME}_pair_acc"] == 1.0
    assert results[2][f"{NAME}_pair_r"] == 0.0
    assert [list(eg.predicted.spans["paraphrase"]) for eg in examples] == before
    with pytest.raises(ValueError):
        sweep(examples, CFG, NAME, "nope", [0.5])


def test_tune_finds_both_thresholds():
    examples = _examples()
    best = tune(examples, CFG, NAME)
    para = [eg.predicted.cats["PARAPHRASE"] for eg in examples if eg.reference.cats["PARAPHRASE"]]
    other = [eg.predicted.cats["PARAPHRASE"] for eg in examples if not eg.reference.cats["PARAPHRASE"]]
    assert max(other) < best["threshold"] <= min(para)
    # gold words at 0.35, the others at 0.2 (words 0 and 4, not gold, carry
    # the pair score): 0.25-0.35 keep every gold word
    assert 0.2 < best["highlight_threshold"] <= 0.35
    annotate([eg.predicted for eg in examples], dict(CFG, **best))
    from spacy_paraphrase.tuning.spans import score_docs

    scores = score_docs(examples, dict(CFG, **best), NAME)
    assert scores[f"{NAME}_pair_acc"] == 1.0
    assert scores[f"{NAME}_jaccard_first"] < 1.0  # word 0 carries the pair score
    assert scores[f"{NAME}_jaccard_second"] < 1.0


def test_cross_tuning_is_honest():
    clean = cross_tuned_scores(_examples(spread=0.0), CFG, NAME, folds=3, repeats=2)
    assert clean["scores"][f"{NAME}_pair_acc"] == 1.0
    assert len(clean["chosen"]) == 6
    # noisy scores: in-sample tuning looks better than held-out tuning
    noisy = _examples(n=40, noise=0.25, seed=1)
    in_sample = tune(noisy, CFG, NAME)
    from spacy_paraphrase.tuning.spans import score_docs

    annotate([eg.predicted for eg in noisy], dict(CFG, **in_sample))
    optimistic = score_docs(noisy, dict(CFG, **in_sample), NAME)[f"{NAME}_pair_macro_f"]
    held_out = cross_tuned_scores(noisy, CFG, NAME, folds=4, repeats=3)["scores"][f"{NAME}_pair_macro_f"]
    assert held_out < optimistic
    with pytest.raises(ValueError):
        cross_tuned_scores(noisy, CFG, NAME, folds=1)
    # the Docs are left annotated with the given cfg
    probs = token_probs(noisy[0].predicted)
    assert noisy[0].predicted.cats["PARAPHRASE"] == pytest.approx(max(min(probs[:4].max(), probs[4:].max()), 0))


def _turn_calibrated_examples(n=16):
    """Gold words of the first turn at 0.35 (others 0.2); gold words of the
    second turn at 0.8 (others 0.6): each turn has its own best highlight
    threshold."""
    nlp = spacy.blank("en")
    out = []
    for i in range(n):
        ref = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f", "g"])
        pred = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f", "g"])
        ref.spans["paraphrase"] = [ref[1:3], ref[5:6]]
        ref.cats["PARAPHRASE"] = 1.0
        probs = numpy.array([0.2, 0.35, 0.35, 0.2, 0.6, 0.8, 0.6], dtype="float32")
        write_paraphrase_annotations(pred, probs, **CFG)
        out.append(Example(pred, ref))
    return out


def test_cross_tuning_follows_the_given_objectives():
    from spacy_paraphrase.tuning.search import score_key_objective

    examples = _turn_calibrated_examples()
    first = cross_tuned_scores(
        examples, CFG, NAME, folds=4, repeats=2,
        objectives={"highlight_threshold": score_key_objective(f"{NAME}_jaccard_first")},
    )
    second = cross_tuned_scores(
        examples, CFG, NAME, folds=4, repeats=2,
        objectives={"highlight_threshold": score_key_objective(f"{NAME}_jaccard_second")},
    )
    assert all(0.2 < c["highlight_threshold"] <= 0.35 for c in first["chosen"])
    assert all(0.6 < c["highlight_threshold"] <= 0.8 for c in second["chosen"])
    assert first["scores"][f"{NAME}_jaccard_first"] == 1.0
    assert second["scores"][f"{NAME}_jaccard_second"] == 1.0
    # the default (mean of the two Jaccards) cannot make both turns exact
    default = cross_tuned_scores(examples, CFG, NAME, folds=4, repeats=2)["scores"]
    assert default[f"{NAME}_jaccard_first"] + default[f"{NAME}_jaccard_second"] < 2.0
    with pytest.raises(ValueError, match="Unknown score"):
        cross_tuned_scores(
            examples, CFG, NAME, folds=4, repeats=1,
            objectives={"highlight_threshold": score_key_objective(f"{NAME}_jacard_first")},
        )


def test_sweep_and_tune_use_the_highlight_scale_of_cfg():
    """A clear pair (gold words 0.8, others 0.35) and a contested one (gold
    words 0.3, others 0.04): no absolute threshold highlights exactly the gold
    words of both, half of each turn's maximum does."""
    nlp = spacy.blank("en")
    examples = []
    for gold_p, other_p in ((0.8, 0.35), (0.3, 0.04)):
        ref = make_pair_doc(nlp, ["a", "b", "c"], ["d", "e", "f"])
        pred = make_pair_doc(nlp, ["a", "b", "c"], ["d", "e", "f"])
        ref.spans["paraphrase"] = [ref[0:1], ref[3:4]]
        ref.cats["PARAPHRASE"] = 1.0
        probs = numpy.array([gold_p, other_p, other_p, gold_p, other_p, other_p], dtype="float32")
        write_paraphrase_annotations(pred, probs, **CFG)
        examples.append(Example(pred, ref))

    def mean_jaccard(r):
        return (r[f"{NAME}_jaccard_first"] + r[f"{NAME}_jaccard_second"]) / 2

    cfg = dict(CFG, threshold=0.1)
    absolute = sweep(examples, cfg, NAME, "highlight_threshold", DEFAULT_VALUES)
    relative = sweep(examples, dict(cfg, highlight_scale="turn_max"), NAME, "highlight_threshold", DEFAULT_VALUES)
    # (the Jaccard skips turns with an empty highlight: compare where both pairs count)
    both = f"{NAME}_jaccard_first_n"
    assert max(mean_jaccard(r) for r in absolute if r[both] == 2) < 0.9
    assert max(mean_jaccard(r) for r in relative if r[both] == 2) == pytest.approx(1.0)
    best = tune(examples, dict(cfg, highlight_scale="turn_max"), NAME)
    assert 0.4375 < best["highlight_threshold"] <= 1.0  # 0.35 / 0.8 < t <= 1
    # annotate writes spans with the scale: only the gold words of both pairs
    annotate([eg.predicted for eg in examples], dict(cfg, highlight_scale="turn_max", **best))
    for eg in examples:
        assert [(s.start, s.end) for s in eg.predicted.spans["paraphrase"]] == [(0, 1), (3, 4)]


def test_a_readout_and_its_cfg_tune_the_same():
    from spacy_paraphrase.paraphrase_spans.readout import Readout

    examples = _examples(n=16, noise=0.1, seed=2)
    cfg = dict(CFG, highlight_scale="turn_max")
    readout = Readout.from_cfg(cfg)
    assert sweep(examples, readout, NAME, "highlight_threshold", [0.3, 0.6]) == sweep(
        examples, cfg, NAME, "highlight_threshold", [0.3, 0.6])
    assert tune(examples, readout, NAME) == tune(examples, cfg, NAME)
    # a sweep leaves the Docs annotated with the readout itself
    def state():
        return [([(s.start, s.end) for s in eg.predicted.spans["paraphrase"]], dict(eg.predicted.cats)) for eg in examples]

    annotate([eg.predicted for eg in examples], readout)
    before = state()
    sweep(examples, readout, NAME, "threshold", [0.1, 0.9])
    assert state() == before
    annotate([eg.predicted for eg in examples], CFG)  # the absolute scale highlights less
    assert state() != before
    with pytest.raises(ValueError, match="highlight_scale"):
        sweep(examples, dict(cfg, highlight_scale="max"), NAME, "threshold", [0.5])


def test_tuning_uses_the_given_scorer():
    """A scorer adding ``{name}_low`` (maximized by the lowest value) steers the
    tuning when chosen as the objective; the built-in scorer has no such key."""
    from spacy_paraphrase.paraphrase_spans.scorer import score_paraphrase_spans
    from spacy_paraphrase.tuning.search import score_key_objective

    def scorer(examples, **kwargs):
        scores = score_paraphrase_spans(examples, **kwargs)
        scores[f"{NAME}_low"] = -float(kwargs["threshold"]) - float(kwargs["highlight_threshold"])
        return scores

    examples = _examples()
    low = score_key_objective(f"{NAME}_low")
    results = sweep(examples, CFG, NAME, "highlight_threshold", [0.3, 0.7], scorer)
    assert [r[f"{NAME}_low"] for r in results] == pytest.approx([-0.8, -1.2])
    objectives = {"threshold": low, "highlight_threshold": low}
    lowest = {"threshold": DEFAULT_VALUES[0], "highlight_threshold": DEFAULT_VALUES[0]}
    assert tune(examples, CFG, NAME, objectives=objectives, scorer=scorer) == lowest
    crossed = cross_tuned_scores(examples, CFG, NAME, folds=2, repeats=1, objectives=objectives, scorer=scorer)
    assert crossed["chosen"] == [lowest, lowest]
    with pytest.raises(ValueError, match="Unknown score"):
        tune(examples, CFG, NAME, objectives=objectives)


def test_tune_decoding_drops_a_stray_span_and_cross_tuning_reports_the_shape():
    """Gold: one phrase per turn; the model adds a stray word far from it.
    The coordinate search keeps one span per turn, which the held-out folds
    then show as 1 span per highlighted turn and a higher Jaccard."""
    from spacy_paraphrase.tuning.spans import tune_decoding

    nlp = spacy.blank("en")
    examples = []
    for i in range(8):
        words = ["we", "won", "the", "cup", "and", "then", "left"]
        ref, pred = make_pair_doc(nlp, words, ["you", "won", "it"]), make_pair_doc(nlp, words, ["you", "won", "it"])
        ref.spans["paraphrase"] = [ref[1:4], ref[8:10]]
        ref.cats["PARAPHRASE"] = 1.0
        probs = numpy.full(len(pred), 0.1, dtype="float32")
        probs[[1, 2, 3, 8, 9]] = 0.8
        probs[6] = 0.8  # the stray word, as likely as the gold ones: no threshold removes it
        write_paraphrase_annotations(pred, probs, **{k: CFG[k] for k in CFG})
        examples.append(Example(pred, ref))
    plain = score_docs_of(examples, CFG)
    assert plain[f"{NAME}_spans_per_turn"] == 1.5 and plain[f"{NAME}_one_word_spans"] == pytest.approx(1 / 3)
    best = tune_decoding(examples, CFG, NAME, values=[0.5])
    assert best["max_spans"] == 1 and best["max_gap"] == 0
    crossed = cross_tuned_scores(examples, CFG, NAME, folds=2, repeats=1, decoding=True)
    assert crossed["scores"][f"{NAME}_spans_per_turn"] == 1.0
    assert crossed["scores"][f"{NAME}_jaccard_first"] == 1.0 > plain[f"{NAME}_jaccard_first"]
    # without the decoding search the estimate keeps the plain rule
    assert cross_tuned_scores(examples, CFG, NAME, folds=2, repeats=1)["scores"][f"{NAME}_spans_per_turn"] == 1.5


def score_docs_of(examples, cfg):
    from spacy_paraphrase.tuning.spans import score_docs

    return score_docs(examples, cfg, NAME)


def test_shaped_jaccard_ranks_outputs_outside_the_shape_limits_last():
    from spacy_paraphrase.tuning.spans import shaped_jaccard

    objective = shaped_jaccard(NAME, {"spans_per_turn": 1.6, "one_word_spans": 0.1})
    scores = {f"{NAME}_jaccard_first": 0.3, f"{NAME}_jaccard_second": 0.5}
    within = objective({**scores, f"{NAME}_spans_per_turn": 1.2, f"{NAME}_one_word_spans": 0.05})
    confetti = objective({**scores, f"{NAME}_jaccard_first": 0.9, f"{NAME}_spans_per_turn": 4.0,
                          f"{NAME}_one_word_spans": 0.4})
    nearer = objective({**scores, f"{NAME}_spans_per_turn": 2.0, f"{NAME}_one_word_spans": 0.1})
    assert within == pytest.approx(0.4)
    assert confetti < nearer < within
    # no spans at all (None) is within the limits
    assert objective({**scores, f"{NAME}_spans_per_turn": None, f"{NAME}_one_word_spans": None}) == pytest.approx(0.4)
