"""The tokenize-and-align plan of a batch of pair Docs.

Each pair Doc's two turns are tokenized as one real text pair (the fast
tokenizer's ``text`` / ``text_pair``: ``[CLS] first [SEP] second [SEP]``, with
``token_type_ids`` where the model has them), pairs too long for the model
are cut into windows (the section "Windows"), and every wordpiece is aligned back to
the Doc's tokens by character offsets (the section "Aligning", first).

Needs the fast tokenizer only (no torch): ``model.py`` turns the plan into
spacy-transformers' ``WordpieceBatch``.
"""
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IDX, IS_SPACE, LENGTH
from spacy.tokens import Doc, Span
from thinc.types import Ragged

from ..pair_doc import get_turns


# ----------------------------------------------------------------------------
# Aligning wordpieces to spaCy tokens through character offsets, as array
# operations over a whole batch (no Python loop per wordpiece).
#
# spacy-transformers' ``get_alignment_via_offset_mapping`` gives a token the next
# word's piece when the tokenizer's offsets include the leading space, as
# sentencepiece tokenizers (DeBERTa-v3, XLM-R) report them (spaCy #13730). Here a
# piece's character range is first stripped of surrounding whitespace, then the
# piece is aligned to every token whose (non-whitespace) characters it covers.
# This gives every token exactly its own pieces for both offset styles:
#
# - BERT style: ``"Hello world"`` -> ``(0, 5), (6, 11)``
# - sentencepiece style: ``"Hello world"`` -> ``(0, 5), (5, 11)`` (``"▁world"``)
#
# Pieces with an empty range (special tokens, padding, a lone ``"▁"``) align to
# no token. Whitespace tokens never receive a piece.
#
# ``TextIndex`` over the concatenated texts of a batch's Docs, then
# ``align_pieces``: what ``plan.encode_pairs`` uses.
# ----------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------
# Windows for pairs longer than the model's maximum length.
#
# A pair with more wordpieces than ``max_length`` is encoded as several
# sequences: the longer turn is cut into overlapping windows of whole tokens,
# each encoded against the whole other turn (or, when both turns are long,
# against the matching window of the other turn). Every token of both turns is
# in at least one window; ``encode_pairs`` aligns a token to its pieces in
# all of them (its vector is their mean). Only a single token longer than a
# whole window can still lose pieces (README, "What the component writes").
# ----------------------------------------------------------------------------

# (first-turn token range, second-turn token range) in Doc token offsets
WindowPair = Tuple[Tuple[int, int], Tuple[int, int]]


def piece_counts(tokenizer, doc: Doc, turn_span: Span) -> numpy.ndarray:
    """Wordpieces per token of one turn, tokenized alone (no special tokens)."""
    full = doc.text
    text = full[turn_span.start_char : turn_span.end_char]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = numpy.asarray(enc["offset_mapping"], dtype="i").reshape(-1, 2) + turn_span.start_char
    index = TextIndex.of([doc], [len(full)], [full])
    tokens, _ = align_pieces(index, offsets[:, 0], offsets[:, 1])
    return numpy.bincount(tokens, minlength=len(doc))[turn_span.start : turn_span.end].astype("i")


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


