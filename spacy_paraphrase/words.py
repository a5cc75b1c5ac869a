"""Words: the whitespace-separated words of a turn and the tokens that make each one.

A turn given as a string is tokenized by spaCy, which splits punctuation off
("Rome." -> "Rome", "."); a turn given as a list of words keeps one token per word,
as ContextDeP's annotations (and ConvoKit's per-word metadata) count them. The
paraphrase tagger scores *words*: every token gets the vector pooled over all the
wordpieces of its word (`widen_alignment`), so both inputs give each word the same
probability and a lone "." never carries a probability of its own.

A word is a maximal run of tokens with no whitespace between them inside one turn
(`str.split()` words of the turn's text); a whitespace token is a word of its own
(it has no wordpieces and gets no probability of its own).
"""
from typing import List, Optional, Tuple

import numpy
from spacy.attrs import IS_SPACE, SPACY
from spacy.tokens import Doc
from thinc.types import Ragged

from .pair_doc import get_turns, is_pair_doc


def word_index(doc: Doc) -> numpy.ndarray:
    """Per token: the index (0, 1, ...) of the word it belongs to in ``doc``."""
    n = len(doc)
    if n == 0:
        return numpy.zeros((0,), dtype="int32")
    arr = doc.to_array([SPACY, IS_SPACE]).astype(bool)
    trailing_space, is_space = arr[:, 0], arr[:, 1]
    starts = numpy.zeros((n,), dtype=bool)
    starts[0] = True
    starts[1:] = trailing_space[:-1] | is_space[1:] | is_space[:-1]
    if is_pair_doc(doc):
        for turn_span in get_turns(doc):
            if turn_span.start < n:
                starts[turn_span.start] = True
            if turn_span.end < n:
                starts[turn_span.end] = True
    return (numpy.cumsum(starts) - 1).astype("int32")


def word_bounds(doc: Doc, index: Optional[numpy.ndarray] = None) -> List[Tuple[int, int]]:
    """``(token_start, token_end)`` of every word of ``doc``, in order
    (``index``: ``word_index(doc)`` when the caller has it)."""
    if index is None:
        index = word_index(doc)
    if len(index) == 0:
        return []
    starts = numpy.flatnonzero(numpy.diff(index, prepend=-1))
    ends = numpy.append(starts[1:], len(index))
    return list(zip(starts.tolist(), ends.tolist()))


def widen_alignment(doc: Doc, align: Ragged) -> Ragged:
    """Give every token of a multi-token word the union of the word's wordpieces.

    ``align`` is spacy-transformers' token -> wordpiece alignment of one Doc. When
    every word is one token (word-list input) it is returned unchanged, so models
    trained on word lists see exactly what they saw in training."""
    index = word_index(doc)
    if len(index) == 0 or index[-1] + 1 == len(index):
        return align
    lengths = numpy.asarray(align.lengths, dtype="int64")
    data = numpy.asarray(align.dataXd, dtype="int64").ravel()
    offsets = numpy.concatenate([[0], numpy.cumsum(lengths)])
    new_lengths = lengths.copy()
    pieces = [data[offsets[i]: offsets[i + 1]] for i in range(len(lengths))]
    for start, end in word_bounds(doc, index):
        if end - start > 1:
            union = numpy.unique(numpy.concatenate(pieces[start:end]))
            for i in range(start, end):
                pieces[i] = union
                new_lengths[i] = len(union)
    flat = numpy.concatenate(pieces) if pieces else numpy.zeros((0,), dtype="int64")
    return Ragged(flat.astype(align.dataXd.dtype), new_lengths.astype(align.lengths.dtype))


def word_first_piece(doc: Doc, first_piece: numpy.ndarray) -> numpy.ndarray:
    """Per token, the first wordpiece of its word: the smallest of its word's
    tokens' first pieces (``first_piece``: one per token, -1 = none; the
    pair transformer's ``plan.first_piece_of_tokens``), -1 when the word has
    none. Word-list input (one token per word) is returned unchanged."""
    first = numpy.asarray(first_piece, dtype="int64")
    index = word_index(doc)
    if len(index) == 0 or index[-1] + 1 == len(index):
        return first
    starts = numpy.flatnonzero(numpy.diff(index, prepend=-1))
    big = numpy.iinfo("int64").max
    per_word = numpy.minimum.reduceat(numpy.where(first >= 0, first, big), starts)
    out = per_word[index]
    return numpy.where(out == big, -1, out)


def word_values(doc: Doc, values: numpy.ndarray,
                bounds: Optional[List[Tuple[int, int]]] = None) -> numpy.ndarray:
    """One value per word: the largest of its tokens' values (NaN only if all
    are NaN). ``bounds``: ``word_bounds(doc)`` when the caller has them."""
    if bounds is None:
        bounds = word_bounds(doc)
    out = numpy.full((len(bounds),), numpy.nan, dtype="float32")
    for w, (start, end) in enumerate(bounds):
        chunk = values[start:end]
        if not numpy.isnan(chunk).all():
            out[w] = numpy.nanmax(chunk)
    return out


def token_map(source: Doc, target: Doc) -> List[List[int]]:
    """For each token of ``target``, the tokens of ``source`` (a Doc of the same
    text, tokenized differently) that overlap it: its non-whitespace ones when
    it has any, else the whitespace ones. How results on a string Doc are read
    word by word on a word-list Doc of the same pair."""
    if source.text != target.text:
        raise ValueError("token_map needs two Docs of the same text")
    out: List[List[int]] = []
    i = 0
    for tok in target:
        start, end = tok.idx, tok.idx + len(tok.text)
        while i < len(source) and source[i].idx + len(source[i].text) <= start:
            i += 1
        hits = []
        j = i
        while j < len(source) and source[j].idx < end:
            hits.append(j)
            j += 1
        words = [k for k in hits if not source[k].is_space]
        out.append(words or hits)
    return out
