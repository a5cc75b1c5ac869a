"""Aligning wordpieces to spaCy tokens through character offsets, as array
operations over a whole batch (no Python loop per wordpiece).

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

The batch form (``TextIndex`` over the concatenated texts of many Docs, then
``align_pieces``) is what ``plan.encode_pairs`` uses; ``token_pieces`` is the
same rule for one Doc, as lists.
"""
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IDX, IS_SPACE, LENGTH
from spacy.tokens import Doc

# str.isspace of the ASCII characters (\t \n \v \f \r, \x1c-\x1f, space)
_ASCII_SPACE = numpy.array([chr(c).isspace() for c in range(128)], dtype=bool)


def space_chars(text: str) -> numpy.ndarray:
    """Per character of ``text``: ``str.isspace`` (bool array)."""
    codes = numpy.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    out = numpy.zeros((len(codes),), dtype=bool)
    low = codes < 128
    out[low] = _ASCII_SPACE[codes[low]]
    if not low.all():
        high = ~low
        uniq, inverse = numpy.unique(codes[high], return_inverse=True)
        table = numpy.fromiter((chr(c).isspace() for c in uniq.tolist()), dtype=bool, count=len(uniq))
        out[high] = table[inverse]
    return out


def char_to_token(doc: Doc, n_chars: Optional[int] = None) -> numpy.ndarray:
    """Per character of ``doc.text``: the index of the token it belongs to, or
    -1 for whitespace between tokens and for whitespace tokens.

    n_chars: ``len(doc.text)`` when the caller has it (``doc.text`` is rebuilt
        from the tokens on every access)."""
    if n_chars is None:
        n_chars = len(doc.text)
    return TextIndex.of([doc], [n_chars]).char_token


@dataclass
class TextIndex:
    """The characters and tokens of one or more Docs laid end to end (their
    texts concatenated, their tokens numbered on): what ``align_pieces``
    needs. ``char_base[i]`` / ``token_base[i]`` is where Doc ``i`` starts."""

    char_token: numpy.ndarray  # int64 per character: its token, -1 for whitespace
    is_space_char: numpy.ndarray  # bool per character
    is_space_token: numpy.ndarray  # bool per token
    char_base: numpy.ndarray  # int64, one per Doc (+ the total at the end)
    token_base: numpy.ndarray  # int64, one per Doc (+ the total at the end)

    @classmethod
    def of(cls, docs: Sequence[Doc], n_chars: Sequence[int], texts: Optional[Sequence[str]] = None) -> "TextIndex":
        """The index of ``docs`` (``n_chars``: the length of each Doc's text;
        ``texts``: the texts, when the whitespace of the characters is wanted)."""
        char_base = numpy.concatenate([[0], numpy.cumsum(n_chars, dtype="int64")])
        token_base = numpy.concatenate([[0], numpy.cumsum([len(d) for d in docs], dtype="int64")])
        arrays = [d.to_array([IDX, LENGTH, IS_SPACE]).reshape(-1, 3).astype("int64") for d in docs]
        arr = numpy.concatenate(arrays) if arrays else numpy.zeros((0, 3), dtype="int64")
        doc_of_token = numpy.repeat(numpy.arange(len(docs)), numpy.diff(token_base))
        starts = arr[:, 0] + char_base[:-1][doc_of_token]
        lengths = arr[:, 1]
        is_space_token = arr[:, 2] != 0
        keep = ~is_space_token
        ctt = numpy.full((int(char_base[-1]),), -1, dtype="int64")
        starts, lengths = starts[keep], lengths[keep]
        # every character of every kept token: start + 0..length-1
        pos = numpy.repeat(starts - numpy.cumsum(lengths) + lengths, lengths) + numpy.arange(int(lengths.sum()))
        ctt[pos] = numpy.repeat(numpy.flatnonzero(keep), lengths)
        is_space_char = space_chars("".join(texts)) if texts is not None else numpy.zeros((0,), dtype=bool)
        return cls(ctt, is_space_char, is_space_token, char_base, token_base)


def align_pieces(index: TextIndex, starts: numpy.ndarray, ends: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Every (token, piece) pair of the alignment rule (module docstring).

    starts, ends: one character range per piece in ``index`` coordinates
        (arrays of any shape; a piece is its flat position); ``start >= end``
        means the piece has no text. Needs ``index.is_space_char``.
    Returns two int64 arrays, tokens and pieces, sorted by token then piece.
    """
    n = len(index.char_token)
    s = numpy.clip(numpy.asarray(starts, dtype="int64").ravel(), 0, n)
    e = numpy.clip(numpy.asarray(ends, dtype="int64").ravel(), 0, n)
    positions = numpy.arange(n, dtype="int64")
    # the first non-space character at or after c; one past the last before c
    next_visible = numpy.append(
        numpy.minimum.accumulate(numpy.where(index.is_space_char, n, positions)[::-1])[::-1], n)
    end_visible = numpy.concatenate(
        [[0], numpy.maximum.accumulate(numpy.where(index.is_space_char, 0, positions + 1))]) if n else numpy.zeros((1,), "int64")
    s = next_visible[s]
    e = end_visible[e]
    pieces = numpy.flatnonzero(s < e)
    s, e = s[pieces], e[pieces]
    first = index.char_token[s]
    last = index.char_token[e - 1]
    # A visible character belongs to a token that is not whitespace, so a
    # piece covers the tokens first..last, less the whitespace tokens between.
    counts = last - first + 1
    tokens = numpy.repeat(first, counts) + (
        numpy.arange(int(counts.sum())) - numpy.repeat(numpy.cumsum(counts) - counts, counts))
    pieces = numpy.repeat(pieces, counts)
    keep = ~index.is_space_token[tokens]
    tokens, pieces = tokens[keep], pieces[keep]
    order = numpy.lexsort((pieces, tokens))
    return tokens[order], pieces[order]


def token_pieces(doc: Doc, offsets: Sequence[Sequence[int]], text: Optional[str] = None) -> List[List[int]]:
    """For each token of ``doc``, the indices of the pieces aligned to it.

    offsets: one ``(start, end)`` character range per piece, in ``doc.text``
        coordinates. ``start >= end`` means the piece has no text.
    text: ``doc.text`` when the caller has it.
    """
    if text is None:
        text = doc.text
    index = TextIndex.of([doc], [len(text)], [text])
    offsets = numpy.asarray(offsets, dtype="int64").reshape(-1, 2)
    tokens, pieces = align_pieces(index, offsets[:, 0], offsets[:, 1])
    bounds = numpy.searchsorted(tokens, numpy.arange(len(doc) + 1))
    flat = pieces.tolist()
    return [flat[bounds[i]:bounds[i + 1]] for i in range(len(doc))]
