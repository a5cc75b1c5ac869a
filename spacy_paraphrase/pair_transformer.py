"""A pair-aware transformer for spacy-transformers.

The two turns of a pair Doc (see ``pair_doc.py``) are encoded as one real text
pair, ``[CLS] first [SEP] second [SEP]`` (the tokenizer's ``text_pair``, with
``token_type_ids`` where the model has them). Wordpieces are aligned back to the
Doc's tokens by character offsets (``alignment.py``), and the output is an
ordinary spacy-transformers ``FullTransformerBatch``, so the stock
``transformer`` component, its listeners, training and serialization all work
unchanged.

Long pairs: a pair with more wordpieces than the model's maximum length is cut
with the ``longest_first`` strategy (pieces are removed from the end of the
longer turn first). Tokens that lost all their pieces that way are *cut*: the
batch records them per Doc (``TransformerData.cut_tokens``, a boolean array), and
downstream components give them no probability. A warning says how many Docs of
a batch were cut.
"""
import copy
import multiprocessing
import os
import warnings
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from spacy_transformers.data_classes import FullTransformerBatch, TransformerData, WordpieceBatch
from spacy_transformers.layers import TransformerListener, split_trf_batch
from spacy_transformers.layers.transformer_model import (
    TransformerModel,
    huggingface_from_pretrained,
)

from .alignment import build_ragged, char_to_token, token_pieces
from .backbones import missing_backbone_hint, resolve_model_name
from .pair_doc import get_turns

DEFAULT_MAX_LENGTH = 512


class TruncationWarning(UserWarning):
    pass


@dataclass
class PairTransformerBatch(FullTransformerBatch):
    """A FullTransformerBatch that also records, per Doc, which tokens were cut
    because the pair exceeded the model's maximum length."""

    cut_tokens: Optional[List[numpy.ndarray]] = None

    def split_by_doc(self) -> List[TransformerData]:
        outputs = super().split_by_doc()
        if self.cut_tokens is not None:
            for data, cut in zip(outputs, self.cut_tokens):
                data.cut_tokens = cut  # type: ignore[attr-defined]
        return outputs


def whole_doc_spans(docs):
    return [[doc[:]] for doc in docs]


class PairTransformerModel(TransformerModel):
    """spacy-transformers' TransformerModel, encoding each pair Doc's two turns
    as one text pair."""

    def __init__(
        self,
        name: str,
        *,
        tokenizer_config: dict = {},
        transformer_config: dict = {},
        mixed_precision: bool = False,
        grad_scaler_config: dict = {},
        max_length: int = 0,
    ):
        tokenizer_config = dict(tokenizer_config)
        tokenizer_config.setdefault("use_fast", True)
        super().__init__(
            name,
            whole_doc_spans,
            tokenizer_config=tokenizer_config,
            transformer_config=dict(transformer_config),
            mixed_precision=mixed_precision,
            grad_scaler_config=dict(grad_scaler_config),
        )
        setattr(self, "_func", pair_forward)
        setattr(self, "init", pair_init)
        self.attrs["max_length"] = max_length
        self.attrs["init_args"] = dict(
            tokenizer_config=tokenizer_config,
            transformer_config=dict(transformer_config),
            mixed_precision=mixed_precision,
            grad_scaler_config=dict(grad_scaler_config),
            max_length=max_length,
        )

    def copy(self):
        copied = PairTransformerModel(self.attrs["name"], **self.attrs["init_args"])
        params = {}
        for pname in self.param_names:
            params[pname] = self.get_param(pname) if self.has_param(pname) else None
        copied.params = copy.deepcopy(params)
        copied.dims = copy.deepcopy(self._dims)
        copied.layers[0] = copy.deepcopy(self.layers[0])
        for gname in self.grad_names:
            copied.set_grad(gname, self.get_grad(gname).copy())
        copied.attrs["has_transformer"] = self.attrs["has_transformer"]
        return copied


