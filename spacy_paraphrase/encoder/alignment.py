"""Aligning wordpieces to spaCy tokens through character offsets.

spacy-transformers' ``get_alignment_via_offset_mapping`` gives a token the next
word's piece when the tokenizer's offsets include the leading space, as
sentencepiece tokenizers (DeBERTa-v3, XLM-R) report them (spaCy #13730). Here a
piece's character range is first stripped of surrounding whitespace, then the
piece is aligned to every token whose (non-whitespace) characters it covers.
This gives every token exactly its own pieces for both offset styles:

- BERT style: ``"Hello world"`` -> ``(0, 5), (6, 11)``
- sentencepiece style: ``"Hello world"`` -> ``(0, 5), (5, 11)`` (``"▁world"``)

Pieces with an empty range (special tokens, padding, a lone ``"▁"``) align to
no token. Whitespace tokens never receive a piece.
"""
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IDX, IS_SPACE, LENGTH
from spacy.tokens import Doc


def char_to_token(doc: Doc, n_chars: Optional[int] = None) -> numpy.ndarray:
    """Per character of ``doc.text``: the index of the token it belongs to, or
    -1 for whitespace between tokens and for whitespace tokens.

    n_chars: ``len(doc.text)`` when the caller has it (``doc.text`` is rebuilt
        from the tokens on every access)."""
    if n_chars is None:
        n_chars = len(doc.text)
    ctt = numpy.full((n_chars,), -1, dtype="int32")
    if len(doc) == 0:
        return ctt
    arr = doc.to_array([IDX, LENGTH, IS_SPACE]).astype("int64")
    keep = arr[:, 2] == 0
    starts, lengths = arr[keep, 0], arr[keep, 1]
    token_ids = numpy.nonzero(keep)[0]
    # positions covered by each token: start + 0..length-1
    pos = numpy.repeat(starts - numpy.cumsum(lengths) + lengths, lengths) + numpy.arange(int(lengths.sum()))
    ctt[pos] = numpy.repeat(token_ids, lengths)
    return ctt


def token_pieces(
    doc: Doc,
    offsets: Sequence[Sequence[int]],
    ctt: numpy.ndarray = None,
    text: Optional[str] = None,
) -> List[List[int]]:
    """For each token of ``doc``, the indices of the pieces aligned to it.

    offsets: one ``(start, end)`` character range per piece, in ``doc.text``
        coordinates. ``start >= end`` means the piece has no text.
    ctt, text: ``char_to_token(doc)`` and ``doc.text``, when the caller has them.
    """
    if text is None:
        text = doc.text
    if ctt is None:
        ctt = char_to_token(doc, len(text))
    result: List[List[int]] = [[] for _ in range(len(doc))]
    for t, j in piece_tokens(offsets, ctt, text):
        result[t].append(j)
    return result


def piece_tokens(offsets: Sequence[Sequence[int]], ctt: numpy.ndarray, text: str) -> Iterator[Tuple[int, int]]:
    """``(token, piece)`` for each piece and each token it is aligned to, in
    piece order (``token_pieces`` without a list per token of the Doc: the
    cost follows the pieces, so many windows of one long Doc stay linear)."""
    n_chars = len(text)
    for j, (s, e) in enumerate(offsets):
        s = int(s)
        e = min(int(e), n_chars)
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s >= e:
            continue
        a = ctt[s]
        b = ctt[e - 1]
        if a == b:
            if a >= 0:
                yield int(a), j
        else:
            for t in numpy.unique(ctt[s:e]):
                if t >= 0:
                    yield int(t), j
