import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam, Model, fix_random_seed
from thinc.types import Ragged
from spacy_transformers.data_classes import TransformerData
from transformers.file_utils import ModelOutput

import spacy_paraphrase.pair_classifier.component  # noqa: F401  (registers the factory)
from spacy_paraphrase import PairDocError, make_pair_doc, token_probs
from spacy_paraphrase.pair_classifier.model import build_pair_classifier, pooling_matrix
from spacy_paraphrase.pair_classifier.scorer import score_pair_classifier

THREE = [
    # first, second, target distribution over A, B, C
    ("the weather was awful", "terrible weather indeed", {"A": 1.0, "B": 0.0, "C": 0.0}),
    ("I bought a car", "what about lunch ?", {"A": 0.0, "B": 1.0, "C": 0.0}),
    ("we won the game", "congratulations on the win", {"A": 0.0, "B": 0.0, "C": 1.0}),
    ("is it raining", "bring an umbrella", {"A": 0.7, "B": 0.3, "C": 0.0}),  # soft
]

BINARY = [
    ("my 20th time doing it", "you have been doing this", True),
    ("the weather was awful", "terrible weather indeed", True),
    ("I bought a car", "what about lunch ?", False),
    ("we won the game", "the stock market fell", False),
]
POS, NEG = "IS_PARAPHRASE", "NOT_PARAPHRASE"


def classifier_config(tiny_bert, **model):
    cfg = {"model": {"dropout": 0.0, "tok2vec": {"name": tiny_bert}}}
    cfg["model"].update(model)
    return cfg


def three_examples(nlp):
    out = []
    for a, b, cats in THREE:
        ref = make_pair_doc(nlp, a, b)
        ref.cats = dict(cats)
        out.append(Example(make_pair_doc(nlp, a, b), ref))
    return out


def binary_examples(nlp, extra_cats=None):
    out = []
    for a, b, label in BINARY:
        ref = make_pair_doc(nlp, a, b)
        ref.cats = {POS: float(label), NEG: float(not label)}
        if extra_cats:
            ref.cats.update(extra_cats(label))
        out.append(Example(make_pair_doc(nlp, a, b), ref))
    return out


def train(nlp, examples, steps, lr=1e-3, settle_steps=0):
    """steps updates at lr, then settle_steps at lr / 10 (full-batch Adam on a
    tiny transformer oscillates around a soft target at a high rate)."""
    optimizer = Adam(lr)
    history = []
    for i in range(steps + settle_steps):
        if i == steps:
            optimizer.learn_rate = lr / 10
        history.append(nlp.update(examples, sgd=optimizer, drop=0.0))
    return history


def predict(nlp, examples):
    return list(nlp.pipe([eg.predicted.copy() for eg in examples]))


def test_overfit_exclusive_soft_target_then_save_and_load(tiny_bert, tmp_path):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("pair_classifier", config=classifier_config(tiny_bert))
    examples = three_examples(nlp)
    nlp.initialize(lambda: examples)
    assert pipe.labels == ("A", "B", "C")
    losses = [h["pair_classifier"] for h in train(nlp, examples, 60, settle_steps=40)]
    # the soft target's entropy is the floor of the loss
    floor = -(0.7 * numpy.log(0.7) + 0.3 * numpy.log(0.3)) / 4
    assert losses[-1] - floor < (losses[0] - floor) / 10
    docs = predict(nlp, examples)
    for (_, _, cats), doc in zip(THREE, docs):
        assert set(doc.cats) == {"A", "B", "C"}
        assert sum(doc.cats.values()) == pytest.approx(1.0, abs=1e-5)
        assert max(doc.cats, key=doc.cats.get) == max(cats, key=cats.get)
        for label in cats:
            assert doc.cats[label] == pytest.approx(cats[label], abs=0.1)
    scores = nlp.evaluate(examples)
    assert scores["pair_classifier_acc"] == 1.0
    assert scores["pair_classifier_macro_f"] == 1.0
    assert scores["pair_classifier_per_label"] == {k: {"p": 1.0, "r": 1.0, "f": 1.0} for k in "ABC"}
    assert not any(key.startswith("pair_classifier_pos_") for key in scores)
    nlp.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    assert nlp2.get_pipe("pair_classifier").cfg == pipe.cfg
    for d1, d2 in zip(docs, predict(nlp2, examples)):
        assert d1.cats.keys() == d2.cats.keys()
        for label in d1.cats:
            assert d2.cats[label] == pytest.approx(d1.cats[label], abs=1e-6)


