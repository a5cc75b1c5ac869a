"""Windows for pairs longer than the model's maximum length.

A pair with more wordpieces than ``max_length`` is encoded as several
sequences: the longer turn is cut into overlapping windows of whole tokens,
each encoded against the whole other turn (or, when both turns are long,
against the matching window of the other turn). Every token of both turns is
in at least one window; ``plan.encode_pairs`` aligns a token to its pieces in
all of them (its vector is their mean). Only a single token longer than a
whole window can still lose pieces (README, "What the component writes").

Needs the fast tokenizer only (no torch).
"""
from typing import List, Tuple

import numpy
from spacy.tokens import Doc, Span

from ..pair_doc import get_turns
from .alignment import TextIndex, align_pieces

# (first-turn token range, second-turn token range) in Doc token offsets
WindowPair = Tuple[Tuple[int, int], Tuple[int, int]]


def piece_counts(tokenizer, doc: Doc, turn: Span) -> numpy.ndarray:
    """Wordpieces per token of one turn, tokenized alone (no special tokens)."""
    full = doc.text
    text = full[turn.start_char : turn.end_char]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = numpy.asarray(enc["offset_mapping"], dtype="i").reshape(-1, 2) + turn.start_char
    index = TextIndex.of([doc], [len(full)], [full])
    tokens, _ = align_pieces(index, offsets[:, 0], offsets[:, 1])
    return numpy.bincount(tokens, minlength=len(doc))[turn.start : turn.end].astype("i")


def token_windows(counts: numpy.ndarray, size: int, overlap: int) -> List[Tuple[int, int]]:
    """Cut a turn (pieces per token) into windows of whole tokens holding at
    most ``size`` pieces, each overlapping the previous by about ``overlap``
    pieces. Returns (start, end) token offsets within the turn; together they
    cover every token. A single token with more pieces than ``size`` is a
    window of its own (the tokenizer then cuts its tail)."""
    n = len(counts)
    windows: List[Tuple[int, int]] = []
    a = 0
    while a < n:
        b = a
        total = 0
        while b < n and (b == a or total + counts[b] <= size):
            total += int(counts[b])
            b += 1
        windows.append((a, b))
        if b >= n:
            break
        # step back from b while the overlap stays within budget, but move on
        nxt = b
        back = 0
        while nxt - 1 > a and back + counts[nxt - 1] <= overlap:
            nxt -= 1
            back += int(counts[nxt])
        a = nxt
    return windows


def pair_windows(tokenizer, doc: Doc, max_length: int) -> List[WindowPair]:
    """Windows for a pair too long for the model: the longer turn is cut into
    overlapping windows, each encoded against the whole other turn when that
    fits in half the budget, else against the matching window of the other
    turn (windows of the two turns are paired in order, so every window of
    both turns is encoded at least once). Returns ((a_start, a_end),
    (b_start, b_end)) Doc token ranges, one per sequence."""
    first, second = get_turns(doc)
    budget = max(2, max_length - tokenizer.num_special_tokens_to_add(pair=True))
    ca = piece_counts(tokenizer, doc, first)
    cb = piece_counts(tokenizer, doc, second)
    na, nb = int(ca.sum()), int(cb.sum())
    if na + nb <= budget:
        return [((first.start, first.end), (second.start, second.end))]
    half = budget // 2
    if min(na, nb) <= half:
        if na <= nb:
            size_a, size_b = max(na, 1), budget - max(na, 1)
        else:
            size_b, size_a = max(nb, 1), budget - max(nb, 1)
    else:
        size_a = size_b = half
    wa = token_windows(ca, size_a, size_a // 4)
    wb = token_windows(cb, size_b, size_b // 4)
    m = max(len(wa), len(wb))
    out = []
    for j in range(m):
        a0, a1 = wa[j * len(wa) // m]
        b0, b1 = wb[j * len(wb) // m]
        out.append(((first.start + a0, first.start + a1), (second.start + b0, second.start + b1)))
    return out
