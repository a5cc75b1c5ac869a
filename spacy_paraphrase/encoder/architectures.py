"""The registered architectures of the pair transformer (names and parameters
in docs/api.md, "Registered names"). ``PairTransformerModel.v1`` and
``PairTransformer.v1`` take every setting, ``quantize`` included
(``quantize.py``; "" by default, the fp32 transformer)."""
from typing import List

from spacy.tokens import Doc
from spacy.util import SimpleFrozenDict, registry
from . import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
from spacy_transformers.data_classes import FullTransformerBatch, TransformerData
from spacy_transformers.layers import TransformerListener, split_trf_batch
from thinc.api import Model, chain

from .batching import DEFAULT_MAX_PADDING
from .model import DEFAULT_PIECE_LIMIT, PairTransformerModel
from .quantize import check_quantize
from .shim import set_quantize

@registry.architectures("spacy_paraphrase.PairTransformerModel.v1")
def create_pair_transformer_model(
    name: str,
    tokenizer_config: dict = SimpleFrozenDict(use_fast=True),
    transformer_config: dict = SimpleFrozenDict(),
    mixed_precision: bool = False,
    grad_scaler_config: dict = SimpleFrozenDict(),
    max_length: int = 0,
    max_padding: float = DEFAULT_MAX_PADDING,
    quantize: str = "",
    long_pairs: str = "windows",
    token_types: str = "pair",
    piece_limit: int = DEFAULT_PIECE_LIMIT,
) -> Model[List[Doc], FullTransformerBatch]:
    """The pair-aware transformer, for the stock ``transformer`` component.

    name (str): Hugging Face model name or local directory; offline-packaged
        backbones are resolved by ``backbones.resolve.resolve_backbone`` (README, "Backbones").
    max_length (int): most wordpieces per pair; 0 = what ``truncation=True``
        cuts at with this tokenizer and model (``model.get_max_length``).
    max_padding (float): run each batch in sub-batches of similar length whose
        padding is at most this share of their pieces (1.0 = one forward pass
        per batch, as spacy-transformers does). Same outputs, less compute.
    mixed_precision, grad_scaler_config: as in spacy-transformers (GPU only).
    quantize (str): "" = the fp32 transformer as trained (the default); "int8" =
        dynamic int8 quantization of its Linear layers when the weights are
        loaded, one activation scale per batch; "int8-token" = int8 weights per
        output channel and activations per token (slower than "int8", keeps
        quality on backbones with outlier activations such as
        all-mpnet-base-v2); "int8-smooth" = "int8-token" with the activations
        smoothed by a calibration saved with the weights (``quantize --method
        int8-smooth --calibrate PAIRS``; ``quantize.py``). Inference on CPU only; training raises an error. Override it at
        load time: ``spacy.load(path, config={"components.transformer.model.quantize": "int8-token"})``.
    long_pairs (str): a pair over ``max_length`` pieces: "windows" (every token
        scored, the default) or "truncate" (cut at the end, the ContextDeP
        authors' inference; ``plan.LONG_PAIRS``).
    token_types (str): "pair" (0 / 1 for the two turns, the default) or
        "single" (all 0, the authors' one-sequence input; ``plan.TOKEN_TYPES``).
    piece_limit (int): with "truncate" and a tokenizer that cuts nothing (the
        authors' DeBERTa-v3), a pair is one sequence up to this many pieces
        and windowed past it (2048: a guard against the memory of attention
        over absurd turns; docs/paper-model.md, "Long turns").
    """
    model = PairTransformerModel(
        name,
        tokenizer_config=tokenizer_config,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
        max_length=max_length,
        max_padding=max_padding,
        long_pairs=long_pairs,
        token_types=token_types,
        piece_limit=piece_limit,
    )
    return set_quantize(model, check_quantize(quantize))


@registry.architectures("spacy_paraphrase.PairTransformerListener.v1")
def create_pair_listener(upstream: str = "*") -> Model[List[Doc], List[TransformerData]]:
    """Listen to a ``transformer`` component earlier in the pipeline, getting
    its per-Doc ``TransformerData`` (wordpiece vectors, alignment and cut
    tokens) unpooled."""
    return TransformerListener(upstream_name=upstream)


@registry.architectures("spacy_paraphrase.PairTransformer.v1")
def create_inline_pair_transformer(
    name: str,
    tokenizer_config: dict = SimpleFrozenDict(use_fast=True),
    transformer_config: dict = SimpleFrozenDict(),
    mixed_precision: bool = False,
    grad_scaler_config: dict = SimpleFrozenDict(),
    max_length: int = 0,
    max_padding: float = DEFAULT_MAX_PADDING,
    quantize: str = "",
    long_pairs: str = "windows",
    token_types: str = "pair",
    piece_limit: int = DEFAULT_PIECE_LIMIT,
) -> Model[List[Doc], List[TransformerData]]:
    """A pair-aware transformer owned by one component (no sharing), giving
    the same per-Doc ``TransformerData`` as the listener; the settings are
    those of ``PairTransformerModel.v1``."""
    trf = create_pair_transformer_model(
        name,
        tokenizer_config=tokenizer_config,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
        max_length=max_length,
        max_padding=max_padding,
        quantize=quantize,
        long_pairs=long_pairs,
        token_types=token_types,
        piece_limit=piece_limit,
    )
    model = chain(trf, split_trf_batch())
    model.set_ref("transformer", trf)
    return model