def test_overfit_binary_with_positive_label_and_threshold(tiny_bert, tmp_path):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = classifier_config(tiny_bert)
    config.update({"positive_label": POS, "threshold": 0.6})
    pipe = nlp.add_pipe("pair_classifier", config=config)
    examples = binary_examples(nlp)
    nlp.initialize(lambda: examples)
    assert pipe.labels == (POS, NEG)
    losses = [h["pair_classifier"] for h in train(nlp, examples, 50)]
    assert losses[-1] < losses[0] / 10
    docs = predict(nlp, examples)
    for (_, _, label), doc in zip(BINARY, docs):
        assert (doc.cats[POS] >= 0.6) == label
        assert doc.cats[POS] + doc.cats[NEG] == pytest.approx(1.0, abs=1e-5)
    scores = nlp.evaluate(examples)
    for key in ("acc", "macro_f", "pos_p", "pos_r", "pos_f"):
        assert scores[f"pair_classifier_{key}"] == 1.0, key
    assert set(scores["pair_classifier_per_label"]) == {POS, NEG}
    # the threshold is a setting: above every positive probability, nothing is positive
    pipe.cfg["threshold"] = 1.0
    scores = nlp.evaluate(examples)
    assert scores["pair_classifier_pos_r"] == 0.0
    assert scores["pair_classifier_acc"] == 0.5
    pipe.cfg["threshold"] = 0.6
    nlp.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    assert nlp2.get_pipe("pair_classifier").cfg["threshold"] == 0.6
    assert nlp2.get_pipe("pair_classifier").cfg["positive_label"] == POS
    nlp3 = spacy.util.load_model_from_config(nlp.config)
    nlp3.from_bytes(nlp.to_bytes())
    assert nlp3.get_pipe("pair_classifier").cfg == pipe.cfg
    for d1, d2 in zip(docs, predict(nlp2, examples)):
        assert d2.cats[POS] == pytest.approx(d1.cats[POS], abs=1e-6)


def test_non_exclusive_labels(tiny_bert):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = classifier_config(tiny_bert, exclusive_classes=False)
    config["exclusive_classes"] = False
    nlp.add_pipe("pair_classifier", config=config)
    examples = binary_examples(nlp)
    examples[0].reference.cats = {POS: 1.0, NEG: 1.0}  # both on: fine without exclusivity
    nlp.initialize(lambda: examples)
    losses = [h["pair_classifier"] for h in train(nlp, examples, 50)]
    assert losses[-1] < losses[0] / 10
    doc = predict(nlp, examples)[0]
    assert doc.cats[POS] > 0.5 and doc.cats[NEG] > 0.5
    assert nlp.evaluate(examples)["pair_classifier_acc"] == 1.0


def test_exclusive_setting_must_match_model(tiny_bert):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="exclusive_classes"):
        nlp.add_pipe("pair_classifier", config={"exclusive_classes": False, "model": {"tok2vec": {"name": tiny_bert}}})


