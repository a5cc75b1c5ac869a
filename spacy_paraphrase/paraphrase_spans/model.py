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
"""
from dataclasses import dataclass
from typing import List, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, chain
from thinc.types import Floats1d, Floats2d, Ragged
from transformers.file_utils import ModelOutput
from spacy_transformers.align import apply_alignment
from spacy_transformers.data_classes import TransformerData

from ..encoder.model import check_transformer_output, tok2vec_width
from ..words import widen_alignment


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
) -> Model[List[Doc], List[TokenScores]]:
    """Token probabilities of "part of the paraphrase" over a pair Doc.

    tok2vec: a pair-aware transformer giving per-Doc TransformerData
        (``spacy_paraphrase.PairTransformerListener.v1`` or
        ``spacy_paraphrase.PairTransformer.v1``).
    dropout (float): dropout on the pooled token vectors during training.
    grad_factor (float): scales the gradient sent to the transformer
        (0 freezes it with respect to this component).
    """
    head = chain(Dropout(dropout), Linear(nO=1))
    model: Model = Model(
        "paraphrase-tagger",
        forward,
        init=init,
        layers=[tok2vec, head],
        attrs={"grad_factor": grad_factor},
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

    aligned: List[Ragged] = []
    bp_aligns = []
    for doc, data in zip(docs, trf_datas):
        hidden = cast(Floats2d, data.model_output.last_hidden_state)
        src = ops.reshape2f(hidden, -1, width)
        # every token is pooled over all the pieces of its whitespace word
        dst, get_d_src = apply_alignment(ops, widen_alignment(doc, data.align), src)
        aligned.append(dst)
        bp_aligns.append(get_d_src)
    lengths = xp.concatenate([r.lengths for r in aligned]) if aligned else xp.zeros((0,), "i")
    flat = xp.concatenate([r.dataXd for r in aligned], axis=0) if aligned else ops.alloc2f(0, width)
    pooled = ops.reduce_mean(cast(Floats2d, flat), lengths)
    logits2d, bp_head = head(pooled, is_train)
    logits = logits2d.ravel()
    probs_all = ops.asarray(ops.sigmoid(logits))
    lengths_np = ops.to_numpy(lengths)
    probs_np = ops.to_numpy(probs_all).astype("float32")

    outputs: List[TokenScores] = []
    start = 0
    for doc, data in zip(docs, trf_datas):
        end = start + len(doc)
        n_pieces = lengths_np[start:end].astype("int32")
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
        d_pooled = bp_head(d_logits)
        d_flat = ops.backprop_reduce_mean(cast(Floats2d, d_pooled), lengths)
        d_trf_datas: List[TransformerData] = []
        offset = 0
        for data, dst, get_d_src in zip(trf_datas, aligned, bp_aligns):
            n = dst.dataXd.shape[0]
            d_dst = Ragged(d_flat[offset : offset + n], dst.lengths)
            offset += n
            d_src = get_d_src(d_dst)
            if grad_factor != 1.0:
                d_src *= grad_factor
            shape = data.model_output.last_hidden_state.shape
            d_trf_datas.append(
                TransformerData(
                    model_output=ModelOutput(last_hidden_state=d_src.reshape(shape)),
                    wordpieces=data.wordpieces,
                    align=data.align,
                )
            )
        return bp_trf(d_trf_datas)

    return outputs, backprop
