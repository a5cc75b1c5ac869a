"""Annotate records (one JSON object per turn pair, see docs/annotate.md) as
pair views.

A record gives span offsets into each *utterance's* own text, while a turn's
text is its utterances' texts joined by one space: where each utterance
starts in its turn is the turn's ``"offsets"``, read through the record codec
(``dialogs.turns.Turn.from_json``; a one-utterance turn may omit them). A
turn whose offsets do not fit it, a span whose ``"text"`` disagrees with the
turn's text there, or a word of ``"words"`` at another place than its
offsets say raises a ValueError naming the record. A span cut in two at an
utterance boundary is drawn as one again.
"""
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..annotate.record_format import (AGREEMENT, CONVERSATION_ID, FIRST, IS_PARAPHRASE, MARGIN, PAIR_ID, RECORD_FIELDS,
                                      SCORE, SECOND, SIDES, SPAN_FIELDS, SPANS, TURN_FIELDS, VOTE_SHARE, WORD_FIELDS,
                                      WORDS, as_number,
                                      record_decision)
from ..dialogs.turns import Turn
from ..pair_doc import PARAPHRASE_LABEL
from ..paraphrase_spans.readout import SOURCE_LABEL
from .views import Mark, PairView, SHADE_NONE, SHADE_PROBABILITY, TurnView, Word, clamp01

DEFAULT_SPEAKERS = ("FIRST", "SECOND")
_WORD = re.compile(r"\S+")
# The record's keys are read from its fields (``annotate/record_format.py``:
# ``RECORD_FIELDS``). These are the fields a view draws; any other field with a
# plain value (text, number, yes/no) is shown as a note, "key value", so that a
# field added to the record is seen here too.
DRAWN = (PAIR_ID, CONVERSATION_ID, FIRST, SECOND, SCORE, IS_PARAPHRASE, VOTE_SHARE, AGREEMENT, MARGIN, SPANS, WORDS)
PLAIN = (str, int, float, bool)


def pair_view_from_record(
    record: Mapping, index: int = 0, *, threshold: Optional[float] = None
) -> PairView:
    """The view of one annotate record (see the module doc)."""
    if not isinstance(record, Mapping):
        raise ValueError(f"An annotate record must be a JSON object, got {type(record).__name__}.")
    pair_id = record.get(PAIR_ID.key)
    name = f"annotate record {pair_id!r}" if pair_id is not None else f"annotate record {index + 1}"
    words = record.get(WORDS.key) or {}
    if not isinstance(words, Mapping):
        raise ValueError(f"{name}: {WORDS.key!r} must be an object with {SIDES[0]!r} and {SIDES[1]!r} lists.")
    spans = record.get(SPANS.key) or []
    if not isinstance(spans, list) or not all(isinstance(s, Mapping) for s in spans):
        raise ValueError(f"{name}: {SPANS.key!r} must be a list of objects.")
    for span in spans:
        if span.get(SPAN_FIELDS.side) not in SIDES:
            raise ValueError(f"{name}: a span's {SPAN_FIELDS.side!r} must be {SIDES[0]!r} or {SIDES[1]!r}, "
                             f"got {span.get(SPAN_FIELDS.side)!r}.")
    turns = []
    for side, field, default in zip(SIDES, (FIRST, SECOND), DEFAULT_SPEAKERS):
        turn = record.get(field.key)
        if not isinstance(turn, Mapping) or not isinstance(turn.get(TURN_FIELDS.text), str):
            raise ValueError(f"{name}: {field.key!r} must be an object with a {TURN_FIELDS.text!r} string.")
        side_spans = [s for s in spans if s[SPAN_FIELDS.side] == side]
        turns.append(_turn_view(f"{name}, {side} turn", turn, default, words.get(side), side_spans))
    view = PairView(
        pair_id=str(pair_id) if pair_id is not None else f"pair {index + 1}",
        turns=(turns[0], turns[1]),
        shading=SHADE_PROBABILITY if any(t.words for t in turns) else SHADE_NONE,
        score=as_number(record.get(SCORE.key)),
        score_name="pair score",
        vote_share=as_number(record.get(VOTE_SHARE.key)),
        agreement=as_number(record.get(AGREEMENT.key)),
    )
    view.decision, view.threshold, view.margin = record_decision(record, threshold)
    if record.get(CONVERSATION_ID.key) is not None:
        view.notes.append(f"conversation {record[CONVERSATION_ID.key]}")
    for f in RECORD_FIELDS:
        if f not in DRAWN and f.type in PLAIN and record.get(f.key) is not None:
            view.notes.append(f"{f.key} {record[f.key]}")
    return view


