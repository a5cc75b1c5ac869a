"""The pair score is one registered, versioned rule (paraphrase_spans/pair_score.py),
named in the component's config and kept by a saved pipeline, read by the
readout's decision, the pair loss's weights and the vote-share features."""
import json
import warnings

import numpy
import pytest
import spacy
import srsly
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam, Config, fix_random_seed

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.paraphrase_spans.component import pair_score_and_token_weights
from spacy_paraphrase.paraphrase_spans.model import TokenScores
from spacy_paraphrase.paraphrase_spans.pair_score import (
    LEGACY_RULE, MIN_TURN_MAX, MIN_TURN_TOP3_MEAN, get_rule, turn_maxima,
)
from spacy_paraphrase.paraphrase_spans.readout import Readout
from spacy_paraphrase.paraphrase_spans.vote_share import StaleVoteShareMap, pair_features
from tests.util import make_examples

TOP3 = "spacy_paraphrase.min_turn_top3_mean.v1"


def _top3_mean_rule(doc, probs):
    """The top-3 mean rule written out: min over the turns of the mean of the
    turn's three highest probabilities."""
    means = []
    for turn in doc.spans["turns"]:
        p = numpy.asarray(probs[turn.start : turn.end], dtype="float64")
        p = numpy.sort(p[~numpy.isnan(p)])[::-1][:3]
        means.append(float(p.mean()) if len(p) else 0.0)
    return min(means)


def test_every_reader_of_the_pair_score_reads_the_one_rule():
    nlp = spacy.blank("en")
    doc = make_pair_doc(nlp, ["a", "b", "c"], ["d", "e"])
    probs = numpy.array([0.2, numpy.nan, 0.7, 0.4, 0.3], dtype="float32")
    assert turn_maxima(doc, probs) == [(numpy.float32(0.7), 2), (numpy.float32(0.4), 3)]
    assert Readout().pair_score(doc, probs) == MIN_TURN_MAX(doc, probs) == numpy.float32(0.4)
    assert pair_features(doc, probs)["pair_score"] == numpy.float32(0.4)
    top3 = Readout(pair_score_rule=TOP3)
    assert top3.pair_score(doc, probs) == pytest.approx(0.35) == _top3_mean_rule(doc, probs)
    assert pair_features(doc, probs, TOP3)["pair_score"] == top3.pair_score(doc, probs)
    nothing = numpy.array([0.2, 0.1, 0.7, numpy.nan, numpy.nan], dtype="float32")
    for rule in (MIN_TURN_MAX, MIN_TURN_TOP3_MEAN):
        score, weights = rule.score_and_weights(doc, nothing)
        assert score == 0.0 and not weights.any()
    # the names are registered (the entry points name them too) and versioned
    assert registry.misc.get("spacy_paraphrase.min_turn_max.v1")() is MIN_TURN_MAX
    assert registry.misc.get(TOP3)() is MIN_TURN_TOP3_MEAN
    assert get_rule("min_turn_max.v1") is MIN_TURN_MAX  # the name maps recorded before
    with pytest.raises(ValueError, match="Unknown pair-score rule"):
        Readout(pair_score_rule="spacy_paraphrase.min_turn_median.v1")


@pytest.mark.parametrize("rule", [MIN_TURN_MAX, MIN_TURN_TOP3_MEAN], ids=lambda r: r.name)
def test_the_weights_are_the_rules_derivative(rule):
    """score_and_weights gives d score / d p per token: they match finite
    differences, sit in the turn that sets the min, and sum as the rule's
    derivative says (1: a max is one token, a top-k mean 1/k on each of k)."""
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    for n1, n2 in [(6, 5), (2, 7), (5, 1)]:
        doc = make_pair_doc(nlp, ["w"] * n1, ["v"] * n2)
        probs = rng.uniform(0.05, 0.95, n1 + n2)
        probs[1] = numpy.nan  # a token without probability: no weight
        score, weights = rule.score_and_weights(doc, probs)
        assert weights[1] == 0.0
        h = 1e-6
        for j in range(len(doc)):
            if numpy.isnan(probs[j]):
                continue
            up, down = probs.copy(), probs.copy()
            up[j] += h
            down[j] -= h
            assert (rule(doc, up) - rule(doc, down)) / (2 * h) == pytest.approx(weights[j], abs=1e-6)
        assert weights.sum() == pytest.approx(1.0)
        nonzero = weights[weights > 0]
        turn = next(t for t in doc.spans["turns"] if weights[t.start : t.end].any())
        scored = int((~numpy.isnan(probs[turn.start : turn.end])).sum())
        k = 1 if rule is MIN_TURN_MAX else min(3, scored)
        assert len(nonzero) == k and numpy.allclose(nonzero, 1.0 / k)
        assert score == pytest.approx(float(probs[weights > 0].mean()))


