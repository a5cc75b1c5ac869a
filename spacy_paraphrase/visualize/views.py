"""What a picture shows, independent of where it came from: a pair view.

A ``PairView`` holds the two turns of a pair as plain text with character
offsets: the words to shade (with the value that sets the shade and a tooltip)
and the spans to outline, plus the pair's score, the decision threshold, the
decision, the margin (score − threshold), the vote share and the agreement. Pair
Docs (``pair_view_from_doc``) and annotate records (``record_views.py``) are turned
into views; ``markup.py`` draws them. What a processed Doc carries is the
README's contract ("What the component writes"); gold Docs are described in
``converters/contextdep.py``.
"""
import math
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy
from spacy.tokens import Doc, Span

from ..annotate.record_format import decide
from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, TURNS_KEY, get_turns
from ..paraphrase_spans.vote_share import annotator_agreement

# What the shade of a word means (PairView.shading).
SHADE_PROBABILITY = "probability"  # token_probs written by paraphrase_spans
SHADE_ANNOTATORS = "annotators"  # share of annotators who highlighted the word (gold)
SHADE_TARGET = "target"  # token_targets of a reference Doc without vote counts
SHADE_NONE = "none"  # nothing to shade (spans only)

SHADING_LEGEND = {
    SHADE_PROBABILITY: "predicted probability that the word is part of the paraphrase",
    SHADE_ANNOTATORS: "share of annotators who highlighted the word (gold)",
    SHADE_TARGET: "training target of the word (gold)",
}


@dataclass
class Word:
    """One shaded word: ``text[start:end]`` of its turn. ``value`` in [0, 1],
    or NaN for a word without a value (drawn unshaded and marked)."""

    start: int
    end: int
    value: float
    title: str


@dataclass
class Mark:
    """One span to outline: ``text[start:end]`` of its turn."""

    start: int
    end: int
    label: str
    score: Optional[float] = None


@dataclass
class TurnView:
    speaker: str
    text: str
    words: List[Word] = field(default_factory=list)
    spans: List[Mark] = field(default_factory=list)


@dataclass
class PairView:
    pair_id: str
    turns: Tuple[TurnView, TurnView]
    shading: str = SHADE_NONE
    gold: bool = False
    score: Optional[float] = None
    score_name: str = "score"
    decision: Optional[bool] = None
    # The pair threshold the decision was made with (model output): given, or
    # pair score − margin; None when unknown.
    threshold: Optional[float] = None
    # pair score − threshold: how far the decision is from flipping.
    margin: Optional[float] = None
    # Model output: the predicted share of annotators calling the pair a
    # paraphrase (gold Docs show the observed share as their score).
    vote_share: Optional[float] = None
    # Model: s² + (1 − s)² of the predicted share; gold: the observed share of
    # annotator pairs that agree (annotator_agreement(k, n)).
    agreement: Optional[float] = None
    notes: List[str] = field(default_factory=list)
    lang: str = ""
    direction: str = "ltr"


def is_missing(value: Optional[float]) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def clamp01(value: float) -> float:
    """``value`` clipped to [0, 1]; NaN stays NaN."""
    if math.isnan(value):
        return value
    return min(1.0, max(0.0, value))


def pair_view_from_doc(
    doc: Doc,
    index: int = 0,
    *,
    spans_key: str = SPANS_KEY,
    cats_key: str = PARAPHRASE_LABEL,
    threshold: Optional[float] = None,
) -> PairView:
    """The view of a pair Doc: processed by ``paraphrase_spans`` (words shaded by
    ``token_probs``), or a converted gold Doc (shaded by the share of
    annotators who highlighted each word). Raises PairDocError for a Doc that
    is not a pair Doc."""
    first, second = get_turns(doc)
    group = doc.spans[spans_key] if spans_key in doc.spans else None
    attrs = dict(group.attrs) if group is not None else {}
    pair_id = doc.spans[TURNS_KEY].attrs.get("id")
    view = PairView(
        pair_id=str(pair_id) if pair_id is not None else f"pair {index + 1}",
        turns=(_turn_view(first), _turn_view(second)),
        lang=doc.lang_ or "",
        direction=doc.vocab.writing_system.get("direction", "ltr"),
    )
    if group is None:
        view.notes.append(f"no doc.spans[{spans_key!r}] on this Doc")
        view.score = _cat(doc, cats_key)
        return view
    for turn_view, turn_span in zip(view.turns, (first, second)):
        turn_view.spans = _marks(turn_span, list(group), attrs.get("scores"))
    if "token_probs" in attrs:
        _model_meta(view, doc, group, attrs, cats_key, threshold)
        values = numpy.asarray(attrs["token_probs"], dtype="float64")
        _check_length(values, doc, "token_probs")
        for turn_view, turn_span in zip(view.turns, (first, second)):
            turn_view.words = _words(turn_span, values, _probability_title)
    elif "highlight_counts" in attrs and "votes" in attrs:
        _gold_meta(view, doc, attrs, cats_key)
        counts = numpy.asarray(attrs["highlight_counts"], dtype="float64")
        _check_length(counts, doc, "highlight_counts")
        k, n = (int(v) for v in attrs["votes"])
        for turn_view, turn_span in zip(view.turns, (first, second)):
            turn_view.words = _words(
                turn_span,
                counts / n if n > 0 else numpy.full(len(doc), numpy.nan),
                lambda i, v, c=counts: _annotators_title(int(c[i]), k, n),
            )
        view.shading = SHADE_ANNOTATORS
    elif "token_targets" in attrs:
        view.gold = True
        view.score = _cat(doc, cats_key)
        view.decision = None if view.score is None else view.score >= 0.5
        values = numpy.asarray(attrs["token_targets"], dtype="float64")
        _check_length(values, doc, "token_targets")
        for turn_view, turn_span in zip(view.turns, (first, second)):
            turn_view.words = _words(turn_span, values, lambda i, v: f"target {v:.2f}")
        view.shading = SHADE_TARGET
    else:
        view.score = _cat(doc, cats_key)
        view.decision = decide(view.score, threshold=threshold).is_paraphrase
    return view


