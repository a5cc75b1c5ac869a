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
from typing import List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from thinc.types import Ragged

from ..pair_doc import get_turns
from .alignment import char_to_token, piece_tokens
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


def padded_pieces(tokenizer, encoding) -> PaddedPieces:
    """The rows of a padded tokenizer output (numpy arrays)."""
    input_ids = encoding["input_ids"]
    attention_mask = encoding["attention_mask"]
    token_type_ids = encoding.get("token_type_ids")
    return PaddedPieces(
        strings=[tokenizer.convert_ids_to_tokens(row) for row in input_ids],
        input_ids=numpy.ascontiguousarray(input_ids, dtype="i"),
        attention_mask=numpy.ascontiguousarray(attention_mask, dtype="f"),
        lengths=[int(x) for x in attention_mask.sum(axis=1)],
        token_type_ids=(
            numpy.ascontiguousarray(token_type_ids, dtype="i") if token_type_ids is not None else None
        ),
    )


def encode_pairs(tokenizer, docs: List[Doc], max_length: int) -> PairPlan:
    """Tokenize the pair Docs as text pairs and align the pieces to tokens.

    A pair that fits in ``max_length`` pieces is one sequence. A longer pair
    is encoded as several sequences (windows, see ``windows.pair_windows``); a
    token in several windows is aligned to its pieces in all of them, so its
    vector is the mean over every window that contains it (the merge rule).
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
    # (doc index, first-turn char start, second-turn char start, (pass, encoding index))
    sequences = []
    window_texts: List[Tuple[str, str]] = []
    for i, (doc, (first, second)) in enumerate(zip(docs, turns)):
        if not first_pass.encodings[i].overflowing:
            sequences.append((i, first.start_char, second.start_char, ("first", i)))
            continue
        for (a0, a1), (b0, b1) in pair_windows(tokenizer, doc, max_length):
            sa, sb = doc[a0].idx, doc[b0].idx
            ea = doc[a1 - 1].idx + len(doc[a1 - 1].text)
            eb = doc[b1 - 1].idx + len(doc[b1 - 1].text)
            sequences.append((i, sa, sb, ("window", len(window_texts))))
            window_texts.append((texts[i][sa:ea], texts[i][sb:eb]))
    second_pass = None
    if window_texts:
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
    features = {"input_ids": [], "attention_mask": []}
    if "token_type_ids" in first_pass:
        features["token_type_ids"] = []
    seq_offsets = []
    overflowed = []
    for doc_i, start_a, start_b, (source, k) in sequences:
        enc = first_pass if source == "first" else second_pass
        if second_pass is not None:
            keep = numpy.asarray(enc["attention_mask"][k], dtype=bool)  # drop padding
            for key in features:
                features[key].append(numpy.asarray(enc[key][k])[keep].tolist())
        seq_ids = numpy.asarray([-1 if x is None else x for x in enc.sequence_ids(k)], dtype="i")
        offsets = numpy.asarray(enc["offset_mapping"][k], dtype="i").reshape(-1, 2)
        offsets = offsets + numpy.where(seq_ids == 0, start_a, start_b)[:, None]
        offsets[seq_ids < 0] = 0
        seq_offsets.append(offsets)
        overflowed.append(bool(enc.encodings[k].overflowing))
    if second_pass is None:
        # No windows (the common case): the first pass is already one padded batch.
        padded = {key: first_pass[key] for key in features}
    else:
        # Whole pairs and windows come from two tokenizer calls: pad them
        # together (silencing the hint about calling __call__ instead).
        getattr(tokenizer, "deprecation_warnings", {})["Asking-to-pad-a-fast-tokenizer"] = True
        padded = tokenizer.pad(features, padding="longest", return_tensors="np")
    row_length = padded["input_ids"].shape[1]
    rows_per_doc = [0] * len(docs)
    per_doc: List[List[List[int]]] = [[[] for _ in range(len(doc))] for doc in docs]
    doc_overflow = [False] * len(docs)
    ctts = [char_to_token(doc, len(text)) for doc, text in zip(docs, texts)]
    for row, ((doc_i, _, _, _), offsets, over) in enumerate(zip(sequences, seq_offsets, overflowed)):
        base = row * row_length
        tokens = per_doc[doc_i]
        for t, j in piece_tokens(offsets, ctts[doc_i], texts[doc_i]):
            tokens[t].append(base + j)
        rows_per_doc[doc_i] += 1
        # Only window sequences can overflow (an overflowing whole pair is
        # replaced by its windows): then a window was still too long.
        doc_overflow[doc_i] = doc_overflow[doc_i] or over
    cut_tokens = []
    for doc_i, doc in enumerate(docs):
        cut = numpy.zeros((len(doc),), dtype="bool")
        if doc_overflow[doc_i]:
            for turn in turns[doc_i]:
                for token in turn:
                    if not per_doc[doc_i][token.i] and not token.is_space:
                        cut[token.i] = True
        cut_tokens.append(cut)
    lengths: List[int] = []
    flat: List[int] = []
    for doc_pieces in per_doc:
        for js in doc_pieces:
            lengths.append(len(js))
            flat.extend(sorted(js))
    align = Ragged(numpy.asarray(flat, dtype="i"), numpy.asarray(lengths, dtype="i"))
    return PairPlan(padded_pieces(tokenizer, padded), align, cut_tokens, rows_per_doc)
