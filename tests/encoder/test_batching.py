"""Sub-batching by length (encoder/batching.py: padding_groups /
run_transformer): same outputs and same training updates as one forward pass
per batch."""
import numpy
import pytest
from spacy.tokens import Doc, Span
from hypothesis import given, settings
from hypothesis import strategies as st
from thinc.api import Adam, fix_random_seed

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.encoder import batching
from spacy_paraphrase.encoder.batching import padding_groups

from tests.util import make_examples, make_nlp, pairs_of_mixed_lengths as _pairs


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=600), min_size=1, max_size=40),
    max_padding=st.floats(min_value=0.0, max_value=1.0),
    min_pieces=st.integers(min_value=0, max_value=2000),
)
def test_groups_partition_rows_and_bound_padding(lengths, max_padding, min_pieces):
    groups = padding_groups(lengths, max_padding, min_pieces)
    flat = numpy.concatenate(groups)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    if max_padding >= 1.0:
        assert len(groups) == 1
    lengths = numpy.asarray(lengths)
    for g in groups:
        assert list(g) == sorted(g)
        ls = lengths[g]
        padded = ls.max() * len(ls)
        # Each group: padding within budget, except for the one row that made
        # a group that was still under min_pieces grow.
        without_last = numpy.sort(ls)[1:] if len(ls) > 1 else ls
        assert 1 - ls.sum() / padded <= max_padding + 1e-9 or ls.max() * (len(ls) - 1) < min_pieces or len(ls) == 1 or (
            1 - without_last.sum() / (ls.max() * len(without_last)) <= max_padding + 1e-9
        )


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=2048), min_size=1, max_size=40),
    max_attention=st.integers(min_value=1, max_value=10_000_000),
)
def test_groups_bound_their_attention(lengths, max_attention):
    """No sub-batch holds more than ``max_attention`` rows x longest^2
    (unless it is one row), and the rows are still partitioned."""
    groups = padding_groups(lengths, 0.1, 0, max_attention=max_attention)
    assert sorted(numpy.concatenate(groups).tolist()) == list(range(len(lengths)))
    lengths = numpy.asarray(lengths)
    for g in groups:
        assert len(g) == 1 or len(g) * int(lengths[g].max()) ** 2 <= max_attention


def test_long_rows_run_in_small_sub_batches_on_a_cpu(tiny_bert):
    """The budget in bytes over the model's heads: a batch of long rows of the
    same length is split, where the padding rule alone keeps it whole."""
    nlp = make_nlp(tiny_bert)
    nlp.initialize()
    layer = nlp.get_pipe("transformer").model.layers[0]
    budget = batching.attention_budget(layer)
    heads = layer.shims[0]._model.config.num_attention_heads
    assert budget == batching.ATTENTION_BUDGET_BYTES // (heads * 4 * batching.ATTENTION_COPIES)
    width = int((budget / 3) ** 0.5)  # three rows fit, four do not
    assert [len(g) for g in padding_groups([width] * 8, 0.1, max_attention=budget)] == [3, 3, 2]
    assert len(padding_groups([width] * 8, 0.1)) == 1


def test_groups_split_mixed_lengths():
    groups = padding_groups([300, 20, 290, 21, 310, 22], max_padding=0.1, min_pieces=0)
    assert sorted(map(sorted, map(list, groups))) == [[0, 2, 4], [1, 3, 5]]
    assert len(padding_groups([300, 20, 290], max_padding=1.0)) == 1
    # tiny rows are not split off while their group is under min_pieces
    assert len(padding_groups([10, 3, 8, 2], max_padding=0.0, min_pieces=256)) == 1


def _set_max_padding(nlp, value):
    nlp.get_pipe("transformer").model.attrs["max_padding"] = value


@pytest.fixture
def count_groups(monkeypatch):
    """Let tiny batches split (no minimum group size) and count the groups."""
    monkeypatch.setattr(batching, "MIN_GROUP_PIECES", 0)
    seen = []
    original = batching.padding_groups

    def spy(*args, **kwargs):
        groups = original(*args, **kwargs)
        seen.append(len(groups))
        return groups

    monkeypatch.setattr(batching, "padding_groups", spy)
    return seen


def test_grouped_inference_matches_one_pass(tiny_bert, count_groups):
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    nlp.initialize(lambda: make_examples(nlp))
    docs = _pairs(nlp)
    _set_max_padding(nlp, 1.0)
    one = [token_probs(d, "paraphrase") for d in nlp.pipe([d.copy() for d in docs], batch_size=8)]
    one_trf = nlp.get_pipe("transformer").predict([d.copy() for d in docs])
    _set_max_padding(nlp, 0.0)
    count_groups.clear()
    grouped_trf = nlp.get_pipe("transformer").predict([d.copy() for d in docs])
    assert count_groups[-1] > 2
    grouped = [token_probs(d, "paraphrase") for d in nlp.pipe([d.copy() for d in docs], batch_size=8)]
    a = one_trf.model_output.last_hidden_state.detach().numpy()
    b = grouped_trf.model_output.last_hidden_state.detach().numpy()
    assert a.shape == b.shape
    mask = one_trf.wordpieces.attention_mask.astype(bool)
    numpy.testing.assert_allclose(a[mask], b[mask], atol=1e-5)
    for x, y in zip(one, grouped):
        numpy.testing.assert_allclose(x, y, atol=1e-5)


