"""The pair-level model behind ``pair_classifier``.

``spacy_paraphrase.PairClassifier.v1`` takes per-Doc ``TransformerData`` from a
pair-aware transformer (``spacy_paraphrase.PairTransformerListener.v1`` or
``spacy_paraphrase.PairTransformer.v1``), pools the pair's wordpiece vectors
into one vector per Doc, and classifies it:

    pooled -> [Relu(hidden_width)] -> Dropout -> Linear(nO) -> softmax | sigmoid

Pooling (``pooling``), with W the transformer's width:

``"cls"`` (W)
    The vector of the first wordpiece of the pair's row (``[CLS]`` / ``<s>``),
    which attends to both turns. A pair longer than the transformer's limit
    is encoded as several windows (rows): then the mean of their first pieces.
``"mean_turns"`` (2W)
    The mean of the wordpieces aligned to the first turn's tokens, then the
    same for the second turn, concatenated. Special pieces (``[CLS]``,
    ``[SEP]``) are in neither mean. A turn without any piece (every token cut
    from an over-long pair) gives a zero vector.
``"cls_mean_turns"`` (3W)
    Both: ``[cls, mean(first turn), mean(second turn)]``.

Per Doc the pooling is a small matrix P (k x n_pieces, k = 1, 2 or 3 rows), so
``pooled = P @ H`` and the gradient to the wordpiece vectors is ``P.T @
d_pooled``.

Output: probabilities, one row per Doc (softmax over the labels when
``exclusive_classes``, else one sigmoid per label). As with thinc's
``Softmax`` and ``Logistic`` layers, the backward pass takes the gradient of
the loss with respect to the *logits* (``probs - targets`` for cross-entropy),
not with respect to the probabilities.
"""
from typing import Callable, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, Relu, chain
from thinc.types import Floats2d
from ..encoder import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
from transformers.file_utils import ModelOutput
from spacy_transformers.data_classes import TransformerData

from ..pair_doc import get_turns
from ..encoder.model import check_transformer_output, tok2vec_width

POOLINGS = {"cls": ("cls",), "mean_turns": ("first", "second"), "cls_mean_turns": ("cls", "first", "second")}


@registry.architectures("spacy_paraphrase.PairClassifier.v1")
def build_pair_classifier(
    tok2vec: Model[List[Doc], List[TransformerData]],
    pooling: str = "cls",
    hidden_width: int = 0,
    dropout: float = 0.1,
    exclusive_classes: bool = True,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Label probabilities for pair Docs, one row per Doc.

    tok2vec: a pair-aware transformer giving per-Doc TransformerData
        (``spacy_paraphrase.PairTransformerListener.v1`` or
        ``spacy_paraphrase.PairTransformer.v1``).
    pooling (str): "cls", "mean_turns" or "cls_mean_turns" (see module doc).
    hidden_width (int): width of a Relu hidden layer; 0 = none (linear head).
    dropout (float): dropout before the output layer during training.
    exclusive_classes (bool): softmax over the labels (one label per pair)
        when true, an independent sigmoid per label when false.
    nO (Optional[int]): number of labels; inferred at initialize from Y.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"Unknown pooling {pooling!r}: use one of {', '.join(POOLINGS)}.")
    if hidden_width < 0:
        raise ValueError(f"hidden_width must be >= 0, got {hidden_width}.")
    layers: List[Model] = []
    if hidden_width > 0:
        layers.append(Relu(nO=hidden_width))
    layers.append(Dropout(dropout))
    output_layer = Linear(nO=nO)
    layers.append(output_layer)
    head = chain(*layers)
    model: Model = Model(
        "pair-classifier",
        forward,
        init=init,
        layers=[tok2vec, head],
        dims={"nI": None, "nO": nO},
        attrs={"pooling": pooling, "exclusive_classes": exclusive_classes, "hidden_width": hidden_width},
    )
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("head", head)
    model.set_ref("output_layer", output_layer)
    if hidden_width > 0:
        model.set_ref("hidden_layer", layers[0])
    return model