def test_unknown_and_missing_labels_are_clear_errors(tiny_bert):
    nlp = spacy.blank("en")
    nlp.add_pipe("pair_classifier", config=classifier_config(tiny_bert))
    examples = binary_examples(nlp)
    nlp.initialize(lambda: examples)
    bad = binary_examples(nlp)
    bad[2].reference.cats["MAYBE"] = 0.0
    with pytest.raises(ValueError, match="'MAYBE'.*[Uu]nknown"):
        nlp.update(bad)
    bad = binary_examples(nlp)
    del bad[1].reference.cats[NEG]
    with pytest.raises(ValueError, match="lack the label.*'NOT_PARAPHRASE'"):
        nlp.update(bad)
    with pytest.raises(ValueError, match="lack the label.*'NOT_PARAPHRASE'"):
        nlp.evaluate(bad)
    bad = binary_examples(nlp)
    bad[0].reference.cats = {POS: 0.5, NEG: 0.2}
    with pytest.raises(ValueError, match="sum to 0.7"):
        nlp.update(bad)


def test_labels_from_config_and_positive_label_checked(tiny_bert):
    nlp = spacy.blank("en")
    config = classifier_config(tiny_bert)
    config.update({"labels": [NEG, POS], "positive_label": "YES"})
    nlp.add_pipe("pair_classifier", config=config)
    with pytest.raises(ValueError, match="positive_label 'YES'"):
        nlp.initialize(lambda: binary_examples(nlp))
    nlp.get_pipe("pair_classifier").cfg["positive_label"] = POS
    nlp.initialize(lambda: binary_examples(nlp))
    assert nlp.get_pipe("pair_classifier").labels == (NEG, POS)  # given order is kept
    doc = predict(nlp, binary_examples(nlp))[0]
    assert list(doc.cats) == [NEG, POS]


def test_non_pair_doc_is_a_clear_error(tiny_bert):
    nlp = spacy.blank("en")
    nlp.add_pipe("pair_classifier", config=classifier_config(tiny_bert))
    nlp.initialize(lambda: binary_examples(nlp))
    with pytest.raises(PairDocError, match="make_pair_doc"):
        nlp("A plain text without turns.")
    eg = Example(nlp.make_doc("plain text"), nlp.make_doc("plain text"))
    eg.reference.cats = {POS: 1.0, NEG: 0.0}
    with pytest.raises(PairDocError, match="make_pair_doc"):
        nlp.update([eg])


def test_uninitialized_without_labels_is_a_clear_error(tiny_bert):
    nlp = spacy.blank("en")
    nlp.add_pipe("pair_classifier", config=classifier_config(tiny_bert))
    with pytest.raises(ValueError, match="no labels"):
        nlp.initialize()


def shared_nlp(tiny_bert, spans_cats_key="PARAPHRASE"):
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "transformer",
        config={"model": {"@architectures": "spacy_paraphrase.PairTransformerModel.v1", "name": tiny_bert}},
    )
    listener = {"@architectures": "spacy_paraphrase.PairTransformerListener.v1"}
    nlp.add_pipe(
        "paraphrase_spans",
        config={
            "cats_key": spans_cats_key,
            "model": {"@architectures": "spacy_paraphrase.ParaphraseTagger.v1", "dropout": 0.0, "tok2vec": listener},
        },
    )
    nlp.add_pipe(
        "pair_classifier",
        config={"positive_label": POS, "model": {"dropout": 0.0, "tok2vec": listener}},
    )
    return nlp


HIGHLIGHTS = [([1, 2], [2, 3]), ([1, 3], [0, 1]), ([], []), ([], [])]


def shared_examples(nlp):
    examples = []
    for (a, b, label), (h1, h2) in zip(BINARY, HIGHLIGHTS):
        ref = make_pair_doc(nlp, a, b)
        n1 = len(ref.spans["turns"][0])
        ref.spans["paraphrase"] = [ref[i : i + 1] for i in h1] + [ref[n1 + i : n1 + i + 1] for i in h2]
        ref.cats = {"PARAPHRASE": float(label), POS: float(label), NEG: float(not label)}
        examples.append(Example(make_pair_doc(nlp, a, b), ref))
    return examples