def get_max_length(model: PairTransformerModel) -> int:
    """The most wordpieces one pair may have: the configured ``max_length`` when
    set, else the smaller of the tokenizer's and the model's limits."""
    configured = model.attrs.get("max_length") or 0
    if configured > 0:
        return int(configured)
    limit = getattr(model.tokenizer, "model_max_length", None) or DEFAULT_MAX_LENGTH
    if limit > 100_000:  # "no limit" sentinel of some tokenizers
        limit = DEFAULT_MAX_LENGTH
    positions = getattr(model.transformer.config, "max_position_embeddings", None)
    if positions and positions > 0:
        limit = min(limit, positions)
    return int(limit)


def _check_fast(tokenizer) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"spacy-paraphrase needs a fast (Rust) tokenizer with offset mappings; "
            f"got {type(tokenizer).__name__}. Set tokenizer_config.use_fast = true, "
            "and for DeBERTa-v3 install the extras: pip install 'spacy-paraphrase[deberta]'."
        )


def pair_init(model: PairTransformerModel, X=None, Y=None) -> None:
    if model.attrs["has_transformer"]:
        return
    name = model.attrs["name"]
    source = resolve_model_name(name)
    try:
        hf_model = huggingface_from_pretrained(
            source, model._init_tokenizer_config, model._init_transformer_config
        )
    except (OSError, ValueError) as err:
        raise OSError(
            f"Could not load the transformer '{name}' (from '{source}'): {err}\n"
            + missing_backbone_hint(name)
        ) from err
    _check_fast(hf_model.tokenizer)
    model.attrs["set_transformer"](model, hf_model)
    encoding = model.tokenizer(
        ["hello world"], ["hello"], return_tensors="np", return_attention_mask=True
    )
    wordpieces = _wordpieces(model.tokenizer, encoding)
    model.layers[0].initialize(X=wordpieces)


def _wordpieces(tokenizer, encoding) -> WordpieceBatch:
    input_ids = encoding["input_ids"]
    attention_mask = encoding["attention_mask"]
    token_type_ids = encoding.get("token_type_ids")
    strings = [tokenizer.convert_ids_to_tokens(row) for row in input_ids]
    return WordpieceBatch(
        strings=strings,
        input_ids=numpy.ascontiguousarray(input_ids, dtype="i"),
        attention_mask=numpy.ascontiguousarray(attention_mask, dtype="f"),
        lengths=[int(x) for x in attention_mask.sum(axis=1)],
        token_type_ids=(
            numpy.ascontiguousarray(token_type_ids, dtype="i")
            if token_type_ids is not None
            else None
        ),
    )


def encode_pairs(tokenizer, docs: List[Doc], max_length: int):
    """Tokenize the pair Docs as text pairs and align the pieces to tokens.

    Returns (wordpieces, align, cut_tokens): a WordpieceBatch with one row per
    Doc, the Ragged token->piece alignment, and per Doc a boolean array marking
    the tokens that were cut because the pair was too long.
    """
    turns = [get_turns(doc) for doc in docs]
    firsts = [doc.text[a.start_char : a.end_char] for doc, (a, _) in zip(docs, turns)]
    seconds = [doc.text[b.start_char : b.end_char] for doc, (_, b) in zip(docs, turns)]
    encoding = tokenizer(
        firsts,
        seconds,
        add_special_tokens=True,
        truncation="longest_first",
        max_length=max_length,
        padding="longest",
        return_offsets_mapping=True,
        return_attention_mask=True,
        return_token_type_ids=None,
        return_tensors="np",
    )
    offsets_all = encoding["offset_mapping"]
    per_doc_pieces = []
    cut_tokens = []
    for i, (doc, (first, second)) in enumerate(zip(docs, turns)):
        seq_ids = numpy.asarray(
            [-1 if s is None else s for s in encoding.sequence_ids(i)], dtype="i"
        )
        offsets = numpy.array(offsets_all[i], dtype="i")
        starts = numpy.where(seq_ids == 0, first.start_char, second.start_char)
        offsets = offsets + starts[:, None]
        offsets[seq_ids < 0] = 0
        ctt = char_to_token(doc)
        pieces = token_pieces(doc, offsets, ctt)
        per_doc_pieces.append(pieces)
        cut = numpy.zeros((len(doc),), dtype="bool")
        if encoding.encodings[i].overflowing:
            for t, turn in enumerate((first, second)):
                kept = offsets[seq_ids == t]
                text = firsts[i] if t == 0 else seconds[i]
                n_full = len(tokenizer(text, add_special_tokens=False)["input_ids"])
                if len(kept) >= n_full:
                    continue
                kept_end = int(kept[:, 1].max()) if len(kept) else turn.start_char
                for token in turn:
                    if not pieces[token.i] and token.idx >= kept_end:
                        cut[token.i] = True
        cut_tokens.append(cut)
    wordpieces = _wordpieces(tokenizer, encoding)
    align = build_ragged(per_doc_pieces, wordpieces.input_ids.shape[1])
    return wordpieces, align, cut_tokens


