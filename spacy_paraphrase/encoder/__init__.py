"""The pair transformer: each pair Doc's two turns encoded as one text pair
(docs/architecture.md, "The pair encoder").

alignment.py (pieces to tokens), windows.py (long pairs), plan.py
(tokenize and align a batch); the model itself is still in
``spacy_paraphrase/pair_transformer.py``.
"""
from .alignment import char_to_token, token_pieces
from .windows import pair_windows, piece_counts, token_windows
from .plan import PaddedPieces, PairPlan, encode_pairs

__all__ = [
    "char_to_token",
    "token_pieces",
    "piece_counts",
    "token_windows",
    "pair_windows",
    "PaddedPieces",
    "PairPlan",
    "encode_pairs",
]