def test_shared_backbone_with_paraphrase_spans(tiny_bert, tmp_path):
    fix_random_seed(0)
    nlp = shared_nlp(tiny_bert)
    examples = shared_examples(nlp)
    nlp.initialize(lambda: examples)
    # labels learned from the data, leaving out paraphrase_spans' cats_key
    assert nlp.get_pipe("pair_classifier").labels == (POS, NEG)
    history = train(nlp, examples, 60)
    for name in ("paraphrase_spans", "pair_classifier"):
        assert history[-1][name] < history[0][name] / 3, name
    docs = predict(nlp, examples)
    for (_, _, label), doc in zip(BINARY, docs):
        assert set(doc.cats) == {"PARAPHRASE", POS, NEG}
        assert (doc.cats[POS] >= 0.5) == label
        assert doc.cats["PARAPHRASE"] == doc.spans["paraphrase"].attrs["pair_score"]
        assert len(token_probs(doc)) == len(doc)
    scores = nlp.evaluate(examples)
    assert scores["pair_classifier_acc"] == 1.0
    assert "paraphrase_spans_jaccard_first" in scores
    nlp.to_disk(tmp_path / "model")
    docs2 = predict(spacy.load(tmp_path / "model"), examples)
    for d1, d2 in zip(docs, docs2):
        for key in d1.cats:
            assert d2.cats[key] == pytest.approx(d1.cats[key], abs=1e-5)


def test_label_colliding_with_cats_key_is_an_error(tiny_bert):
    nlp = shared_nlp(tiny_bert, spans_cats_key=POS)
    examples = shared_examples(nlp)
    for eg in examples:
        del eg.reference.cats["PARAPHRASE"]
    nlp.get_pipe("pair_classifier").cfg["labels"] = [POS, NEG]
    with pytest.raises(ValueError, match="IS_PARAPHRASE.*paraphrase_spans"):
        nlp.initialize(lambda: examples)