def _turn_view(where: str, turn: Mapping, default: str, words, spans: List[Mapping]) -> TurnView:
    try:
        decoded = Turn.from_json(turn)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    text = turn[TURN_FIELDS.text]
    ids = [utterance.id for utterance in decoded.utterances]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: an utterance id is given twice in {ids}.")
    bounds = dict(zip(ids, decoded.offsets))
    view = TurnView(speaker=str(turn.get(TURN_FIELDS.speaker) or default), text=text)
    if words:
        view.words = _words(where, text, words, bounds)
    view.spans = _join_split_spans(text, [_place(where, text, ids, bounds, span) for span in spans])
    return view


def _utterance_id(where: str, ids: Sequence[str], span: Mapping) -> str:
    if len(ids) == 1:
        return ids[0]
    utterance = span.get(SPAN_FIELDS.utterance_id)
    if str(utterance) not in ids:
        raise ValueError(f"{where}: span's {SPAN_FIELDS.utterance_id} {utterance!r} is not one of {ids}.")
    return str(utterance)


def _words(where: str, text: str, words, bounds: Dict[str, Tuple[int, int]]) -> List[Word]:
    starts = {uid: start for uid, (start, _) in bounds.items()}
    matches = list(_WORD.finditer(text))
    if not isinstance(words, list) or len(words) != len(matches):
        n = len(words) if isinstance(words, list) else type(words).__name__
        raise ValueError(
            f"{where}: 'words' must list the {len(matches)} whitespace words of the text, got {n}."
        )
    out = []
    for match, word in zip(matches, words):
        if not isinstance(word, Mapping):
            raise ValueError(f"{where}: each entry of 'words' must be an object.")
        utterance, start = str(word.get(WORD_FIELDS.utterance_id)), word.get(WORD_FIELDS.start)
        if isinstance(start, int) and utterance in starts and starts[utterance] + start != match.start():
            raise ValueError(
                f"{where}: word {match.group()!r} is at character {match.start()} of the turn, not at "
                f"{starts[utterance] + start} (its offset {start} in utterance {utterance!r})."
            )
        prob = as_number(word.get(WORD_FIELDS.prob))
        value = float("nan") if prob is None else clamp01(prob)
        title = "no probability" if prob is None else f"p = {value:.2f}"
        out.append(Word(match.start(), match.end(), value, title))
    return out


def _place(where: str, text: str, ids: Sequence[str], bounds: Dict[str, Tuple[int, int]], span: Mapping) -> Mark:
    try:
        start, end = int(span[SPAN_FIELDS.start]), int(span[SPAN_FIELDS.end])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: a span needs integer {SPAN_FIELDS.start!r} and {SPAN_FIELDS.end!r}, "
                         f"got {dict(span)!r}.") from None
    if not 0 <= start <= end:
        raise ValueError(f"{where}: span offsets {start}:{end} are not a valid range.")
    key = _utterance_id(where, ids, span)
    (base, limit) = bounds[key]
    begin, stop = base + start, base + end
    expected = span.get(SPAN_FIELDS.text)
    if stop > limit or (expected is not None and text[begin:stop] != expected):
        raise ValueError(
            f"{where}: span {expected!r} ({start}:{end} of utterance {key!r}) does not match "
            f"the turn's text there ({text[begin:stop]!r})."
        )
    label = str(span.get(SPAN_FIELDS.label) or (SOURCE_LABEL if span.get(SPAN_FIELDS.side) == SIDES[0]
                                                else PARAPHRASE_LABEL))
    return Mark(begin, stop, label, as_number(span.get(SPAN_FIELDS.score)))


def _join_split_spans(text: str, marks: List[Mark]) -> List[Mark]:
    """Join a span cut at an utterance boundary (same label, one joining space)."""
    out: List[Mark] = []
    for mark in sorted(marks, key=lambda m: (m.start, m.end)):
        last = out[-1] if out else None
        if last is not None and last.label == mark.label and text[last.end : mark.start] == " ":
            a, b = last.end - last.start, mark.end - mark.start
            if last.score is not None and mark.score is not None:
                last.score = (last.score * a + mark.score * b) / (a + b)
            last.end = mark.end
            continue
        out.append(mark)
    return out