def test_the_loss_weights_follow_the_filled_probabilities_to_the_model_tokens():
    """Training scores what the readout stores (the filled probabilities): a
    token without wordpieces that carries its neighbour's probability passes
    its weight to that neighbour."""
    nlp = spacy.blank("en")
    doc = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f"])
    probs = numpy.array([0.9, numpy.nan, 0.8, 0.1, 0.6, 0.3], dtype="float32")
    n_pieces = numpy.array([1, 0, 1, 1, 1, 1], dtype="int32")
    scores = TokenScores(probs=probs, n_pieces=n_pieces, cut=numpy.zeros(6, dtype=bool))
    # filled: b = min(0.9, 0.8) = 0.8; first turn's top 3: 0.9, 0.8, 0.8 (b)
    score, weights = pair_score_and_token_weights(doc, scores, TOP3)
    assert score == pytest.approx(min((0.9 + 0.8 + 0.8) / 3, (0.6 + 0.3) / 2))
    assert numpy.allclose(weights, [0, 0, 0, 0, 0.5, 0.5])  # the second turn sets the min
    doc2 = make_pair_doc(nlp, ["a", "b", "c", "d"], ["e", "f", "g"])
    scores2 = TokenScores(probs=numpy.array([0.9, numpy.nan, 0.8, 0.1, 0.95, 0.9, 0.9], dtype="float32"),
                          n_pieces=numpy.array([1, 0, 1, 1, 1, 1, 1], dtype="int32"), cut=numpy.zeros(7, dtype=bool))
    score, weights = pair_score_and_token_weights(doc2, scores2, TOP3)
    assert score == pytest.approx((0.9 + 0.8 + 0.8) / 3)
    assert numpy.allclose(weights, [1 / 3, 0, 2 / 3, 0, 0, 0, 0])  # b's weight went to c
    readout = Readout(pair_score_rule=TOP3)
    readout.annotate(doc2, scores2)
    assert doc2.cats["PARAPHRASE"] == pytest.approx(score) == _top3_mean_rule(doc2, token_probs(doc2))


@pytest.mark.parametrize("rule", ["spacy_paraphrase.min_turn_max.v1", TOP3])
def test_the_pair_loss_gradient_is_the_losss_derivative(rule):
    """get_loss's gradient (per token logit) matches finite differences of its
    loss, the pair loss under the configured rule included."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("paraphrase_spans", config={"pair_score": {"@misc": rule}, "pair_loss_weight": 2.0})
    rng = numpy.random.default_rng(1)
    examples, logits = [], []
    for w1, w2, cat in [(["a", "b", "c", "d"], ["e", "f", "g"], 1.0), (["h", "i"], ["j", "k", "l", "m"], 0.3)]:
        ref = make_pair_doc(nlp, w1, w2)
        ref.spans["paraphrase"] = [ref[0:1], ref[len(w1) : len(w1) + 1]]
        ref.cats["PARAPHRASE"] = cat
        examples.append(Example(make_pair_doc(nlp, w1, w2), ref))
        logits.append(rng.normal(0, 1.5, len(w1) + len(w2)))
    n_pieces = [numpy.array([1, 0, 1, 1, 1, 1, 1], dtype="int32"), numpy.ones(6, dtype="int32")]

    def loss_and_grad(zs):
        scores = [TokenScores(probs=(1 / (1 + numpy.exp(-z))).astype("float32"), n_pieces=n,
                              cut=numpy.zeros(len(z), dtype=bool)) for z, n in zip(zs, n_pieces)]
        return pipe.get_loss(examples, scores)

    _, grads = loss_and_grad(logits)
    h = 1e-3
    for i, z in enumerate(logits):
        for j in range(len(z)):
            if n_pieces[i][j] == 0:
                assert grads[i][j] == 0.0
                continue
            up = [x.copy() for x in logits]
            down = [x.copy() for x in logits]
            up[i][j] += h
            down[i][j] -= h
            numeric = (loss_and_grad(up)[0] - loss_and_grad(down)[0]) / (2 * h)
            assert float(grads[i][j]) == pytest.approx(numeric, abs=2e-3)


TOP3_CONFIG = """
[nlp]
lang = "en"
pipeline = ["paraphrase_spans"]

[components]

[components.paraphrase_spans]
factory = "paraphrase_spans"
pair_loss_weight = 1.0

[components.paraphrase_spans.pair_score]
@misc = "spacy_paraphrase.min_turn_top3_mean.v1"

[components.paraphrase_spans.model]
@architectures = "spacy_paraphrase.ParaphraseTagger.v1"
dropout = 0.0