@pytest.mark.parametrize("pooling", ["cls", "mean_turns", "cls_mean_turns"])
@pytest.mark.parametrize("hidden_width", [0, 8])
def test_pooling_choices_run(tiny_bert, pooling, hidden_width):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(
        "pair_classifier", config=classifier_config(tiny_bert, pooling=pooling, hidden_width=hidden_width)
    )
    examples = three_examples(nlp)
    nlp.initialize(lambda: examples)
    k = {"cls": 1, "mean_turns": 2, "cls_mean_turns": 3}[pooling]
    assert pipe.model.get_dim("nI") == 32 * k
    losses = [h["pair_classifier"] for h in train(nlp, examples, 5)]
    assert losses[-1] < losses[0]
    probs = pipe.predict([eg.predicted for eg in examples])
    assert probs.shape == (4, 3)
    numpy.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_bare_add_pipe_default_config():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("pair_classifier")
    cfg = nlp.config["components"]["pair_classifier"]
    assert cfg["model"]["@architectures"] == "spacy_paraphrase.PairClassifier.v1"
    assert cfg["model"]["tok2vec"]["@architectures"] == "spacy_paraphrase.PairTransformer.v1"
    assert cfg["model"]["tok2vec"]["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert cfg["model"]["pooling"] == "cls_mean_turns"
    assert pipe.cfg == {"labels": [], "exclusive_classes": True, "positive_label": None, "threshold": 0.5}
    assert nlp.config["training"]["score_weights"]["pair_classifier_acc"] > 0
    assert nlp.config["training"]["score_weights"]["pair_classifier_macro_f"] > 0


# ---- model internals without a transformer --------------------------------

WIDTH = 4


def fake_data(doc, n_pieces, piece_lists, hidden):
    lengths = numpy.asarray([len(p) for p in piece_lists], dtype="int32")
    data = numpy.asarray([i for p in piece_lists for i in p], dtype="int32")
    trf = TransformerData(
        model_output=ModelOutput(last_hidden_state=hidden.reshape(1, n_pieces, WIDTH)),
        wordpieces=None,
        align=Ragged(data, lengths),
    )
    trf.cut_tokens = numpy.zeros((len(doc),), dtype=bool)
    return trf


def fake_tok2vec(piece_lists_per_doc, n_pieces):
    """A stand-in transformer: hidden states are the param H (one block of
    n_pieces rows per Doc), and its gradient is recorded in dH."""

    def forward(model, docs, is_train):
        H = model.get_param("H")
        datas = [
            fake_data(doc, n_pieces, pieces, H[i * n_pieces : (i + 1) * n_pieces])
            for i, (doc, pieces) in enumerate(zip(docs, piece_lists_per_doc))
        ]

        def backprop(d_datas):
            dH = numpy.concatenate([d.model_output.last_hidden_state.reshape(-1, WIDTH) for d in d_datas])
            model.attrs["dH"] = dH
            return docs

        return datas, backprop

    model = Model("fake-trf", forward, dims={"nO": WIDTH}, params={"H": None})
    rng = numpy.random.RandomState(0)
    model.set_param("H", rng.normal(size=(len(piece_lists_per_doc) * n_pieces, WIDTH)).astype("float32"))
    return model


def test_pooling_matrix(nlp):
    doc = make_pair_doc(nlp, ["a", "b"], ["c", "", "d"])
    # pieces: 0 [CLS], 1-2 first turn (token 1 has two pieces, 2 is shared), 3 [SEP], 4-5 second, 6 [SEP]
    pieces = [[1], [1, 2], [4], [], [5]]
    data = fake_data(doc, 7, pieces, numpy.zeros((7, WIDTH), "f"))
    P = pooling_matrix(doc, data, "cls_mean_turns", 7)
    expected = numpy.zeros((3, 7), "f")
    expected[0, 0] = 1
    expected[1, [1, 2]] = 0.5
    expected[2, [4, 5]] = 0.5
    numpy.testing.assert_allclose(P, expected)
    numpy.testing.assert_allclose(pooling_matrix(doc, data, "mean_turns", 7), expected[1:])
    numpy.testing.assert_allclose(pooling_matrix(doc, data, "cls", 7), expected[:1])
    # a turn without pieces (cut) pools to zeros
    data = fake_data(doc, 7, [[1], [2], [], [], []], numpy.zeros((7, WIDTH), "f"))
    assert not pooling_matrix(doc, data, "mean_turns", 7)[1].any()


@pytest.mark.parametrize("pooling", ["cls", "mean_turns", "cls_mean_turns"])
@pytest.mark.parametrize("exclusive", [True, False])
def test_gradient_matches_finite_differences(nlp, pooling, exclusive):
    docs = [make_pair_doc(nlp, ["a", "b"], ["c", "d"]), make_pair_doc(nlp, ["e"], ["f", "g"])]
    pieces = [[[1], [2], [4], [4, 5]], [[1], [3], [4]]]
    tok2vec = fake_tok2vec(pieces, 7)
    model = build_pair_classifier(tok2vec, pooling=pooling, hidden_width=5, dropout=0.0, exclusive_classes=exclusive, nO=3)
    model.initialize()
    targets = numpy.asarray([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]], dtype="f")

    def loss_of(H):
        tok2vec.set_param("H", H)
        p = numpy.clip(model.predict(docs).astype("float64"), 1e-12, 1)
        if exclusive:
            return float(-(targets * numpy.log(p)).sum())
        return float(-(targets * numpy.log(p) + (1 - targets) * numpy.log1p(-p)).sum())

    H0 = tok2vec.get_param("H").copy()
    probs, backprop = model.begin_update(docs)
    backprop(probs - targets)
    dH = tok2vec.attrs["dH"]
    eps = 1e-2
    numeric = numpy.zeros_like(H0)
    for idx in numpy.ndindex(*H0.shape):
        Hp, Hm = H0.copy(), H0.copy()
        Hp[idx] += eps
        Hm[idx] -= eps
        numeric[idx] = (loss_of(Hp) - loss_of(Hm)) / (2 * eps)
    tok2vec.set_param("H", H0)
    numpy.testing.assert_allclose(dH, numeric, atol=2e-3, rtol=2e-2)
    # pieces outside what the pooling reads get no gradient
    assert not dH[6].any() and not dH[13].any()