def test_grouped_training_matches_one_pass(tiny_bert, count_groups):
    def train(max_padding):
        fix_random_seed(0)
        nlp = make_nlp(tiny_bert)
        # no dropout inside BERT: the random masks would differ with the batch shape
        trf_cfg = nlp.get_pipe_config("transformer")["model"]
        trf_cfg["transformer_config"] = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
        nlp.remove_pipe("transformer")
        nlp.add_pipe("transformer", config={"model": trf_cfg}, first=True)
        examples = make_examples(nlp)
        nlp.initialize(lambda: examples)
        _set_max_padding(nlp, max_padding)
        opt = Adam(1e-3)
        losses = {}
        for _ in range(3):
            nlp.update(examples, sgd=opt, losses=losses, drop=0.0)
        return losses, [token_probs(d, "paraphrase") for d in nlp.pipe([eg.predicted.copy() for eg in examples])]

    loss_one, probs_one = train(1.0)
    count_groups.clear()
    loss_grouped, probs_grouped = train(0.0)
    assert max(count_groups) > 1
    for key in loss_one:
        assert loss_grouped[key] == pytest.approx(loss_one[key], rel=1e-4, abs=1e-6)
    for x, y in zip(probs_one, probs_grouped):
        numpy.testing.assert_allclose(x, y, atol=1e-4)


def test_models_returning_every_layer_run_in_one_pass(tiny_bert, count_groups):
    """With output_hidden_states the per-layer tuple is kept exact: no
    sub-batching, and each layer's output covers the whole padded batch."""
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    trf_cfg = nlp.get_pipe_config("transformer")["model"]
    trf_cfg["transformer_config"] = {"output_hidden_states": True}
    nlp.remove_pipe("transformer")
    nlp.add_pipe("transformer", config={"model": trf_cfg}, first=True)
    nlp.initialize(lambda: make_examples(nlp))
    _set_max_padding(nlp, 0.0)
    docs = _pairs(nlp)
    batch = nlp.get_pipe("transformer").predict(docs)
    assert max(count_groups) > 2  # the lengths would have been split ...
    calls = []
    layer = nlp.get_pipe("transformer").model.layers[0]
    original = layer._func

    def counting(model, X, is_train):
        calls.append(X.input_ids.shape)
        return original(model, X, is_train)

    layer._func = counting
    batch = nlp.get_pipe("transformer").predict(docs)
    assert calls == [batch.wordpieces.input_ids.shape]  # ... but ran as one pass
    hidden = batch.model_output.hidden_states
    assert len(hidden) == 3 and all(h.shape[:2] == batch.wordpieces.input_ids.shape for h in hidden)


def test_on_a_gpu_a_batch_is_one_forward_pass(tiny_bert, count_groups, monkeypatch):
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    nlp.initialize(lambda: make_examples(nlp))
    _set_max_padding(nlp, 0.0)
    trf = nlp.get_pipe("transformer")
    trf.predict([d.copy() for d in _pairs(nlp)])
    assert count_groups[-1] > 1
    monkeypatch.setattr(batching, "on_gpu", lambda layer: True)
    count_groups.clear()
    trf.predict([d.copy() for d in _pairs(nlp)])
    assert count_groups == [1]


def test_split_by_doc_matches_spacy_transformers(tiny_bert):
    # PairTransformerBatch.split_by_doc finds token ranges from Doc lengths;
    # the stock method (FullTransformerBatch's) walks the tokens: same result,
    # windows (several rows per Doc) included.
    from spacy_transformers.data_classes import FullTransformerBatch

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    nlp.initialize(lambda: make_examples(nlp))
    long = make_pair_doc(nlp, ["word"] * 150, ["other"] * 40)
    docs = [long] + _pairs(nlp)
    batch = nlp.get_pipe("transformer").model.predict(docs)
    ours = batch.split_by_doc()
    stock = FullTransformerBatch.split_by_doc(batch)
    assert ours[0].model_output.last_hidden_state.shape[0] > 1  # windows
    for a, b in zip(ours, stock):
        assert a.align.lengths.tolist() == b.align.lengths.tolist()
        assert a.align.dataXd.tolist() == b.align.dataXd.tolist()
        assert a.wordpieces.strings == b.wordpieces.strings
        numpy.testing.assert_array_equal(a.model_output.last_hidden_state, b.model_output.last_hidden_state)
    assert [d.cut_tokens.tolist() for d in ours] == [c.tolist() for c in batch.cut_tokens]


def test_a_pair_without_any_piece_gets_zero_vectors_in_a_batch(tiny_bert):
    # "\x1b" tokenizes to nothing: as spacy-transformers' apply_alignment does,
    # each token of such a Doc gets one zero vector; the other Docs of the
    # batch are unaffected by it.
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=True)
    nlp.initialize(lambda: make_examples(nlp))
    # make_pair_doc refuses such turns (no visible character): a Doc built by hand
    empty = Doc(nlp.vocab, words=["\x1b", "\x1b"], spaces=[True, False])
    empty.spans["turns"] = [Span(empty, 0, 1, "FIRST"), Span(empty, 1, 2, "SECOND")]
    others = _pairs(nlp)[:2]
    pipe = nlp.get_pipe("paraphrase_spans")
    scores = pipe.model.predict([others[0], empty, others[1]])
    assert scores[1].n_pieces.tolist() == [1, 1]
    assert numpy.isfinite(scores[1].probs).all() and scores[1].probs[0] == scores[1].probs[1]
    alone = pipe.model.predict([others[0], others[1]])
    numpy.testing.assert_allclose(scores[0].probs, alone[0].probs, atol=1e-6)
    numpy.testing.assert_allclose(scores[2].probs, alone[1].probs, atol=1e-6)
