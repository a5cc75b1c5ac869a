"""The token-level model behind ``paraphrase_spans``.

``spacy_paraphrase.ParaphraseTagger.v1`` takes per-Doc ``TransformerData`` from
a pair-aware transformer (a listener or an inline one, see
``spacy_paraphrase.encoder``), mean-pools the wordpiece vectors of each token's
whitespace word (``spacy_paraphrase.words``: "Rome." tokenized as "Rome" + "."
is one word, so both tokens get the word's vector, as a word-list token "Rome."
would) and scores each token with a linear layer and a sigmoid: the probability
that the token (its word) is part of the paraphrase.

Its output is one ``TokenScores`` per Doc. Tokens without wordpieces get no
probability from the model (NaN): whitespace tokens, tokens the tokenizer maps
to nothing, and tokens cut from an over-long pair (``cut`` is True for those).
The readout decides what such tokens get (``readout.fill_unscored``).

Two settings reproduce the ContextDeP authors' token classifiers
(``import_model.py`` writes them): ``pooling = "first"`` reads each word at its
first wordpiece instead of the mean of its pieces, and ``head_labels = 2`` is a
two-label linear head whose probability is the softmax of label 1 (equal to the
sigmoid of the two logits' difference), the head of
``AutoModelForTokenClassification`` with ``num_labels=2``.
"""
from dataclasses import dataclass
from typing import List, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, chain
from thinc.types import Floats1d, Floats2d
from ..encoder import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
from transformers.file_utils import ModelOutput
from spacy_transformers.data_classes import TransformerData

from ..config_attrs import from_config
from ..encoder.model import check_transformer_output, tok2vec_width
from ..words import widen_alignment, word_first_piece


POOLINGS = ("mean", "first")


@dataclass
class TokenScores:
    """Model output for one Doc (numpy arrays of length ``len(doc)``)."""

    probs: numpy.ndarray  # float32, NaN where the token has no wordpieces
    n_pieces: numpy.ndarray  # int32, wordpieces aligned to each token
    cut: numpy.ndarray  # bool, token cut because the pair was too long
    n_windows: int = 1  # sequences the pair was encoded as (>1 for long pairs)


@registry.architectures("spacy_paraphrase.ParaphraseTagger.v1")
def build_paraphrase_tagger(
    tok2vec: Model[List[Doc], List[TransformerData]],
    dropout: float = 0.1,
    grad_factor: float = 1.0,
    pooling: str = "mean",
    head_labels: int = 1,
) -> Model[List[Doc], List[TokenScores]]:
    """Token probabilities of "part of the paraphrase" over a pair Doc.

    tok2vec: a pair-aware transformer giving per-Doc TransformerData
        (``spacy_paraphrase.PairTransformerListener.v1`` or
        ``spacy_paraphrase.PairTransformer.v1``).
    dropout (float): dropout on the pooled token vectors during training.
    grad_factor (float): scales the gradient sent to the transformer
        (0 freezes it with respect to this component).
    pooling (str): how a word's wordpiece vectors become its vector: "mean"
        (all its pieces, the default) or "first" (its first piece, as the
        ContextDeP authors read their classifier; with windows, its first
        piece in the first window that holds it).
    head_labels (int): 1 (one logit, sigmoid: the default) or 2 (two logits,
        softmax, the probability of label 1: an imported Hugging Face token
        classifier's head, kept as it was trained).
    """
    if pooling not in POOLINGS:
        raise ValueError(f"Unknown pooling {pooling!r}: choose one of {POOLINGS}")
    if head_labels not in (1, 2) or isinstance(head_labels, bool):
        raise ValueError(f"head_labels must be 1 or 2, got {head_labels!r}")
    head = chain(Dropout(dropout), Linear(nO=head_labels))
    model: Model = Model(
        "paraphrase-tagger",
        forward,
        init=init,
        layers=[tok2vec, head],
        # pooling: the config decides, also when a saved pipeline loads (config_attrs.py)
        attrs={"grad_factor": grad_factor, "pooling": from_config(pooling), "head_labels": head_labels},
        dims={"nI": None},
    )
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("head", head)
    return model


def init(model: Model, X=None, Y=None) -> None:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X)
    width = tok2vec_width(tok2vec)
    model.set_dim("nI", width)
    head = model.get_ref("head")
    head.layers[-1].set_dim("nI", width)
    head.initialize()


