"""The tokenize-and-align plan of a batch of pair Docs.

Each pair Doc's two turns are tokenized as one real text pair (the fast
tokenizer's ``text`` / ``text_pair``: ``[CLS] first [SEP] second [SEP]``, with
``token_type_ids`` where the model has them), pairs too long for the model
are cut into windows (``windows.py``), and every wordpiece is aligned back to
the Doc's tokens by character offsets (``alignment.py``).

Needs the fast tokenizer only (no torch): ``model.py`` turns the plan into
spacy-transformers' ``WordpieceBatch``.
"""
from dataclasses import dataclass
import weakref
from collections import Counter
from typing import Dict, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from thinc.types import Ragged

from ..pair_doc import get_turns
from .alignment import TextIndex, align_pieces
from .windows import pair_windows


@dataclass
class PaddedPieces:
    """A padded batch of wordpiece rows, with the fields (and dtypes) of
    spacy-transformers' ``WordpieceBatch``."""

    strings: List[List[str]]
    input_ids: numpy.ndarray
    attention_mask: numpy.ndarray
    lengths: List[int]
    token_type_ids: Optional[numpy.ndarray]


@dataclass
class PairPlan:
    """What ``encode_pairs`` returns for a batch of pair Docs.

    pieces: one padded row per sequence (a pair, or one window of a long pair).
    align: the token -> piece alignment, one entry per token in Doc order,
        indexing the flattened (rows x row length) pieces.
    cut_tokens: per Doc, a boolean array of the tokens that got no piece
        because a single window still overflowed (a token longer than a window).
    rows: per Doc, its number of sequences.
    """

    pieces: PaddedPieces
    align: Ragged
    cut_tokens: List[numpy.ndarray]
    rows: List[int]


_VOCABS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def piece_vocab(tokenizer) -> numpy.ndarray:
    """The tokenizer's piece strings by id (an object array, made once per
    tokenizer): ``convert_ids_to_tokens`` as one array lookup per batch."""
    vocab = _VOCABS.get(tokenizer)
    if vocab is None:
        strings = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        vocab = numpy.empty((len(strings),), dtype=object)
        vocab[:] = strings
        _VOCABS[tokenizer] = vocab
    return vocab


def piece_strings(tokenizer, input_ids: numpy.ndarray) -> numpy.ndarray:
    """The piece strings of an array of ids (``convert_ids_to_tokens``)."""
    vocab = piece_vocab(tokenizer)
    if input_ids.size and int(input_ids.max()) >= len(vocab):  # tokens added since
        del _VOCABS[tokenizer]
        vocab = piece_vocab(tokenizer)
    return vocab[input_ids]


def padded_pieces(tokenizer, encoding) -> PaddedPieces:
    """The rows of a padded tokenizer output (numpy arrays)."""
    input_ids = numpy.ascontiguousarray(encoding["input_ids"], dtype="i")
    attention_mask = encoding["attention_mask"]
    token_type_ids = encoding.get("token_type_ids")
    return PaddedPieces(
        strings=[row.tolist() for row in piece_strings(tokenizer, input_ids)],
        input_ids=input_ids,
        attention_mask=numpy.ascontiguousarray(attention_mask, dtype="f"),
        lengths=numpy.asarray(attention_mask).sum(axis=1).astype(int).tolist(),
        token_type_ids=(
            numpy.ascontiguousarray(token_type_ids, dtype="i") if token_type_ids is not None else None
        ),
    )


def sequence_ids(encodings) -> numpy.ndarray:
    """Per row and piece: 0 (first turn), 1 (second turn), -1 (special or padding)."""
    rows = [numpy.array(enc.sequence_ids, dtype="float32") for enc in encodings]
    width = max((len(r) for r in rows), default=0)
    out = numpy.full((len(rows), width), -1, dtype="int64")
    for i, r in enumerate(rows):
        out[i, : len(r)] = numpy.nan_to_num(r, nan=-1)
    return out


