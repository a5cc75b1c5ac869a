import dataclasses

import numpy
import pytest

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.paraphrase_spans.readout import READOUT_KEYS, Readout
from spacy_paraphrase.paraphrase_spans.model import TokenScores
from spacy_paraphrase.paraphrase_spans.readout import fill_unscored
from tests.util import write_paraphrase_annotations

PROBS = numpy.array([0.4, 0.25, 0.05, 0.8, 0.35], dtype="float32")


def _annotations(doc, key="paraphrase", cats_key="PARAPHRASE"):
    """Everything the readout writes, comparable with ==."""
    group = doc.spans[key]
    attrs = {}
    for name, value in group.attrs.items():
        attrs[name] = numpy.asarray(value).tobytes() if name == "token_probs" else value
    return [(s.start, s.end, s.label_) for s in group], attrs, dict(doc.cats)


def _doc(nlp):
    return make_pair_doc(nlp, ["a", "b", "c"], ["d", "e"])


def test_defaults_are_the_component_defaults():
    r = Readout()
    assert r.to_cfg() == {"threshold": 0.5, "highlight_threshold": 0.5, "highlight_scale": "absolute",
                          "spans_key": "paraphrase", "cats_key": "PARAPHRASE", "max_gap": 0,
                          "min_span_length": 0, "max_spans": 0, "trim_edges": False, "vote_share_map": None,
                          "pair_score_rule": "spacy_paraphrase.min_turn_max.v1"}
    assert READOUT_KEYS == ("threshold", "highlight_threshold", "highlight_scale", "spans_key", "cats_key",
                            "max_gap", "min_span_length", "max_spans", "trim_edges", "vote_share_map",
                            "pair_score_rule")


def test_from_cfg_to_cfg_round_trip():
    cfg = {"spans_key": "sp", "cats_key": "C", "threshold": 0.3, "highlight_threshold": 0.25,
           "highlight_scale": "turn_max", "pair_loss_weight": 0.3}
    r = Readout.from_cfg(cfg)
    assert r == Readout(0.3, 0.25, "turn_max", "sp", "C")
    # pair_loss_weight is not a readout setting: left out; missing decoding keys take the defaults
    assert r.to_cfg() == {**{k: v for k, v in cfg.items() if k != "pair_loss_weight"}, "max_gap": 0,
                          "min_span_length": 0, "max_spans": 0, "trim_edges": False, "vote_share_map": None,
                          "pair_score_rule": "spacy_paraphrase.min_turn_max.v1"}
    assert Readout.from_cfg(r.to_cfg()) == r
    # a cfg saved before highlight_scale existed reads as the absolute scale
    old = {k: v for k, v in cfg.items() if k != "highlight_scale"}
    assert Readout.from_cfg(old).highlight_scale == "absolute"


