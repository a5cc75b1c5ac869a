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
from typing import List, Sequence

import numpy
from spacy.tokens import Doc


def char_to_token(doc: Doc) -> numpy.ndarray:
    """Per character of ``doc.text``: the index of the token it belongs to, or
    -1 for whitespace between tokens and for whitespace tokens."""
    ctt = numpy.full((len(doc.text),), -1, dtype="int32")
    for token in doc:
        if not token.is_space:
            ctt[token.idx : token.idx + len(token.text)] = token.i
    return ctt


def token_pieces(
    doc: Doc, offsets: Sequence[Sequence[int]], ctt: numpy.ndarray = None
) -> List[List[int]]:
    """For each token of ``doc``, the indices of the pieces aligned to it.

    offsets: one ``(start, end)`` character range per piece, in ``doc.text``
        coordinates. ``start >= end`` means the piece has no text.
    """
    text = doc.text
    if ctt is None:
        ctt = char_to_token(doc)
    n_chars = len(text)
    result: List[List[int]] = [[] for _ in range(len(doc))]
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
                result[a].append(j)
        else:
            for t in numpy.unique(ctt[s:e]):
                if t >= 0:
                    result[t].append(j)
    return result
