"""The pair transformer: each pair Doc's two turns encoded as one text pair
(docs/architecture.md, "The pair encoder").

alignment.py (pieces to tokens), windows.py (long pairs), plan.py
(tokenize and align a batch), batching.py (sub-batches by length), shim.py
(torch workarounds), quantize.py (int8 inference), model.py
(``PairTransformerModel``), architectures.py (the registered names).
"""
from .alignment import char_to_token, token_pieces
from .windows import pair_windows, piece_counts, token_windows
from .plan import PaddedPieces, PairPlan, encode_pairs
from .batching import DEFAULT_MAX_PADDING, padding_groups, run_transformer
from .quantize import QuantizationError
from .shim import PairHFShim, limit_threads_in_worker, set_quantize
from .model import (
    DEFAULT_MAX_LENGTH,
    PairTransformerBatch,
    PairTransformerModel,
    TruncationWarning,
    check_transformer_output,
    get_max_length,
    tok2vec_width,
)
from .architectures import (
    create_inline_pair_transformer,
    create_inline_pair_transformer_v2,
    create_pair_listener,
    create_pair_transformer_model,
    create_pair_transformer_model_v2,
)

__all__ = [
    "char_to_token",
    "token_pieces",
    "piece_counts",
    "token_windows",
    "pair_windows",
    "PaddedPieces",
    "PairPlan",
    "encode_pairs",
    "DEFAULT_MAX_PADDING",
    "padding_groups",
    "run_transformer",
    "PairHFShim",
    "limit_threads_in_worker",
    "QuantizationError",
    "set_quantize",
    "DEFAULT_MAX_LENGTH",
    "PairTransformerBatch",
    "PairTransformerModel",
    "TruncationWarning",
    "check_transformer_output",
    "get_max_length",
    "tok2vec_width",
    "create_pair_transformer_model",
    "create_pair_listener",
    "create_inline_pair_transformer",
    "create_pair_transformer_model_v2",
    "create_inline_pair_transformer_v2",
]
