"""Span decoding: how the highlighted tokens of a turn become the spans a
reader sees. The paper's plain rule makes every maximal run of highlighted
tokens a span, which on a model's noisy probabilities gives confetti (many
one-word spans such as "the", "a", "to"). The phrase settings turn the runs of
a turn into phrases, in this order:

1. ``max_gap``: two runs separated by at most this many tokens become one
   span (the gap tokens join it);
2. ``trim_edges``: tokens at a span's edges that are whitespace, punctuation
   or stop words (of the Doc's language, compared without attached
   punctuation: "the," is one) are dropped;
3. ``min_span_length``: spans with fewer words (tokens that are not
   whitespace or punctuation) are dropped (0: none is);
4. ``max_spans``: only the spans with the largest probability mass (sum of
   their token probabilities) are kept, at most this many per turn (0 = all).

With ``max_gap = 0``, ``trim_edges = False``, ``min_span_length = 0`` and
``max_spans = 0`` (the defaults) nothing changes: the paper's plain rule. The
settings are cfg keys of ``paraphrase_spans`` (``Readout``), tuned on dev by
``tune`` / ``cross-tune`` from the stored probabilities.
"""
import functools
import string
from typing import FrozenSet, List, Sequence, Tuple

import numpy
from spacy.tokens import Doc, Span, Token
from spacy.util import get_lang_class

from ..pair_doc import run_bounds

_STRIP = string.punctuation + "\u2018\u2019\u201c\u201d\u2013\u2014\u2026"


@functools.lru_cache(maxsize=None)
def stop_words(lang: str) -> FrozenSet[str]:
    """The stop words of a spaCy language (empty for a language without a list)."""
    try:
        return frozenset(w.lower() for w in get_lang_class(lang).Defaults.stop_words)
    except Exception:  # an unknown or custom language code
        return frozenset()


def is_filler(token: Token) -> bool:
    """Whitespace, punctuation, or a stop word once attached punctuation is removed."""
    if token.is_space or token.is_punct:
        return True
    word = token.text.strip().strip(_STRIP).lower()
    return not word or word in stop_words(token.doc.lang_)


def is_word(token: Token) -> bool:
    """A token that counts towards ``min_span_length``: not whitespace, not punctuation."""
    return not (token.is_space or token.is_punct or not token.text.strip(_STRIP + " "))


def decode_turn(
    doc: Doc,
    flags: Sequence[bool],
    probs: numpy.ndarray,
    start: int,
    end: int,
    label: str,
    *,
    max_gap: int = 0,
    min_span_length: int = 0,
    max_spans: int = 0,
    trim_edges: bool = False,
) -> List[Span]:
    """The spans of one turn ``doc[start:end]`` from its highlighted tokens
    (``flags``), by the steps of the module doc, in text order."""
    found = run_bounds(flags, start, end)
    merged: List[Tuple[int, int]] = []
    for s, e in found:
        if merged and s - merged[-1][1] <= max_gap:
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    kept: List[Tuple[int, int]] = []
    for s, e in merged:
        if trim_edges:
            while s < e and is_filler(doc[s]):
                s += 1
            while e > s and is_filler(doc[e - 1]):
                e -= 1
        if e > s and (min_span_length <= 0 or sum(is_word(doc[i]) for i in range(s, e)) >= min_span_length):
            kept.append((s, e))
    if max_spans > 0 and len(kept) > max_spans:
        p = numpy.nan_to_num(numpy.asarray(probs, dtype="float64"), nan=0.0)
        mass = [float(p[s:e].sum()) for s, e in kept]
        best = sorted(range(len(kept)), key=lambda i: (-mass[i], i))[:max_spans]
        kept = [kept[i] for i in sorted(best)]
    return [Span(doc, s, e, label=label) for s, e in kept]


def check_decoding(max_gap: object, min_span_length: object, max_spans: object, trim_edges: object) -> None:
    """Raise ValueError for settings of the wrong type or range."""
    for name, value, low in (("max_gap", max_gap, 0), ("min_span_length", min_span_length, 0),
                             ("max_spans", max_spans, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or value < low:
            raise ValueError(f"Readout {name} must be an integer >= {low}, got {value!r}")
    if not isinstance(trim_edges, (bool, numpy.bool_)):
        raise ValueError(f"Readout trim_edges must be true or false, got {trim_edges!r}")