[components.paraphrase_spans.model.tok2vec]
@architectures = "spacy_paraphrase.PairTransformer.v1"
name = "{name}"
"""


def test_a_top3_mean_rule_in_the_config_trains_and_is_saved_with_the_pipeline(tiny_bert, tmp_path):
    fix_random_seed(0)
    config = Config().from_str(TOP3_CONFIG.replace("{name}", tiny_bert))
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.get_pipe("paraphrase_spans").cfg["pair_score_rule"] == TOP3
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(1e-3)
    losses = [nlp.update(examples, sgd=optimizer, drop=0.0)["paraphrase_spans"] for _ in range(2)]
    after = nlp.get_pipe("paraphrase_spans").get_loss(
        examples, nlp.get_pipe("paraphrase_spans").model.predict([eg.predicted for eg in examples]))[0]
    assert after < losses[0]
    nlp.to_disk(tmp_path / "model")
    saved = Config().from_disk(tmp_path / "model" / "config.cfg")
    assert saved["components"]["paraphrase_spans"]["pair_score"] == {"@misc": TOP3}
    assert json.loads((tmp_path / "model" / "paraphrase_spans" / "cfg").read_text())["pair_score_rule"] == TOP3
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("paraphrase_spans").cfg["pair_score_rule"] == TOP3
    for eg in examples:
        doc = loaded(eg.predicted.copy())
        assert doc.cats["PARAPHRASE"] == pytest.approx(_top3_mean_rule(doc, token_probs(doc)), abs=1e-6)
        assert doc.cats["PARAPHRASE"] != pytest.approx(MIN_TURN_MAX(doc, token_probs(doc)), abs=1e-6)


def _as_saved_before_rules_were_named(model_dir, old_setting=None):
    """Rewrite a saved pipeline as one saved before this change: no
    ``pair_score`` in its config.cfg (or the old string name) and no
    ``pair_score_rule`` in its component cfg; its vote-share map recorded the
    rule by its old name."""
    config = Config().from_disk(model_dir / "config.cfg", interpolate=False)
    del config["components"]["paraphrase_spans"]["pair_score"]
    if old_setting is not None:
        config["components"]["paraphrase_spans"]["pair_score"] = old_setting
    config.to_disk(model_dir / "config.cfg")
    cfg_file = model_dir / "paraphrase_spans" / "cfg"
    cfg = json.loads(cfg_file.read_text())
    del cfg["pair_score_rule"]
    cfg["vote_share_map"] = {"features": ["pair_score"], "coef": [1.0], "intercept": 0.0,
                             "pair_score_rule": "min_turn_max.v1"}
    cfg_file.write_text(json.dumps(cfg))


@pytest.mark.parametrize("old_setting", [None, "min_turn_max.v1"])
def test_a_pipeline_saved_before_the_rule_was_named_keeps_its_rule(trained_pipeline, tmp_path, monkeypatch, old_setting):
    nlp, examples = trained_pipeline
    nlp.to_disk(tmp_path / "model")
    _as_saved_before_rules_were_named(tmp_path / "model", old_setting)
    pipe = nlp.get_pipe("paraphrase_spans")
    old_map = json.loads((tmp_path / "model" / "paraphrase_spans" / "cfg").read_text())["vote_share_map"]
    monkeypatch.setitem(pipe.cfg, "vote_share_map", old_map)
    expected = [nlp(eg.predicted.copy()) for eg in examples]
    # the factory's default rule is another one now: the old pipeline keeps its own
    meta = spacy.Language.get_factory_meta("paraphrase_spans")
    monkeypatch.setitem(meta.default_config, "pair_score", {"@misc": TOP3})
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleVoteShareMap)  # its map's old rule name is the same rule
        loaded = spacy.load(tmp_path / "model")
        got = [loaded(eg.predicted.copy()) for eg in examples]
    assert loaded.get_pipe("paraphrase_spans").cfg["pair_score_rule"] == LEGACY_RULE
    assert any(MIN_TURN_MAX(d, token_probs(d)) != pytest.approx(_top3_mean_rule(d, token_probs(d))) for d in got)
    for before, after in zip(expected, got):
        numpy.testing.assert_allclose(token_probs(before), token_probs(after), rtol=1e-5, atol=1e-6)
        assert after.cats["PARAPHRASE"] == pytest.approx(before.cats["PARAPHRASE"], abs=1e-6)
        assert after.cats["PARAPHRASE"] == pytest.approx(MIN_TURN_MAX(after, token_probs(after)), abs=1e-6)
        assert after.spans["paraphrase"].attrs["vote_share"] == pytest.approx(
            before.spans["paraphrase"].attrs["vote_share"], abs=1e-6)
    # and from bytes (the cfg only): a component whose config names another rule takes the saved
    # cfg's rule, or the legacy one when the saved cfg has none
    data = srsly.msgpack_loads(loaded.get_pipe("paraphrase_spans").to_bytes())
    cfg = srsly.json_loads(data["cfg"])
    fresh = spacy.blank("en").add_pipe("paraphrase_spans", config={"pair_score": {"@misc": TOP3}})
    fresh.from_bytes(srsly.msgpack_dumps(data), exclude=["model"])
    assert fresh.cfg["pair_score_rule"] == LEGACY_RULE == cfg.pop("pair_score_rule")
    fresh = spacy.blank("en").add_pipe("paraphrase_spans", config={"pair_score": {"@misc": TOP3}})
    fresh.from_bytes(srsly.msgpack_dumps(dict(data, cfg=srsly.json_dumps(cfg))), exclude=["model"])
    assert fresh.cfg["pair_score_rule"] == LEGACY_RULE
