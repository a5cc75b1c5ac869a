"""PairTransformerModel's forward (encoder/model.py): cut tokens and the
truncation warning, the maximum length, and the check downstream layers run."""
import numpy
import pytest
from thinc.api import fix_random_seed

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.encoder.model import PairTransformerBatch, TruncationWarning, check_transformer_output, get_max_length

from tests.util import make_examples, make_nlp


@pytest.fixture(scope="module")
def initialized(tiny_bert):
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    nlp.initialize(lambda: make_examples(nlp))
    return nlp


def test_max_length_configured_or_the_models_own(initialized):
    model = initialized.get_pipe("transformer").model
    assert model.attrs["max_length"] == 0
    assert get_max_length(model) == 128  # the tiny BERT's max_position_embeddings, below the tokenizer's 512
    model.attrs["max_length"] = 32
    try:
        assert get_max_length(model) == 32
    finally:
        model.attrs["max_length"] = 0


def test_cut_tokens_reach_each_doc_with_a_warning(initialized):
    nlp = initialized
    trf = nlp.get_pipe("transformer")
    giant = "x" + "-x" * 40
    docs = [make_pair_doc(nlp, ["start", giant, "\u200b", "end"], ["reply"]), make_pair_doc(nlp, "a b", "c")]
    trf.model.attrs["max_length"] = 16
    try:
        with pytest.warns(TruncationWarning, match="1 of 2 pair Docs"):
            batch = trf.predict(docs)
    finally:
        trf.model.attrs["max_length"] = 0
    assert isinstance(batch, PairTransformerBatch)
    assert [len(spans) for spans in batch.spans] == [3, 1]  # three windows, one whole pair
    datas = batch.split_by_doc()
    assert datas[0].cut_tokens.tolist() == [False, False, True, False, False]
    assert not datas[1].cut_tokens.any()
    check_transformer_output(docs, datas, "test layer")


def test_empty_batch(initialized):
    batch = initialized.get_pipe("transformer").predict([])
    assert batch.wordpieces.input_ids.shape[0] == 0


def test_check_transformer_output_names_the_problem(initialized):
    nlp = initialized
    docs = [make_pair_doc(nlp, "a b", "c d")]
    datas = nlp.get_pipe("transformer").predict(docs).split_by_doc()
    with pytest.raises(ValueError, match="for 0 Docs, expected 1"):
        check_transformer_output(docs, [], "tagger")
    with pytest.raises(ValueError, match="covers 4 tokens but the Doc has 5"):
        check_transformer_output([make_pair_doc(nlp, "a b c", "d e")], datas, "tagger")
    check_transformer_output(docs, datas, "tagger")
    del datas[0].cut_tokens  # what a stock transformer gives
    with pytest.raises(ValueError, match="The tagger got transformer output that was not made by spacy_paraphrase"):
        check_transformer_output(docs, datas, "tagger")
