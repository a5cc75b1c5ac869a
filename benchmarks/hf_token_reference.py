"""Plain Hugging Face token classification over a turn pair: the reference
that ``run_speed`` times as system (b) and ``run_hf_reference`` trains.

An ``AutoModelForTokenClassification`` with 2 labels reads the two turns'
words as a text pair (``is_split_into_words``); each word is represented by
its first piece (labels on first pieces, -100 elsewhere; probabilities read
back from first pieces). Words without a piece (empty, or cut by truncation)
get no label and a NaN probability. A pair is a paraphrase when some word of
*both* turns is likely: the pair score is the min over turns of the max word
probability (the ContextDeP paper's rule).

A pair is given as ``(first_words, second_words)``. This module imports
neither spaCy nor this package, so the speed workers that use it stay free of
both.
"""
from typing import List, Optional, Sequence, Tuple

import numpy
import torch

NUM_LABELS = 2
Pair = Tuple[Sequence[str], Sequence[str]]
FirstPieces = Tuple[List[int], List[int]]


def load(source: str):
    """The fast tokenizer and a fresh 2-label token-classification head on
    the backbone ``source`` (a Hugging Face name or local directory)."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True)
    model = AutoModelForTokenClassification.from_pretrained(source, num_labels=NUM_LABELS)
    return tokenizer, model


def tokenize(tokenizer, pairs: Sequence[Pair], max_length: Optional[int] = None):
    """One padded batch encoding of the pairs (truncated to ``max_length``,
    or to the tokenizer's maximum when None)."""
    return tokenizer(
        [first for first, _ in pairs],
        [second for _, second in pairs],
        is_split_into_words=True,
        truncation=True,
        max_length=max_length,
        padding="longest",
        return_tensors="pt",
    )


def first_piece_index(enc, i: int, n_first: int, n_second: int) -> FirstPieces:
    """For pair i of a batch encoding: per word of each turn, the index of its
    first piece (-1 for words without pieces: empty or cut)."""
    idx = ([-1] * n_first, [-1] * n_second)
    prev = None
    for j, (w, s) in enumerate(zip(enc.word_ids(i), enc.sequence_ids(i))):
        if w is None or s is None:
            prev = None
            continue
        if (s, w) != prev:
            idx[s][w] = j
            prev = (s, w)
    return idx


def encode(tokenizer, pairs: Sequence[Pair], max_length: Optional[int] = None):
    """The batch encoding and, per pair, each word's first piece."""
    enc = tokenize(tokenizer, pairs, max_length)
    first_pieces = [first_piece_index(enc, i, len(a), len(b)) for i, (a, b) in enumerate(pairs)]
    return enc, first_pieces


def labels(enc, first_pieces: Sequence[FirstPieces], targets) -> "torch.Tensor":
    """Training labels: 1 / 0 (target >= 0.5 or not) on each word's first
    piece, -100 elsewhere. ``targets``: per pair, the two turns' word targets."""
    out = torch.full(enc["input_ids"].shape, -100, dtype=torch.long)
    for i, (pieces, turn_targets) in enumerate(zip(first_pieces, targets)):
        for idx, values in zip(pieces, turn_targets):
            for j, t in zip(idx, values):
                if j >= 0:
                    out[i, j] = int(t >= 0.5)
    return out


def word_probs(probs: numpy.ndarray, pieces: FirstPieces) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """One pair's word probabilities per turn, read from its pieces'
    probabilities (NaN for words without a piece)."""
    turns = []
    for idx in pieces:
        idx = numpy.asarray(idx)
        w = numpy.full(len(idx), numpy.nan, dtype="float32")
        has = idx >= 0
        w[has] = probs[idx[has]]
        turns.append(w)
    return turns[0], turns[1]


def pair_score(turns: Sequence[numpy.ndarray]) -> float:
    """Min over turns of the max word probability (0.0 for a turn without
    scored words)."""
    return min(float(numpy.max(t[~numpy.isnan(t)])) if (~numpy.isnan(t)).any() else 0.0 for t in turns)


def predict_batch(tokenizer, model, pairs: Sequence[Pair], max_length: Optional[int] = None, device=None):
    """The whole inference job for one batch: per pair, the two turns' word
    probabilities. Call it under ``torch.inference_mode()``."""
    enc, first_pieces = encode(tokenizer, pairs, max_length)
    if device is not None:
        enc = enc.to(device)
    probs = torch.softmax(model(**enc).logits, dim=-1)[..., 1].float().cpu().numpy()
    return [word_probs(probs[i], pieces) for i, pieces in enumerate(first_pieces)]