def encode_pairs(tokenizer, docs: List[Doc], max_length: int) -> PairPlan:
    """Tokenize the pair Docs as text pairs and align the pieces to tokens.

    A pair that fits in ``max_length`` pieces is one sequence. A longer pair
    is encoded as several sequences (windows, see ``windows.pair_windows``); a
    token in several windows is aligned to its pieces in all of them, so its
    vector is the mean over every window that contains it (the merge rule).
    The alignment of the whole batch is one array computation
    (``alignment.align_pieces`` over the Docs' texts laid end to end).
    """
    turns = [get_turns(doc) for doc in docs]
    texts = [doc.text for doc in docs]  # doc.text is rebuilt on every access
    firsts = [text[a.start_char : a.end_char] for text, (a, _) in zip(texts, turns)]
    seconds = [text[b.start_char : b.end_char] for text, (_, b) in zip(texts, turns)]
    first_pass = tokenizer(
        firsts,
        seconds,
        add_special_tokens=True,
        truncation="longest_first",
        max_length=max_length,
        padding="longest",
        return_offsets_mapping=True,
        return_attention_mask=True,
        return_token_type_ids=None,
        return_tensors="np",
    )
    overflowing = [bool(enc.overflowing) for enc in first_pass.encodings]
    # One row per sequence: its Doc, and where its first / second text starts in the Doc
    row_doc: List[int] = []
    row_starts: List[Tuple[int, int]] = []
    window_texts: List[Tuple[str, str]] = []
    for i, doc in enumerate(docs):
        if not overflowing[i]:
            row_doc.append(i)
            row_starts.append((turns[i][0].start_char, turns[i][1].start_char))
            continue
        for (a0, a1), (b0, b1) in pair_windows(tokenizer, doc, max_length):
            sa, sb = doc[a0].idx, doc[b0].idx
            ea = doc[a1 - 1].idx + len(doc[a1 - 1].text)
            eb = doc[b1 - 1].idx + len(doc[b1 - 1].text)
            row_doc.append(i)
            row_starts.append((sa, sb))
            window_texts.append((texts[i][sa:ea], texts[i][sb:eb]))
    if not window_texts:
        # No windows (the common case): the first pass is already one padded batch.
        padded = first_pass
        offsets = numpy.asarray(first_pass["offset_mapping"], dtype="int64")
        seq_ids = sequence_ids(first_pass.encodings)
        overflowed = numpy.zeros((len(docs),), dtype=bool)
    else:
        padded, offsets, seq_ids, overflowed = _with_windows(tokenizer, first_pass, overflowing, window_texts,
                                                             max_length, row_doc, len(docs))
    # Each piece's character range in the Docs' texts laid end to end
    index = TextIndex.of(docs, [len(t) for t in texts], texts)
    row_doc_arr = numpy.asarray(row_doc, dtype="int64")
    starts = numpy.asarray(row_starts, dtype="int64").reshape(-1, 2)
    base = index.char_base[row_doc_arr][:, None] + numpy.where(seq_ids == 0, starts[:, :1], starts[:, 1:])
    doc_end = index.char_base[row_doc_arr + 1][:, None]
    visible = seq_ids >= 0
    begin = numpy.where(visible, offsets[:, :, 0] + base, 0)
    end = numpy.where(visible, numpy.minimum(offsets[:, :, 1] + base, doc_end), 0)
    tokens, pieces = align_pieces(index, begin, end)
    n_tokens = int(index.token_base[-1])
    lengths = numpy.bincount(tokens, minlength=n_tokens)
    align = Ragged(pieces.astype("i"), lengths.astype("i"))
    cut_tokens = []
    for i, doc in enumerate(docs):
        cut = numpy.zeros((len(doc),), dtype="bool")
        if overflowed[i]:
            # Only window sequences can overflow (an overflowing whole pair is
            # replaced by its windows): then a window was still too long.
            t0 = int(index.token_base[i])
            none = (lengths[t0 : t0 + len(doc)] == 0) & ~index.is_space_token[t0 : t0 + len(doc)]
            for turn in turns[i]:
                cut[turn.start : turn.end] = none[turn.start : turn.end]
        cut_tokens.append(cut)
    rows = numpy.bincount(row_doc_arr, minlength=len(docs)).tolist()
    return PairPlan(padded_pieces(tokenizer, padded), align, cut_tokens, rows)


def _with_windows(tokenizer, first_pass, overflowing, window_texts, max_length, row_doc, n_docs):
    """The padded rows, piece offsets and sequence ids of a batch in which
    some pairs are encoded as windows (a second tokenizer call), in row order."""
    second_pass = tokenizer(
        [a for a, _ in window_texts],
        [b for _, b in window_texts],
        add_special_tokens=True,
        truncation="longest_first",
        max_length=max_length,
        return_offsets_mapping=True,
        return_attention_mask=True,
        return_token_type_ids=None,
    )
    first_seq = sequence_ids(first_pass.encodings)
    features: Dict[str, list] = {"input_ids": [], "attention_mask": []}
    if "token_type_ids" in first_pass:
        features["token_type_ids"] = []
    row_offsets, row_seq = [], []
    overflowed = numpy.zeros((n_docs,), dtype=bool)
    rows_of = Counter(row_doc)
    k = 0
    for i in sorted(rows_of):
        if not overflowing[i]:
            keep = numpy.asarray(first_pass["attention_mask"][i], dtype=bool)  # drop padding
            for key in features:
                features[key].append(numpy.asarray(first_pass[key][i])[keep].tolist())
            row_offsets.append(numpy.asarray(first_pass["offset_mapping"][i], dtype="int64")[keep])
            row_seq.append(first_seq[i][keep])
            continue
        for _ in range(rows_of[i]):
            for key in features:
                features[key].append(second_pass[key][k])
            row_offsets.append(numpy.asarray(second_pass["offset_mapping"][k], dtype="int64").reshape(-1, 2))
            row_seq.append(sequence_ids([second_pass.encodings[k]])[0])
            overflowed[i] |= bool(second_pass.encodings[k].overflowing)
            k += 1
    # Whole pairs and windows come from two tokenizer calls: pad them
    # together (silencing the hint about calling __call__ instead).
    getattr(tokenizer, "deprecation_warnings", {})["Asking-to-pad-a-fast-tokenizer"] = True
    padded = tokenizer.pad(features, padding="longest", return_tensors="np")
    width = padded["input_ids"].shape[1]
    offsets = numpy.zeros((len(row_offsets), width, 2), dtype="int64")
    seq_ids = numpy.full((len(row_offsets), width), -1, dtype="int64")
    for r, (offs, seq) in enumerate(zip(row_offsets, row_seq)):
        offsets[r, : len(offs)] = offs
        seq_ids[r, : len(seq)] = seq
    return padded, offsets, seq_ids, overflowed
