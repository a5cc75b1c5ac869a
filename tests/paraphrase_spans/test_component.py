import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

from spacy_paraphrase import PairDocError, make_pair_doc, token_probs
from spacy_paraphrase.pair_doc import runs_to_spans
from spacy_paraphrase.paraphrase_spans.model import TokenScores
from spacy_paraphrase.paraphrase_spans.readout import fill_unscored, highlight_flags
from tests.util import write_paraphrase_annotations

from tests.util import PAIRS, gold_tokens, make_examples, make_nlp

@pytest.mark.parametrize("inline", [False, True])
def test_overfit_then_save_and_load(tiny_bert, tmp_path, inline):
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=inline)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer = Adam(1e-3)
    losses = []
    for i in range(80):
        l = nlp.update(examples, sgd=optimizer, drop=0.0)
        losses.append(l["paraphrase_spans"])
    assert losses[-1] < losses[0] / 5
    docs = list(nlp.pipe([eg.predicted.copy() for eg in examples]))
    for eg, doc in zip(examples, docs):
        probs = token_probs(doc)
        assert ((probs >= 0.5) == gold_tokens(eg)).all()
        is_para = bool(eg.reference.spans["paraphrase"])
        assert (doc.cats["PARAPHRASE"] >= 0.5) == is_para
        got = [(s.start, s.end, s.label_) for s in doc.spans["paraphrase"]]
        first, second = eg.reference.spans["turns"]
        gold = gold_tokens(eg)
        want = runs_to_spans(doc, gold, first.start, first.end, "SOURCE")
        want += runs_to_spans(doc, gold, second.start, second.end, "PARAPHRASE")
        assert got == [(s.start, s.end, s.label_) for s in want]
        assert len(doc.spans["paraphrase"].attrs["scores"]) == len(got)
    scores = nlp.evaluate(examples)
    assert scores["paraphrase_spans_pair_acc"] == 1.0
    assert scores["paraphrase_spans_jaccard_first"] == 1.0
    assert scores["paraphrase_spans_jaccard_second"] == 1.0
    # save / load gives identical probabilities
    nlp.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    docs2 = list(nlp2.pipe([eg.predicted.copy() for eg in examples]))
    for d1, d2 in zip(docs, docs2):
        numpy.testing.assert_allclose(token_probs(d1), token_probs(d2), rtol=1e-5, atol=1e-6)
        assert d1.cats == d2.cats
    # and to_bytes / from_bytes
    nlp3 = spacy.util.load_model_from_config(nlp.config)
    nlp3.from_bytes(nlp.to_bytes())
    d3 = nlp3(examples[0].predicted.copy())
    numpy.testing.assert_allclose(token_probs(docs[0]), token_probs(d3), rtol=1e-5, atol=1e-6)


def test_doc_without_turns_is_a_clear_error(tiny_bert):
    nlp = make_nlp(tiny_bert)
    nlp.initialize(lambda: make_examples(nlp))
    with pytest.raises(PairDocError, match="make_pair_doc"):
        nlp("A plain text without turns.")


def test_long_pairs_are_windowed_and_fully_scored(tiny_bert):
    nlp = make_nlp(tiny_bert, inline=True)
    nlp.get_pipe("paraphrase_spans").model.get_ref("tok2vec").get_ref("transformer").attrs["max_length"] = 12
    nlp.initialize(lambda: make_examples(nlp))
    long_doc = make_pair_doc(nlp, " ".join(["word"] * 20), "short reply")
    short_doc = make_pair_doc(nlp, "a b", "c d")
    long_doc, short_doc = list(nlp.pipe([long_doc, short_doc]))
    attrs = long_doc.spans["paraphrase"].attrs
    assert attrs["n_windows"] > 1
    assert attrs["truncated"] is False and attrs["n_cut_tokens"] == 0
    assert not numpy.isnan(token_probs(long_doc)).any()
    assert short_doc.spans["paraphrase"].attrs["n_windows"] == 1


def test_paraphrase_in_the_last_window_is_learned(tiny_bert):
    """Windows are trained and predicted like whole pairs: a highlight at the
    end of a first turn that needs 3+ windows is found."""
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=True)
    trf = nlp.get_pipe("paraphrase_spans").model.get_ref("tok2vec").get_ref("transformer")
    trf.attrs["max_length"] = 16
    filler = ["the", "a", "of", "and", "to", "in", "is", "it", "that", "was"]
    examples = []
    for k, (key, reply) in enumerate([("victory", "you won"), ("defeat", "you lost"), ("rain", "it was wet"), ("snow", "so cold")]):
        words1 = [filler[(k + i) % len(filler)] for i in range(24)] + [key]
        words2 = reply.split()
        ref = make_pair_doc(nlp, words1, words2)
        ref.spans["paraphrase"] = [ref[len(words1) - 1 : len(words1)], ref[len(words1) :]]
        examples.append(Example(make_pair_doc(nlp, words1, words2), ref))
    nlp.initialize(lambda: examples)
    optimizer = Adam(1e-3)
    for _ in range(80):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    for eg in examples:
        doc = nlp(eg.predicted.copy())
        assert doc.spans["paraphrase"].attrs["n_windows"] >= 3
        probs = token_probs(doc)
        n1 = doc.spans["turns"][0].end
        assert probs[n1 - 1] >= 0.5  # the key word in the last window
        assert (probs[: n1 - 1] < 0.5).all()