def forward(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[List[TokenScores], callable]:
    ops = model.ops
    xp = ops.xp
    tok2vec = model.get_ref("tok2vec")
    head = model.get_ref("head")
    grad_factor = model.attrs["grad_factor"]
    width = model.get_dim("nI")
    trf_datas, bp_trf = tok2vec(docs, is_train)
    check_transformer_output(docs, trf_datas, "paraphrase tagger")

    # One gather for the whole batch: every Doc's wordpiece vectors laid end
    # to end, every token's pieces (those of its whitespace word) indexed into them.
    hiddens = [cast(Floats2d, data.model_output.last_hidden_state) for data in trf_datas]
    sizes = [int(h.shape[0] * h.shape[1]) if h.ndim == 3 else int(h.shape[0]) for h in hiddens]
    bases = numpy.concatenate([[0], numpy.cumsum(sizes, dtype="int64")])
    # A Doc none of whose tokens has a piece gets one zero vector per token,
    # as spacy-transformers' ``apply_alignment`` gives it: the row after the last.
    zero_row = int(bases[-1])
    # pooling "first": one row per token, its word's first piece
    first_only = model.attrs.get("pooling", "mean") == "first"
    indices, lengths_list, n_pieces_list = [], [], []
    for doc, data, base in zip(docs, trf_datas, bases):
        align = widen_alignment(doc, data.align)
        doc_lengths = ops.to_numpy(align.lengths)
        n_pieces_list.append(doc_lengths if doc_lengths.sum() else numpy.ones_like(doc_lengths))
        if doc_lengths.sum() and first_only:
            first = word_first_piece(doc, data.first_piece)
            indices.append(numpy.where(first >= 0, first + base, zero_row))
            lengths_list.append(numpy.ones_like(doc_lengths))
        elif doc_lengths.sum():
            indices.append(ops.to_numpy(align.dataXd).ravel().astype("int64") + base)
            lengths_list.append(doc_lengths)
        else:
            indices.append(numpy.full((len(doc_lengths),), zero_row, dtype="int64"))
            lengths_list.append(numpy.ones_like(doc_lengths))
    index = numpy.concatenate(indices) if indices else numpy.zeros((0,), "int64")
    lengths_np = numpy.concatenate(lengths_list) if lengths_list else numpy.zeros((0,), "i")
    n_pieces_np = numpy.concatenate(n_pieces_list) if n_pieces_list else numpy.zeros((0,), "i")
    lengths = ops.asarray1i(lengths_np)
    src = xp.concatenate([ops.reshape2f(h, -1, width) for h in hiddens] + [ops.alloc2f(1, width)])
    index_xp = ops.asarray(index)
    pooled = ops.reduce_mean(cast(Floats2d, src[index_xp]), lengths)
    logits2d, bp_head = head(pooled, is_train)
    two_labels = logits2d.shape[1] == 2
    # label 1's softmax over two logits is the sigmoid of their difference
    logits = (logits2d[:, 1] - logits2d[:, 0]) if two_labels else logits2d.ravel()
    # the head's probabilities leave the device once per batch
    probs_np = ops.to_numpy(ops.sigmoid(logits)).astype("float32")

    outputs: List[TokenScores] = []
    start = 0
    for doc, data in zip(docs, trf_datas):
        end = start + len(doc)
        n_pieces = n_pieces_np[start:end].astype("int32")
        probs = probs_np[start:end].copy()
        probs[n_pieces == 0] = numpy.nan
        outputs.append(
            TokenScores(
                probs=probs,
                n_pieces=n_pieces,
                cut=numpy.asarray(data.cut_tokens),
                n_windows=int(data.model_output.last_hidden_state.shape[0]),
            )
        )
        start = end

    def backprop(d_logits_list: List[Floats1d]) -> List[Doc]:
        d_logits = ops.asarray2f(
            xp.concatenate([xp.asarray(d, dtype="float32") for d in d_logits_list]).reshape(
                -1, 1
            )
        )
        if two_labels:  # d(z1 - z0): +d to label 1, -d to label 0
            d_logits = xp.concatenate([-d_logits, d_logits], axis=1)
        d_pooled = bp_head(d_logits)
        d_flat = ops.backprop_reduce_mean(cast(Floats2d, d_pooled), lengths)
        d_src = ops.alloc2f(zero_row + 1, width)
        ops.scatter_add(d_src, index_xp, d_flat)
        if grad_factor != 1.0:
            d_src *= grad_factor
        d_trf_datas: List[TransformerData] = []
        for i, data in enumerate(trf_datas):
            shape = data.model_output.last_hidden_state.shape
            d_trf_datas.append(
                TransformerData(
                    model_output=ModelOutput(last_hidden_state=d_src[bases[i] : bases[i + 1]].reshape(shape)),
                    wordpieces=data.wordpieces,
                    align=data.align,
                )
            )
        return bp_trf(d_trf_datas)

    return outputs, backprop

