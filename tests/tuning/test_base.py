"""The tuning interface (spacy_paraphrase/tuning/base.py): both components
implement it, the commands find a component through it, and what it cannot
do is a TuningError with a message."""
import numpy
import pytest
import spacy
from spacy.training import Example

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.cli._util import process
from spacy_paraphrase.tuning import classifier as classifier_tuning
from spacy_paraphrase.tuning import spans as span_tuning
from spacy_paraphrase.tuning.base import Found, Tuning, TuningError
from spacy_paraphrase.tuning.choice import tunable_names, tuning_for

POS, NEG = "IS_PARAPHRASE", "NOT_PARAPHRASE"


def _classifier_nlp(tiny_bert):
    nlp = spacy.blank("en")
    nlp.add_pipe("pair_classifier", config={
        "labels": [POS, NEG], "positive_label": POS, "model": {"tok2vec": {"name": tiny_bert}}})
    return nlp


def _scored_pairs(n=12):
    """Processed pairs: gold paraphrases get p(positive) 0.85-0.95, the others 0.55-0.8."""
    rng = numpy.random.default_rng(0)
    nlp, out = spacy.blank("en"), []
    for i in range(n):
        gold = i % 2 == 0
        ref, pred = make_pair_doc(nlp, "a b c", "d e"), make_pair_doc(nlp, "a b c", "d e")
        ref.cats = {POS: float(gold), NEG: float(not gold)}
        p = (0.85 + 0.1 * rng.random()) if gold else (0.55 + 0.25 * rng.random())
        pred.cats = {POS: p, NEG: 1.0 - p}
        out.append(Example(pred, ref))
    return out


def test_a_pair_classifier_tunes_its_threshold_through_the_interface(tiny_bert):
    nlp = _classifier_nlp(tiny_bert)
    tuning = tuning_for(nlp)
    assert isinstance(tuning, Tuning) and tuning.kind == "pair_classifier" and tuning.keys == ("threshold",)
    examples = _scored_pairs()
    values = [0.5, 0.7, 0.9]
    found = tuning.find(examples, "threshold", values)
    assert isinstance(found, Found)
    cfg = dict(nlp.get_pipe("pair_classifier").cfg)
    assert found.settings == classifier_tuning.tune(examples, cfg, "pair_classifier", values)
    assert found.report["objective"] == "pair_classifier_macro_f"
    assert found.summary.startswith("Best threshold = ")
    estimate = tuning.cross_tune(examples, folds=2, repeats=1, seed=0)
    assert estimate["objectives"] == {"threshold": "pair_classifier_macro_f"}
    assert [row[0] for row in tuning.score_rows(estimate)] == ["acc", "macro_f", "pos_p", "pos_r", "pos_f"]
    for options, message in (({"key": "highlight_threshold"}, "one threshold to tune"),
                             ({"highlight_scale": "turn_max"}, "no highlights: --highlight-scale is"),
                             ({"highlight_scores_key": "x", "highlight_scale": "turn_max"}, "are for")):
        with pytest.raises(TuningError, match=message):
            tuning.check(**options)
    with pytest.raises(TuningError, match="Unknown score"):
        tuning.find(examples, "threshold", values, scores_key="pair_classifier_nope")


def test_a_paraphrase_spans_tunes_every_key_through_the_interface(trained_pipeline):
    nlp, examples = trained_pipeline
    tuning = tuning_for(nlp)
    assert tuning.kind == "paraphrase_spans" and tuning.name == "paraphrase_spans"
    assert tuning.keys == ("threshold", "highlight_threshold", "decoding", "vote_share")
    processed = process(nlp, examples, 8)
    pipe = nlp.get_pipe("paraphrase_spans")
    for key in ("threshold", "highlight_threshold"):
        found = tuning.find(processed, key, [0.2, 0.5, 0.8])
        sweep = span_tuning.sweep(processed, dict(pipe.cfg), "paraphrase_spans", key, [0.2, 0.5, 0.8])
        objective = span_tuning.default_objective("paraphrase_spans", key)[1]
        assert found.settings == {key: max(sweep, key=objective)["value"]}
    found = tuning.find(processed, "decoding", [0.5])
    assert set(found.settings) == {"highlight_threshold", "max_spans", "max_gap", "min_span_length", "trim_edges"}
    assert [header for header, _ in found.tables] == [("setting", "value"), ("score", "before", "after")]
    assert pipe.cfg["threshold"] == 0.5  # finding changes nothing until saved
    with pytest.raises(TuningError, match="--n-quantiles is for a pair_classifier"):
        tuning.check(n_quantiles=3)
    with pytest.raises(TuningError, match="--key must be one of"):
        tuning.check("highlight_scale")


def test_tuning_for_prefers_paraphrase_spans_and_says_why_it_finds_none(trained_pipeline, tiny_bert):
    nlp, _ = trained_pipeline
    classifier = _classifier_nlp(tiny_bert)
    assert tunable_names(classifier) == ["pair_classifier"]
    nlp.add_pipe("sentencizer", first=True)
    try:
        assert tuning_for(nlp).name == "paraphrase_spans"
        with pytest.raises(TuningError, match="is neither a paraphrase_spans nor a pair_classifier"):
            tuning_for(nlp, "sentencizer")
        with pytest.raises(TuningError, match="No component 'nope'"):
            tuning_for(nlp, "nope")
    finally:
        nlp.remove_pipe("sentencizer")
    with pytest.raises(TuningError, match="No paraphrase_spans or pair_classifier component"):
        tuning_for(spacy.blank("en"))