# ---- scorer --------------------------------------------------------------


def scored_examples(nlp, gold, pred):
    out = []
    for g, p in zip(gold, pred):
        ref = make_pair_doc(nlp, "a", "b")
        ref.cats = dict(g)
        doc = make_pair_doc(nlp, "a", "b")
        doc.cats = dict(p)
        out.append(Example(doc, ref))
    return out


def test_scorer_hand_computed_multiclass(nlp):
    labels = ["A", "B", "C"]
    gold = [
        {"A": 1, "B": 0, "C": 0},
        {"A": 1, "B": 0, "C": 0},
        {"A": 0, "B": 1, "C": 0},
        {"A": 0.2, "B": 0.2, "C": 0.6},  # soft: gold = C
        {"A": 0.4, "B": 0.4, "C": 0.2},  # tie: first label in order (A)
    ]
    pred = [
        {"A": 0.8, "B": 0.1, "C": 0.1},  # A, right
        {"A": 0.3, "B": 0.6, "C": 0.1},  # B, wrong
        {"A": 0.1, "B": 0.7, "C": 0.2},  # B, right
        {"A": 0.1, "B": 0.2, "C": 0.7},  # C, right
        {"A": 0.2, "B": 0.3, "C": 0.5},  # C, wrong
    ]
    s = score_pair_classifier(scored_examples(nlp, gold, pred), name="pc", labels=labels)
    assert s["pc_acc"] == pytest.approx(3 / 5)
    # A: gold {0,1,4}, pred {0}: p=1, r=1/3, f=0.5; B: gold {2}, pred {1,2}: p=.5, r=1, f=2/3;
    # C: gold {3}, pred {3,4}: p=.5, r=1, f=2/3
    assert s["pc_per_label"]["A"] == pytest.approx({"p": 1.0, "r": 1 / 3, "f": 0.5})
    assert s["pc_per_label"]["B"] == pytest.approx({"p": 0.5, "r": 1.0, "f": 2 / 3})
    assert s["pc_per_label"]["C"] == pytest.approx({"p": 0.5, "r": 1.0, "f": 2 / 3})
    assert s["pc_macro_f"] == pytest.approx((0.5 + 2 / 3 + 2 / 3) / 3)
    assert "pc_pos_f" not in s
    # labels default to the sorted reference keys
    assert score_pair_classifier(scored_examples(nlp, gold, pred), name="pc") == s


def test_scorer_hand_computed_binary_threshold(nlp):
    gold = [{POS: 1, NEG: 0}] * 3 + [{POS: 0, NEG: 1}] * 2
    p_pos = [0.9, 0.65, 0.4, 0.7, 0.1]
    pred = [{POS: p, NEG: 1 - p} for p in p_pos]
    egs = scored_examples(nlp, gold, pred)
    kwargs = dict(name="pc", labels=[POS, NEG], positive_label=POS)
    s = score_pair_classifier(egs, threshold=0.5, **kwargs)
    # predicted positive: 0, 1, 3 -> tp=2, fp=1, fn=1, tn=1
    assert s["pc_acc"] == pytest.approx(3 / 5)
    assert (s["pc_pos_p"], s["pc_pos_r"], s["pc_pos_f"]) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    # NOT: gold {3,4}, pred {2,4}: p=r=f=.5
    assert s["pc_per_label"][NEG] == pytest.approx({"p": 0.5, "r": 0.5, "f": 0.5})
    assert s["pc_macro_f"] == pytest.approx((2 / 3 + 0.5) / 2)
    # AUC: positives .9 .65 .4 vs negatives .7 .1 -> 4 of the 6 (pos, neg) pairs ranked right
    assert s["pc_pos_auc"] == pytest.approx(4 / 6)
    s = score_pair_classifier(egs, threshold=0.8, **kwargs)
    # predicted positive: 0 only -> tp=1, fp=0, fn=2, tn=2
    assert s["pc_acc"] == pytest.approx(3 / 5)
    assert (s["pc_pos_p"], s["pc_pos_r"], s["pc_pos_f"]) == pytest.approx((1.0, 1 / 3, 0.5))
    # a tie between a positive and a negative counts one half: .5 vs (.5, .1) -> (0.5 + 1) / 2
    tied = scored_examples(nlp, [{POS: 1, NEG: 0}] + [{POS: 0, NEG: 1}] * 2,
                           [{POS: p, NEG: 1 - p} for p in (0.5, 0.5, 0.1)])
    assert score_pair_classifier(tied, **kwargs)["pc_pos_auc"] == pytest.approx(0.75)
    # one gold class only: no ranking to score
    assert score_pair_classifier(egs[:3], threshold=0.5, **kwargs)["pc_pos_auc"] is None
    with pytest.raises(ValueError, match="positive_label"):
        score_pair_classifier(egs, name="pc", labels=[POS, NEG], positive_label="YES")


