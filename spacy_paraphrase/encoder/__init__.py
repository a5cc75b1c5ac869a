"""The pair transformer: each pair Doc's two turns encoded as one text pair
(docs/architecture.md, "The pair encoder").

alignment.py (pieces to tokens), windows.py (long pairs), plan.py
(tokenize and align a batch), batching.py (sub-batches by length), shim.py
(torch workarounds), quantize.py (int8 inference), model.py
(``PairTransformerModel``), architectures.py (the registered names).
"""
from ..lazy import lazy_exports

# imported on first use (spacy_paraphrase/lazy.py)
_EXPORTS = {
    "char_to_token": ".alignment",
    "token_pieces": ".alignment",
    "pair_windows": ".windows",
    "piece_counts": ".windows",
    "token_windows": ".windows",
    "PaddedPieces": ".plan",
    "PairPlan": ".plan",
    "encode_pairs": ".plan",
    "DEFAULT_MAX_PADDING": ".batching",
    "padding_groups": ".batching",
    "run_transformer": ".batching",
    "QuantizationError": ".quantize",
    "PairHFShim": ".shim",
    "limit_threads_in_worker": ".shim",
    "set_quantize": ".shim",
    "DEFAULT_MAX_LENGTH": ".model",
    "PairTransformerBatch": ".model",
    "PairTransformerModel": ".model",
    "TruncationWarning": ".model",
    "check_transformer_output": ".model",
    "get_max_length": ".model",
    "tok2vec_width": ".model",
    "create_inline_pair_transformer": ".architectures",
    "create_pair_listener": ".architectures",
    "create_pair_transformer_model": ".architectures",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