def test_replace_is_validated_and_leaves_the_original():
    r = Readout()
    r2 = r.replace(threshold=0.7, highlight_scale="turn_max")
    assert (r2.threshold, r2.highlight_scale) == (0.7, "turn_max")
    assert (r.threshold, r.highlight_scale) == (0.5, "absolute")
    with pytest.raises(ValueError, match="highlight_scale 'relative'.*turn_max"):
        r.replace(highlight_scale="relative")
    with pytest.raises(ValueError, match="Unknown readout setting.*thresold"):
        r.replace(thresold=0.3)
    with pytest.raises(ValueError, match="threshold must be a number"):
        r.replace(threshold="0.5")
    with pytest.raises(ValueError, match="spans_key"):
        r.replace(spans_key="")
    with pytest.raises(ValueError, match="highlight_scale"):
        Readout.from_cfg({"highlight_scale": "max"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.threshold = 0.1


def test_pair_score_and_highlights(nlp):
    doc = _doc(nlp)
    r = Readout(threshold=0.3)
    assert r.pair_score(doc, PROBS) == pytest.approx(0.4)
    score = r.pair_score(doc, PROBS)
    assert r.is_paraphrase(score) and not r.replace(threshold=0.41).is_paraphrase(score)
    assert r.margin(score) == pytest.approx(0.1) and not r.is_paraphrase(float("nan"))
    assert r.span_flags(doc, PROBS).tolist() == [False, False, False, True, False]
    turn_max = r.replace(highlight_scale="turn_max")
    assert turn_max.span_flags(doc, PROBS).tolist() == [True, True, False, True, False]
    assert [(s.start, s.end, s.label_) for s in turn_max.highlight_spans(doc, PROBS)] == [
        (0, 2, "SOURCE"), (3, 4, "PARAPHRASE")]


def test_annotate_writes_the_contract(nlp):
    doc = _doc(nlp)
    Readout(threshold=0.3, highlight_scale="turn_max", spans_key="k", cats_key="C").annotate(doc, PROBS, n_windows=2)
    group = doc.spans["k"]
    assert [(s.start, s.end, s.label_) for s in group] == [(0, 2, "SOURCE"), (3, 4, "PARAPHRASE")]
    assert group.attrs["scores"] == pytest.approx([0.325, 0.8])
    assert doc.cats == {"C": pytest.approx(0.4)}
    # without a vote-share map the share is the pair score; agreement s^2 + (1-s)^2; margin to the threshold
    assert group.attrs["pair_score"] == group.attrs["vote_share"] == doc.cats["C"]
    assert group.attrs["agreement"] == pytest.approx(0.4 ** 2 + 0.6 ** 2)
    assert group.attrs["margin"] == pytest.approx(0.1)
    assert (group.attrs["truncated"], group.attrs["n_cut_tokens"], group.attrs["n_windows"]) == (False, 0, 2)
    assert token_probs(doc, "k").tobytes() == PROBS.tobytes()
    # a pair below the threshold: no spans, but the probabilities and the score
    low = _doc(nlp)
    Readout(threshold=0.5).annotate(low, PROBS)
    assert list(low.spans["paraphrase"]) == [] and low.cats["PARAPHRASE"] == pytest.approx(0.4)
    assert token_probs(low).tobytes() == PROBS.tobytes()


def test_annotate_equals_the_function_form(nlp):
    for scale in ("absolute", "turn_max"):
        a, b = _doc(nlp), _doc(nlp)
        write_paraphrase_annotations(a, PROBS, spans_key="paraphrase", cats_key="PARAPHRASE", threshold=0.3,
                                     highlight_threshold=0.5, highlight_scale=scale, n_cut=1, n_windows=3)
        Readout(threshold=0.3, highlight_scale=scale).annotate(b, PROBS, n_cut=1, n_windows=3)
        assert _annotations(a) == _annotations(b)


def test_annotate_token_scores_applies_fill_unscored(nlp):
    doc = make_pair_doc(nlp, ["a", "", "b", ""], ["", "c", "", "d"])
    probs = numpy.array([0.9, 0, 0.7, 0, 0, 0.8, 0, 0.3], dtype="float32")
    n_pieces = numpy.array([1, 0, 1, 0, 0, 1, 0, 0], dtype="int32")
    cut = numpy.zeros(8, dtype=bool)
    cut[7] = True
    scores = TokenScores(probs=numpy.where(n_pieces > 0, probs, numpy.nan), n_pieces=n_pieces, cut=cut, n_windows=2)
    readout = Readout(threshold=0.3, highlight_threshold=0.6)
    readout.annotate(doc, scores)
    filled = fill_unscored(doc, scores)
    assert numpy.array_equal(token_probs(doc), filled, equal_nan=True)
    other = make_pair_doc(nlp, ["a", "", "b", ""], ["", "c", "", "d"])
    readout.annotate(other, filled, n_cut=1, n_windows=2)
    assert _annotations(doc) == _annotations(other)
    assert doc.spans["paraphrase"].attrs["truncated"] is True
    # the filled whitespace token continues the run 0..3 but does not extend it past "b"
    assert [(s.start, s.end) for s in doc.spans["paraphrase"]] == [(0, 3), (5, 6)]


def test_reannotate_rewrites_from_the_stored_probabilities(nlp):
    doc, fresh = _doc(nlp), _doc(nlp)
    Readout(threshold=0.9).annotate(doc, PROBS, n_cut=2, n_windows=3)
    assert list(doc.spans["paraphrase"]) == []
    lower = Readout(threshold=0.3, highlight_threshold=0.3)
    lower.reannotate(doc)
    lower.annotate(fresh, PROBS, n_cut=2, n_windows=3)
    assert _annotations(doc) == _annotations(fresh)
    with pytest.raises(ValueError, match="run the paraphrase_spans component"):
        lower.replace(spans_key="other").reannotate(doc)


def test_a_pair_score_passed_explicitly_is_kept_by_every_reannotation(nlp):
    """A producer with its own pair score (the LLM's vote share) passes it to
    annotate; a plain Readout's reannotate keeps it (no side channel on the
    Doc); NaN means no score: nothing passes."""
    doc = _doc(nlp)
    Readout(threshold=0.9).annotate(doc, PROBS, pair_score=0.95)
    assert doc.cats["PARAPHRASE"] == pytest.approx(0.95) and len(doc.spans["paraphrase"]) > 0
    Readout(threshold=0.5).reannotate(doc)
    assert doc.cats["PARAPHRASE"] == pytest.approx(0.95)  # not min-max of PROBS (0.35)
    assert doc.spans["paraphrase"].attrs["margin"] == pytest.approx(0.45)
    assert not any(key.startswith("spacy_paraphrase.pair_score") for key in doc.user_data)
    Readout(threshold=0.1).annotate(doc, PROBS, pair_score=float("nan"))
    Readout(threshold=0.0).reannotate(doc)
    assert numpy.isnan(doc.cats["PARAPHRASE"]) and list(doc.spans["paraphrase"]) == []


def test_component_annotations_equal_its_readout(trained_pipeline):
    nlp, examples = trained_pipeline
    pipe = nlp.get_pipe("paraphrase_spans")
    saved = dict(pipe.cfg)
    try:
        # a cfg changed after creation (as tune does) is honoured
        pipe.cfg.update(threshold=0.0, highlight_threshold=0.6, highlight_scale="turn_max")
        readout = pipe.readout
        assert readout == Readout(threshold=0.0, highlight_threshold=0.6, highlight_scale="turn_max")
        for eg in examples:
            doc = nlp(eg.predicted.copy())
            assert len(doc.spans["paraphrase"]) > 0  # threshold 0: every pair passes
            from_scores = nlp.get_pipe("transformer")(eg.predicted.copy())
            scores = pipe.predict([from_scores])[0]
            readout.annotate(from_scores, scores)
            from_probs = eg.predicted.copy()
            readout.annotate(from_probs, token_probs(doc), n_windows=scores.n_windows)
            assert _annotations(doc) == _annotations(from_scores) == _annotations(from_probs)
    finally:
        pipe.cfg.clear()
        pipe.cfg.update(saved)