_THREADS_CHECKED_PID: Optional[int] = None


def limit_threads_in_worker() -> None:
    """In a worker process (``nlp.pipe(n_process=...)`` forks on Linux), use
    one torch thread: torch's thread pool does not survive a fork and would
    hang. Runs once per process."""
    global _THREADS_CHECKED_PID
    pid = os.getpid()
    if _THREADS_CHECKED_PID == pid:
        return
    _THREADS_CHECKED_PID = pid
    if multiprocessing.parent_process() is not None:
        import torch

        torch.set_num_threads(1)


def pair_forward(
    model: PairTransformerModel, docs: List[Doc], is_train: bool
) -> Tuple[FullTransformerBatch, Callable]:
    limit_threads_in_worker()
    if not docs:
        return FullTransformerBatch.empty(0), lambda d: docs
    _check_fast(model.tokenizer)
    max_length = get_max_length(model)
    wordpieces, align, cut_tokens = encode_pairs(model.tokenizer, docs, max_length)
    n_cut = sum(1 for cut in cut_tokens if cut.any())
    if n_cut:
        warnings.warn(
            f"{n_cut} of {len(docs)} pair Docs in this batch are longer than the "
            f"transformer's maximum of {max_length} wordpieces and were truncated: "
            "their cut tokens get no probability (attrs['truncated'] is True on "
            "their paraphrase span group).",
            TruncationWarning,
        )
    transformer = model.layers[0]
    model_output, bp_tensors = transformer(wordpieces, is_train)
    output = PairTransformerBatch(
        spans=whole_doc_spans(docs),
        wordpieces=wordpieces,
        model_output=model_output,
        align=align,
        cut_tokens=cut_tokens,
    )

    def backprop(d_output: FullTransformerBatch) -> List[Doc]:
        bp_tensors(d_output.model_output)
        return docs

    return output, backprop


@registry.architectures("spacy_paraphrase.PairTransformerModel.v1")
def create_pair_transformer_model(
    name: str,
    tokenizer_config: dict = {"use_fast": True},
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    max_length: int = 0,
) -> Model[List[Doc], FullTransformerBatch]:
    """The pair-aware transformer, for the stock ``transformer`` component.

    name (str): Hugging Face model name or local directory; offline-packaged
        backbones are resolved by ``backbones.resolve_model_name``.
    max_length (int): most wordpieces per pair; 0 = the model's own limit.
    mixed_precision, grad_scaler_config: as in spacy-transformers (GPU only).
    """
    return PairTransformerModel(
        name,
        tokenizer_config=tokenizer_config,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
        max_length=max_length,
    )


@registry.architectures("spacy_paraphrase.PairTransformerListener.v1")
def create_pair_listener(upstream: str = "*") -> Model[List[Doc], List[TransformerData]]:
    """Listen to a ``transformer`` component earlier in the pipeline, getting
    its per-Doc ``TransformerData`` (wordpiece vectors, alignment and cut
    tokens) unpooled."""
    return TransformerListener(upstream_name=upstream)


@registry.architectures("spacy_paraphrase.PairTransformer.v1")
def create_inline_pair_transformer(
    name: str,
    tokenizer_config: dict = {"use_fast": True},
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    max_length: int = 0,
) -> Model[List[Doc], List[TransformerData]]:
    """A pair-aware transformer owned by one component (no sharing), giving
    the same per-Doc ``TransformerData`` as the listener."""
    trf = create_pair_transformer_model(
        name,
        tokenizer_config=tokenizer_config,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
        max_length=max_length,
    )
    model = chain(trf, split_trf_batch())
    model.set_ref("transformer", trf)
    return model