def test_scorer_hand_computed_non_exclusive(nlp):
    gold = [{"X": 1, "Y": 1}, {"X": 0, "Y": 1}, {"X": 0.6, "Y": 0.0}]
    pred = [{"X": 0.9, "Y": 0.8}, {"X": 0.7, "Y": 0.9}, {"X": 0.2, "Y": 0.1}]
    s = score_pair_classifier(scored_examples(nlp, gold, pred), name="pc", exclusive_classes=False)
    # X: gold {0,2}, pred {0,1}: p=r=f=.5; Y: gold {0,1}, pred {0,1}: 1
    assert s["pc_acc"] == pytest.approx(1 / 3)
    assert s["pc_per_label"]["X"] == pytest.approx({"p": 0.5, "r": 0.5, "f": 0.5})
    assert s["pc_macro_f"] == pytest.approx(0.75)


def test_pooling_matrix_over_windows(nlp):
    """An over-long pair is encoded as several rows (windows): CLS pooling
    averages each row's first piece, turn means cover pieces in all rows."""
    doc = make_pair_doc(nlp, ["a", "b"], ["c"])
    # 2 rows of 4 pieces: [CLS] a [SEP] c | [CLS] b [SEP] c
    data = fake_data(doc, 8, [[1], [5], [3, 7]], numpy.zeros((8, WIDTH), "f"))
    data.model_output = ModelOutput(last_hidden_state=numpy.zeros((2, 4, WIDTH), "f"))
    P = pooling_matrix(doc, data, "cls_mean_turns", 8)
    expected = numpy.zeros((3, 8), "f")
    expected[0, [0, 4]] = 0.5
    expected[1, [1, 5]] = 0.5
    expected[2, [3, 7]] = 0.5
    numpy.testing.assert_allclose(P, expected)


def test_windowed_pairs_are_classified(tiny_bert):
    nlp = spacy.blank("en")
    cfg = classifier_config(tiny_bert, pooling="cls_mean_turns")
    cfg["model"]["tok2vec"]["max_length"] = 24
    nlp.add_pipe("pair_classifier", config=cfg)
    examples = binary_examples(nlp)
    long_first = " ".join(["we talked about the long road home"] * 6)
    ref = make_pair_doc(nlp, long_first, "a long road indeed")
    ref.cats = {POS: 1.0, NEG: 0.0}
    examples.append(Example(make_pair_doc(nlp, long_first, "a long road indeed"), ref))
    nlp.initialize(lambda: examples)
    trf = nlp.get_pipe("pair_classifier").model.get_ref("tok2vec")
    datas = trf.predict([eg.predicted for eg in examples])
    assert datas[-1].model_output.last_hidden_state.shape[0] > 1  # windows
    losses = train(nlp, examples, 5)
    assert numpy.isfinite(losses[-1]["pair_classifier"])
    docs = predict(nlp, examples)
    assert sum(docs[-1].cats[k] for k in (POS, NEG)) == pytest.approx(1.0, abs=1e-5)