def test_fill_unscored_rule(nlp):
    doc = make_pair_doc(nlp, ["a", "", "b", ""], ["", "c", "", "d"])
    probs = numpy.array([0.9, 0, 0.7, 0, 0, 0.8, 0, 0.3], dtype="float32")
    n_pieces = numpy.array([1, 0, 1, 0, 0, 1, 0, 1], dtype="int32")
    cut = numpy.zeros(8, dtype=bool)
    out = fill_unscored(doc, TokenScores(probs=numpy.where(n_pieces > 0, probs, numpy.nan), n_pieces=n_pieces, cut=cut))
    # inside a turn: min of neighbours; at a turn's edge: 0
    assert out.tolist() == pytest.approx([0.9, 0.7, 0.7, 0.0, 0.0, 0.8, 0.3, 0.3])
    cut[7] = True
    n_pieces[7] = 0
    out = fill_unscored(doc, TokenScores(probs=numpy.where(n_pieces > 0, probs, numpy.nan), n_pieces=n_pieces, cut=cut))
    assert numpy.isnan(out[7]) and out[6] == 0.0


def test_bare_add_pipe_default_model_documented():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("paraphrase_spans")
    cfg = nlp.config["components"]["paraphrase_spans"]
    assert cfg["model"]["tok2vec"]["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert pipe.cfg == {"spans_key": "paraphrase", "cats_key": "PARAPHRASE", "threshold": 0.5, "highlight_threshold": 0.5,
                        "highlight_scale": "absolute", "max_gap": 0, "min_span_length": 0, "max_spans": 0,
                        "trim_edges": False, "vote_share_map": None, "pair_loss_weight": 0.0,
                        "pair_score_rule": "spacy_paraphrase.min_turn_max.v1"}
    assert cfg["pair_score"] == {"@misc": "spacy_paraphrase.min_turn_max.v1"}


def test_highlight_scale_turn_max_is_relative_to_each_turn(nlp):
    doc = make_pair_doc(nlp, ["a", "b", "c"], ["d", "e"])
    # first turn max 0.4, second 0.8; NaN = cut token (never highlighted)
    probs = numpy.array([0.4, 0.25, numpy.nan, 0.8, 0.35], dtype="float32")
    assert highlight_flags(doc, probs, 0.5).tolist() == [False, False, False, True, False]
    # >= half of the turn's own maximum: 0.25 of 0.4 passes, 0.35 of 0.8 does not
    assert highlight_flags(doc, probs, 0.5, "turn_max").tolist() == [True, True, False, True, False]
    # a turn whose maximum is 0 gets nothing, even at threshold 0
    zero = numpy.array([0.0, 0.0, 0.0, 0.8, 0.4], dtype="float32")
    assert highlight_flags(doc, zero, 0.0, "turn_max").tolist() == [False, False, False, True, True]
    with pytest.raises(ValueError, match="highlight_scale"):
        highlight_flags(doc, probs, 0.5, "relative")


def test_highlight_scale_changes_spans_not_probabilities_or_pair_score(nlp):
    probs = numpy.array([0.4, 0.25, 0.05, 0.8, 0.35], dtype="float32")
    out = {}
    for scale in ("absolute", "turn_max"):
        doc = make_pair_doc(nlp, ["a", "b", "c"], ["d", "e"])
        write_paraphrase_annotations(doc, probs, spans_key="paraphrase", cats_key="PARAPHRASE",
                                     threshold=0.3, highlight_threshold=0.5, highlight_scale=scale)
        out[scale] = doc
    assert [(s.start, s.end, s.label_) for s in out["absolute"].spans["paraphrase"]] == [(3, 4, "PARAPHRASE")]
    assert [(s.start, s.end, s.label_) for s in out["turn_max"].spans["paraphrase"]] == [(0, 2, "SOURCE"), (3, 4, "PARAPHRASE")]
    for doc in out.values():
        assert doc.cats["PARAPHRASE"] == pytest.approx(0.4)
        assert numpy.allclose(token_probs(doc), probs)


def test_unknown_highlight_scale_is_an_error_at_creation():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="turn_max"):
        nlp.add_pipe("paraphrase_spans", config={"highlight_scale": "max"})


def test_cats_key_is_configurable(tiny_bert):
    nlp = make_nlp(tiny_bert, inline=True)
    nlp.get_pipe("paraphrase_spans").cfg["cats_key"] = "PARA_PAIR"
    nlp.initialize(lambda: make_examples(nlp))
    doc = nlp(make_pair_doc(nlp, "a b", "c d"))
    assert list(doc.cats) == ["PARA_PAIR"]


def test_saved_pipeline_loads_offline_without_the_backbone(tiny_bert, tmp_path):
    """The trained pipeline carries its weights and tokenizer: it loads and
    runs with the hub unreachable and the original model directory gone."""
    import shutil
    import subprocess
    import sys
    import textwrap

    backbone = tmp_path / "backbone"
    shutil.copytree(tiny_bert, backbone)
    nlp = make_nlp(str(backbone))
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=Adam(1e-3))
    nlp.to_disk(tmp_path / "model")
    expected = token_probs(nlp(examples[0].predicted.copy()))
    numpy.save(tmp_path / "expected.npy", expected)
    shutil.rmtree(backbone)
    code = textwrap.dedent(
        f"""
        import numpy, spacy
        from spacy_paraphrase import make_pair_doc, token_probs
        nlp = spacy.load({str(tmp_path / 'model')!r})
        doc = nlp(make_pair_doc(nlp, {PAIRS[0][0]!r}, {PAIRS[0][1]!r}))
        numpy.testing.assert_allclose(token_probs(doc), numpy.load({str(tmp_path / 'expected.npy')!r}), rtol=1e-5, atol=1e-6)
        print("OK")
        """
    )
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")