# ----------------------------------------------------------------------------
# The plan of a batch: tokenize, cut into windows, align (the module docstring).
# ----------------------------------------------------------------------------

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
    windows_per_doc: per Doc, its number of sequences (1: the whole pair; more: its windows).
    first_piece: per token in Doc order, its first piece (flat index as in
        ``align``; -1: none): what the tagger's ``pooling = "first"`` reads.
    """

    pieces: PaddedPieces
    align: Ragged
    cut_tokens: List[numpy.ndarray]
    windows_per_doc: List[int]
    first_piece: Optional[numpy.ndarray] = None  # int64 per token: ``first_piece_of_tokens``


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


# How a pair longer than the model's maximum length is encoded (the
# transformer's ``long_pairs`` setting): "windows" (this project's default,
# every token scored) or "truncate" (the ContextDeP authors' inference: one
# sequence cut at ``max_length`` pieces from its end, as their single
# ``first words + ["[SEP]"] + second words`` sequence with ``truncation=True``
# is cut; the tokens past the cut get no piece and are marked cut).
LONG_PAIRS = ("windows", "truncate")
# Which token type ids the pieces carry (the ``token_types`` setting): "pair"
# (0 for the first turn, 1 for the second: a real text pair, this project's
# default) or "single" (all 0, as the authors' one-sequence input gives them;
# the same ids otherwise). Only models with token-type embeddings (BERT) see
# the difference; DeBERTa-v3 has none.
TOKEN_TYPES = ("pair", "single")


def check_long_pairs(value: str) -> str:
    if value not in LONG_PAIRS:
        raise ValueError(f"Unknown long_pairs {value!r}: choose one of {LONG_PAIRS}")
    return value


def check_token_types(value: str) -> str:
    if value not in TOKEN_TYPES:
        raise ValueError(f"Unknown token_types {value!r}: choose one of {TOKEN_TYPES}")
    return value


def encode_pairs(tokenizer, docs: List[Doc], max_length: int, long_pairs: str = "windows",
                 token_types: str = "pair") -> PairPlan:
    """Tokenize the pair Docs as text pairs and align the pieces to tokens.

    A pair that fits in ``max_length`` pieces is one sequence. A longer pair
    is encoded as several sequences (windows, see ``windows.pair_windows``); a
    token in several windows is aligned to its pieces in all of them, so its
    vector is the mean over every window that contains it (the merge rule).
    With ``long_pairs="truncate"`` it is one sequence cut at ``max_length``
    (``LONG_PAIRS``). ``token_types``: ``TOKEN_TYPES``.
    The alignment of the whole batch is one array computation
    (``alignment.align_pieces`` over the Docs' texts laid end to end).
    """
    check_long_pairs(long_pairs)
    check_token_types(token_types)
    turns = [get_turns(doc) for doc in docs]
    texts = [doc.text for doc in docs]  # doc.text is rebuilt on every access
    firsts = [text[a.start_char : a.end_char] for text, (a, _) in zip(texts, turns)]
    seconds = [text[b.start_char : b.end_char] for text, (_, b) in zip(texts, turns)]
    truncate = long_pairs == "truncate"
    first_pass = tokenizer(
        firsts,
        seconds,
        add_special_tokens=True,
        truncation=False if truncate else "longest_first",
        max_length=None if truncate else max_length,
        padding="longest",
        return_offsets_mapping=True,
        return_attention_mask=True,
        return_token_type_ids=None,
        return_tensors="np",
        verbose=False,
    )
    if truncate:
        first_pass, cut_rows = _truncate_tail(first_pass, max_length)
        overflowing = [False] * len(docs)
    else:
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
    if truncate:
        padded = first_pass
        offsets = numpy.asarray(first_pass["offset_mapping"], dtype="int64")
        seq_ids = first_pass["sequence_ids"]
        overflowed = cut_rows
    elif not window_texts:
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
    tokens, aligned_pieces = align_pieces(index, begin, end)
    n_tokens = int(index.token_base[-1])
    lengths = numpy.bincount(tokens, minlength=n_tokens)
    align = Ragged(aligned_pieces.astype("i"), lengths.astype("i"))
    cut_tokens = []
    for i, doc in enumerate(docs):
        cut = numpy.zeros((len(doc),), dtype="bool")
        if overflowed[i]:
            # Only window sequences can overflow (an overflowing whole pair is
            # replaced by its windows): then a window was still too long.
            t0 = int(index.token_base[i])
            none = (lengths[t0 : t0 + len(doc)] == 0) & ~index.is_space_token[t0 : t0 + len(doc)]
            for turn_span in turns[i]:
                cut[turn_span.start : turn_span.end] = none[turn_span.start : turn_span.end]
        cut_tokens.append(cut)
    windows_per_doc = numpy.bincount(row_doc_arr, minlength=len(docs)).tolist()
    first = first_piece_of_tokens(tokens, aligned_pieces, n_tokens, seq_ids)
    padded_rows = padded_pieces(tokenizer, padded)
    if token_types == "single" and padded_rows.token_type_ids is not None:
        padded_rows.token_type_ids = numpy.zeros_like(padded_rows.token_type_ids)
    return PairPlan(padded_rows, align, cut_tokens, windows_per_doc, first)


def first_piece_of_tokens(tokens: numpy.ndarray, pieces: numpy.ndarray, n_tokens: int,
                          seq_ids: numpy.ndarray) -> numpy.ndarray:
    """Per token (batch order), its first piece: the smallest piece aligned to
    it, or the piece just before that one when that piece is text of a turn
    aligned to no token (a sentencepiece tokenizer's lone ``"▁"`` before a word
    it has no ``"▁word"`` piece for: ``"▁", "each"``). The tokenizer counts
    such a piece as the word's first sub-word (``word_ids``), and the ContextDeP
    authors read each word there; the alignment (``align_pieces``) leaves it
    out because it covers only whitespace. -1 for a token with no piece.

    tokens, pieces: the (token, piece) pairs of ``align_pieces``, sorted by
        token then piece. seq_ids: per row and piece, the sequence id (-1:
        special or padding)."""
    first = numpy.full((n_tokens,), -1, dtype="int64")
    if len(tokens) == 0:
        return first
    bounds = numpy.flatnonzero(numpy.diff(tokens, prepend=-1))
    first[tokens[bounds]] = pieces[bounds]
    flat_seq = numpy.asarray(seq_ids).ravel()
    width = seq_ids.shape[1] if seq_ids.ndim == 2 else len(flat_seq)
    aligned = numpy.zeros((len(flat_seq),), dtype=bool)
    aligned[pieces] = True
    orphans = numpy.flatnonzero((flat_seq >= 0) & ~aligned)
    orphans = orphans[(orphans + 1) % max(width, 1) != 0]  # has a next piece in its row
    if len(orphans):
        # the token each piece starts: the first token aligned to it
        token_of = numpy.full((len(flat_seq),), -1, dtype="int64")
        token_of[pieces[::-1]] = tokens[::-1]
        nxt = orphans + 1
        t = token_of[nxt]
        lead = (t >= 0) & (flat_seq[nxt] == flat_seq[orphans])
        lead[lead] &= first[t[lead]] == nxt[lead]  # the token's first piece follows it
        first[t[lead]] = orphans[lead]
    return first


def _truncate_tail(encoding, max_length: int):
    """The rows of an untruncated, padded pair encoding cut as the authors'
    one sequence is cut (``truncation=True``): a row longer than
    ``max_length`` keeps its first ``max_length - 1`` pieces and its final
    special token (so the cut falls in the second turn, or in the first turn
    when that alone is too long, and then the second turn is lost).
    Returns the cut arrays (a dict with ``sequence_ids`` added) and, per row,
    whether it was cut."""
    mask = numpy.asarray(encoding["attention_mask"])
    lengths = mask.sum(axis=1).astype("int64")
    seq_ids = sequence_ids(encoding.encodings)
    out = {key: numpy.array(encoding[key]) for key in ("input_ids", "attention_mask", "offset_mapping")
           if key in encoding}
    if "token_type_ids" in encoding:
        out["token_type_ids"] = numpy.array(encoding["token_type_ids"])
    out["sequence_ids"] = seq_ids
    cut_rows = lengths > max_length
    if cut_rows.any():
        last = max_length - 1
        for r in numpy.flatnonzero(cut_rows):
            end = int(lengths[r]) - 1  # the row's final special token
            for key in out:
                out[key][r, last] = out[key][r, end]
        out = {key: value[:, :max_length] for key, value in out.items()}
    return out, cut_rows


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
    windows_per_doc = Counter(row_doc)
    k = 0
    for i in sorted(windows_per_doc):
        if not overflowing[i]:
            keep = numpy.asarray(first_pass["attention_mask"][i], dtype=bool)  # drop padding
            for key in features:
                features[key].append(numpy.asarray(first_pass[key][i])[keep].tolist())
            row_offsets.append(numpy.asarray(first_pass["offset_mapping"][i], dtype="int64")[keep])
            row_seq.append(first_seq[i][keep])
            continue
        for _ in range(windows_per_doc[i]):
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
