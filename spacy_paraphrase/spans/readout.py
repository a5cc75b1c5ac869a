"""The readout: how per-token probabilities become ``doc.cats`` and
``doc.spans`` (README.md, "What the component writes")."""
from typing import List

import numpy
from spacy.tokens import Doc, Span, SpanGroup

from ..pair_doc import get_turns, runs_to_spans
from .model import TokenScores

SOURCE_LABEL = "SOURCE"
PARAPHRASE_LABEL = "PARAPHRASE"
HIGHLIGHT_SCALES = ("absolute", "turn_max")


def fill_unscored(doc: Doc, scores: TokenScores) -> numpy.ndarray:
    """Token probabilities for the whole Doc, applying the documented rule to
    tokens without wordpieces. NaN for cut tokens and tokens outside turns."""
    probs = numpy.full((len(doc),), numpy.nan, dtype="float32")
    for turn in get_turns(doc):
        p = scores.probs[turn.start : turn.end]
        has = scores.n_pieces[turn.start : turn.end] > 0
        cut = scores.cut[turn.start : turn.end]
        out = numpy.where(has, p, numpy.nan).astype("float32")
        if not has.all():
            n = len(out)
            prev = numpy.full((n,), numpy.nan, dtype="float32")
            nxt = numpy.full((n,), numpy.nan, dtype="float32")
            last = numpy.nan
            for i in range(n):
                if has[i]:
                    last = out[i]
                prev[i] = last
            last = numpy.nan
            for i in range(n - 1, -1, -1):
                if has[i]:
                    last = out[i]
                nxt[i] = last
            fill = numpy.fmin(prev, nxt)
            fill = numpy.where(numpy.isnan(prev) | numpy.isnan(nxt), 0.0, fill)
            out = numpy.where(has, out, fill).astype("float32")
            out[cut] = numpy.nan
        probs[turn.start : turn.end] = out
    return probs


def pair_score_from_probs(doc: Doc, probs: numpy.ndarray) -> float:
    """min over the two turns of the max token probability (0 for a turn with
    no probability at all)."""
    best = []
    for turn in get_turns(doc):
        p = probs[turn.start : turn.end]
        p = p[~numpy.isnan(p)]
        best.append(float(p.max()) if len(p) else 0.0)
    return min(best)


def check_highlight_scale(scale: str) -> str:
    if scale not in HIGHLIGHT_SCALES:
        raise ValueError(f"Unknown highlight_scale {scale!r}: choose one of {HIGHLIGHT_SCALES}")
    return scale


def highlight_flags(
    doc: Doc, probs: numpy.ndarray, threshold: float, scale: str = "absolute"
) -> numpy.ndarray:
    """Which tokens of a pair Doc are highlighted (bool per token): probability
    >= ``threshold`` (``scale="absolute"``), or >= ``threshold`` times the
    highest probability in the token's turn (``scale="turn_max"``; a turn whose
    maximum is not > 0 gets nothing). Tokens without probability (NaN) and
    tokens outside the turns are never highlighted."""
    check_highlight_scale(scale)
    p = numpy.nan_to_num(numpy.asarray(probs, dtype="float32"), nan=-1.0)
    if scale == "absolute":
        return p >= threshold
    flags = numpy.zeros((len(doc),), dtype=bool)
    for turn in get_turns(doc):
        seg = p[turn.start : turn.end]
        top = float(seg.max()) if len(seg) else -1.0
        if top > 0:
            flags[turn.start : turn.end] = seg >= threshold * top
    return flags


def highlight_runs(
    doc: Doc, probs: numpy.ndarray, threshold: float, scale: str = "absolute"
) -> List[Span]:
    """Maximal runs of highlighted tokens (``highlight_flags``) within each
    turn, labelled SOURCE (first turn) and PARAPHRASE (second turn)."""
    flags = highlight_flags(doc, probs, threshold, scale)
    spans: List[Span] = []
    for label, turn in zip((SOURCE_LABEL, PARAPHRASE_LABEL), get_turns(doc)):
        spans.extend(runs_to_spans(doc, flags, turn.start, turn.end, label))
    return spans


def write_paraphrase_annotations(
    doc: Doc,
    probs: numpy.ndarray,
    *,
    spans_key: str,
    cats_key: str,
    threshold: float,
    highlight_threshold: float,
    highlight_scale: str = "absolute",
    n_cut: int = 0,
    n_windows: int = 1,
) -> None:
    """Write spans, span scores, token probabilities and the pair score."""
    pair_score = pair_score_from_probs(doc, probs)
    spans = (
        highlight_runs(doc, probs, highlight_threshold, highlight_scale)
        if pair_score >= threshold
        else []
    )
    group = SpanGroup(doc, name=spans_key, spans=spans)
    group.attrs["scores"] = [float(numpy.nanmean(probs[s.start : s.end])) for s in spans]
    group.attrs["token_probs"] = probs
    group.attrs["pair_score"] = pair_score
    # The pair score read as the predicted share of annotators who would call
    # the pair a paraphrase (calibrated to that share by soft training), and
    # how clear-cut that call is: 1.0 = all would agree, 0.0 = an even split.
    group.attrs["vote_share"] = pair_score
    group.attrs["agreement"] = abs(2.0 * pair_score - 1.0)
    group.attrs["truncated"] = bool(n_cut > 0)
    group.attrs["n_cut_tokens"] = int(n_cut)
    group.attrs["n_windows"] = int(n_windows)
    doc.spans[spans_key] = group
    doc.cats[cats_key] = pair_score


def token_probs(doc: Doc, spans_key: str = "paraphrase") -> numpy.ndarray:
    """The stored per-token probabilities of a processed pair Doc."""
    group = doc.spans.get(spans_key)
    if group is None or "token_probs" not in group.attrs:
        raise ValueError(
            f"doc.spans['{spans_key}'] has no token probabilities: run the "
            "paraphrase_spans component (with this spans_key) on the Doc first."
        )
    return numpy.asarray(group.attrs["token_probs"], dtype="float32")