def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Floats2d] = None) -> None:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X)
    width = tok2vec_width(tok2vec)
    n_in = width * len(POOLINGS[model.attrs["pooling"]])
    model.set_dim("nI", n_in)
    if Y is not None:
        n_out = int(Y.shape[1])
        if model.has_dim("nO") and model.get_dim("nO") != n_out:
            raise ValueError(
                f"The pair classifier was set up for {model.get_dim('nO')} labels but the "
                f"initialization data has {n_out}."
            )
        model.set_dim("nO", n_out)
    if not model.has_dim("nO"):
        raise ValueError(
            "The pair classifier does not know how many labels it has: give nO or "
            "initialize it with Y (n_docs x n_labels)."
        )
    n_out = model.get_dim("nO")
    hidden_width = model.attrs["hidden_width"]
    if hidden_width > 0:
        model.get_ref("hidden_layer").set_dim("nI", n_in)
    output_layer = model.get_ref("output_layer")
    output_layer.set_dim("nI", hidden_width if hidden_width > 0 else n_in)
    if output_layer.has_dim("nO") is None:
        output_layer.set_dim("nO", n_out)
    model.get_ref("head").initialize()


def _to_numpy(array) -> numpy.ndarray:
    return array.get() if hasattr(array, "get") else numpy.asarray(array)


def pooling_matrix(doc: Doc, data: TransformerData, pooling: str, n_pieces: int) -> numpy.ndarray:
    """The (k, n_pieces) pooling matrix of one pair Doc (see module doc)."""
    rows = POOLINGS[pooling]
    out = numpy.zeros((len(rows), n_pieces), dtype="float32")
    shape = data.model_output.last_hidden_state.shape
    n_rows = int(shape[0]) if len(shape) == 3 else 1
    turns = get_turns(doc) if "first" in rows else ()
    lengths = _to_numpy(data.align.lengths).astype("int64")
    indices = _to_numpy(data.align.dataXd).astype("int64").ravel()
    starts = numpy.concatenate([[0], numpy.cumsum(lengths)])
    for r, what in enumerate(rows):
        if what == "cls":
            # one row per window for an over-long pair: the mean of their
            # first pieces (a pair that fits is one row: its [CLS])
            out[r, numpy.arange(n_rows) * (n_pieces // n_rows)] = 1.0 / n_rows
            continue
        turn_span = turns[0] if what == "first" else turns[1]
        idx = numpy.unique(indices[starts[turn_span.start] : starts[turn_span.end]])
        if len(idx):
            out[r, idx] = 1.0 / len(idx)
    return out


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    ops = model.ops
    xp = ops.xp
    tok2vec = model.get_ref("tok2vec")
    head = model.get_ref("head")
    pooling = model.attrs["pooling"]
    exclusive = model.attrs["exclusive_classes"]
    width = tok2vec_width(tok2vec)
    n_out = model.get_dim("nO")
    if not docs:
        return ops.alloc2f(0, n_out), lambda d: []
    trf_datas, bp_trf = tok2vec(docs, is_train)
    check_transformer_output(docs, trf_datas, "pair classifier")

    matrices = []
    pooled_rows = []
    for doc, data in zip(docs, trf_datas):
        hidden = cast(Floats2d, ops.reshape2f(data.model_output.last_hidden_state, -1, width))
        P = ops.asarray2f(pooling_matrix(doc, data, pooling, hidden.shape[0]))
        matrices.append(P)
        pooled_rows.append(ops.gemm(P, hidden).reshape(1, -1))
    pooled = ops.asarray2f(xp.concatenate(pooled_rows, axis=0))
    logits, bp_head = head(pooled, is_train)
    if exclusive:
        probs = ops.softmax(logits)
    else:
        probs = ops.sigmoid(logits)

    def backprop(d_logits: Floats2d) -> List[Doc]:
        d_pooled = bp_head(ops.asarray2f(d_logits))
        d_trf_datas: List[TransformerData] = []
        for i, (data, P) in enumerate(zip(trf_datas, matrices)):
            d_row = ops.reshape2f(d_pooled[i], P.shape[0], width)
            d_hidden = ops.gemm(P, d_row, trans1=True)
            shape = data.model_output.last_hidden_state.shape
            d_trf_datas.append(
                TransformerData(
                    model_output=ModelOutput(last_hidden_state=d_hidden.reshape(shape)),
                    wordpieces=data.wordpieces,
                    align=data.align,
                )
            )
        return bp_trf(d_trf_datas)

    return probs, backprop