def _turn_view(turn_span: Span) -> TurnView:
    return TurnView(speaker=turn_span.label_, text=turn_span.text)


def _check_length(values: numpy.ndarray, doc: Doc, name: str) -> None:
    if values.shape != (len(doc),):
        raise ValueError(
            f"attrs[{name!r}] has {values.size} values for a Doc of {len(doc)} tokens."
        )


def _words(turn_span: Span, values: numpy.ndarray, title) -> List[Word]:
    words = []
    for token in turn_span:
        start = token.idx - turn_span.start_char
        value = clamp01(float(values[token.i]))
        text = title(token.i, value) if not math.isnan(value) else _NAN_TITLE
        words.append(Word(start, start + len(token.text), value, text))
    return words


_NAN_TITLE = "no probability (token cut from an over-long pair)"


def _probability_title(i: int, value: float) -> str:
    return f"p = {value:.2f}"


def _annotators_title(count: int, k: int, n: int) -> str:
    share = count / n if n else float("nan")
    text = f"highlighted by {count} of {n} annotators ({share:.2f})"
    if k:
        text += f"; {count} of the {k} who found a paraphrase"
    return text


def _marks(turn_span: Span, spans: List[Span], scores) -> List[Mark]:
    """The spans (clipped to the turn) as character offsets in the turn."""
    marks = []
    for j, span in enumerate(spans):
        start, end = max(span.start, turn_span.start), min(span.end, turn_span.end)
        if start >= end:
            continue
        score = None
        if scores is not None and j < len(scores) and not is_missing(scores[j]):
            score = float(scores[j])
        doc = turn_span.doc
        begin = doc[start].idx - turn_span.start_char
        stop = doc[end - 1].idx + len(doc[end - 1].text) - turn_span.start_char
        marks.append(Mark(begin, stop, span.label_, score))
    return marks


def _cat(doc: Doc, cats_key: str) -> Optional[float]:
    value = doc.cats.get(cats_key)
    return None if value is None else float(value)


def _model_meta(view: PairView, doc: Doc, group, attrs: dict, cats_key: str, threshold) -> None:
    view.shading = SHADE_PROBABILITY
    score = attrs.get("pair_score", _cat(doc, cats_key))
    view.score = None if is_missing(score) else float(score)
    view.score_name = "pair score"
    margin = attrs.get("margin")
    margin = None if is_missing(margin) else float(margin)
    # A given threshold wins; else the component's, from the margin it stored
    # (the Doc keeps no decision of its own: the decision is then margin >= 0).
    decision, view.threshold, view.margin = decide(view.score, margin, None, threshold)
    # Docs written before the margin existed: the component writes spans only
    # for pairs that pass its threshold, so the spans are the decision.
    view.decision = decision if decision is not None else len(group) > 0
    share = attrs.get("vote_share")
    view.vote_share = None if is_missing(share) else float(share)
    agreement = attrs.get("agreement")
    view.agreement = None if is_missing(agreement) else float(agreement)
    if attrs.get("truncated"):
        view.notes.append(f"{int(attrs.get('n_cut_tokens', 0))} token(s) without probability (cut)")


def _gold_meta(view: PairView, doc: Doc, attrs: dict, cats_key: str) -> None:
    view.gold = True
    k, n = (int(v) for v in attrs["votes"])
    view.score = k / n if n else None
    view.score_name = "vote share"
    # The observed counterpart of the model's agreement: the share of the
    # n(n-1)/2 annotator pairs that agree (None for fewer than 2 annotators).
    view.agreement = annotator_agreement(k, n)
    cat = _cat(doc, cats_key)
    view.decision = cat >= 0.5 if cat is not None else (2 * k >= n if n else None)
    view.notes.append(f"{k} of {n} annotators found a paraphrase")
    if "annotator" in attrs:
        view.notes.append(f"outlined: annotator {attrs['annotator']}'s highlight")
