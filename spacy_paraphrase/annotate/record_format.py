"""The annotate job's rows (a turn pair as plain JSON) and records (one
processed pair Doc as the annotate record of docs/annotate.md).

A *row* is what travels to the model: ``pair_id``, ``conversation_id``,
``first`` / ``second`` = ``{"speaker", "utterance_ids", "text", "offsets"}``
(``offsets[i]`` = ``[start, end]`` of utterance ``i`` inside the turn text)
and ``meta`` when the pair has any. A *record* is what is written: the row's
turns without ``offsets`` plus the pair score, decision, spans (character
offsets into each utterance's own text; a span crossing an utterance boundary
becomes one span per utterance, each trimmed of whitespace at its edges) and,
with ``with_probs``, one probability per whitespace word of each turn.
"""
import math
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy
from spacy.tokens import Doc

from ..dialogs.turns import Turn, TurnPair, Utterance
from ..pair_doc import get_turns, turn_text_problem
from ..words import word_bounds, word_values

SIDES = ("first", "second")
TURN_KEYS = ("speaker", "utterance_ids", "text")
_WORD = re.compile(r"\S+")


def _turn_row(turn: Turn) -> Dict[str, Any]:
    row = turn.as_dict()
    row["offsets"] = [[start, end] for start, end in turn.offsets]
    return row


def pair_row(pair: TurnPair) -> Dict[str, Any]:
    """The JSON-able row of a turn pair (module doc)."""
    row: Dict[str, Any] = {
        "pair_id": pair.pair_id,
        "conversation_id": pair.conversation_id,
        "first": _turn_row(pair.first),
        "second": _turn_row(pair.second),
    }
    if pair.meta:
        row["meta"] = dict(pair.meta)
    return row


def invalid_side(row: Mapping[str, Any], max_length: Optional[int] = None) -> Optional[Tuple[str, str]]:
    """``(side, reason)`` for the first turn of the row that cannot be
    annotated (``pair_doc.turn_text_problem``; ``max_length``: the pipeline's
    ``nlp.max_length``), or None."""
    for side in SIDES:
        turn = row.get(side)
        if not isinstance(turn, Mapping):
            return side, f"the {side} turn is missing"
        problem = turn_text_problem(turn.get("text"), side, max_length)
        if problem is not None:
            return side, problem
    return None


def invalid_reason(row: Mapping[str, Any], max_length: Optional[int] = None) -> Optional[str]:
    """Why this row's pair cannot be annotated (``invalid_side``), or None."""
    found = invalid_side(row, max_length)
    return None if found is None else found[1]


def turn_speakers(row: Mapping[str, Any]) -> Optional[Tuple[str, str]]:
    """``speakers=`` for ``make_pair_doc``: both speaker names, or None when
    either is unknown, empty or not valid Unicode, e.g. holds a lone surrogate
    (the turns are then labelled FIRST / SECOND; the record keeps the names)."""
    names = tuple(row[side].get("speaker") for side in SIDES)
    if all(_encodable(name) for name in names):
        return names  # type: ignore
    return None


def _encodable(name: Any) -> bool:
    try:
        return isinstance(name, str) and bool(name) and bool(name.encode("utf-8"))
    except UnicodeEncodeError:
        return False


def _number(value: Any) -> Optional[float]:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def row_turn(row_turn: Mapping[str, Any], conversation_id: str = "") -> Turn:
    """The ``Turn`` of a row's side (utterance texts cut from the turn text
    at ``offsets``), so that ``Turn.split_span`` maps spans to utterances."""
    text = row_turn["text"]
    ids = list(row_turn["utterance_ids"])
    offsets = [tuple(pair) for pair in row_turn.get("offsets") or [[0, len(text)]]]
    if len(offsets) != len(ids):
        raise ValueError(f"a turn has {len(ids)} utterance ids but {len(offsets)} offsets")
    speaker = row_turn.get("speaker")
    utterances = tuple(
        Utterance(utt_id, conversation_id, speaker, text[start:end])
        for utt_id, (start, end) in zip(ids, offsets)
    )
    return Turn(speaker, text, utterances, tuple(offsets))  # type: ignore


def _turn_base(doc: Doc, span, text: str, side: str) -> int:
    """Where the turn's text starts in the Doc's text, checked at the turn's
    first and last tokens (``doc.text`` itself costs a pass over all tokens)."""
    base = span.start_char
    first, last = doc[span.start], doc[span.end - 1]
    end = last.idx - base + len(last.text)
    if not text.startswith(first.text) or end > len(text) or text[last.idx - base : end] != last.text:
        raise ValueError(
            f"The pair Doc's {side} turn does not hold the row's {side} text: the Doc "
            "was not built from this row by make_pair_doc."
        )
    return base


def _spans(doc: Doc, group, turns, bases, sides_of) -> List[Dict[str, Any]]:
    scores = list(group.attrs.get("scores") or [None] * len(group))
    out = []
    for span, score in zip(group, scores):
        side = sides_of(span.start)
        i = SIDES.index(side)
        start, end = span.start_char - bases[i], span.end_char - bases[i]
        for piece in turns[i].split_span(start, end):
            # a run may go on over whitespace tokens into the next utterance:
            # each piece is trimmed of whitespace at its edges (none is left empty)
            lead = len(piece.text) - len(piece.text.lstrip())
            text = piece.text.strip()
            if not text:
                continue
            piece = piece._replace(start=piece.start + lead, end=piece.start + lead + len(text), text=text)
            out.append({
                "side": side,
                "label": span.label_,
                "utterance_id": piece.utterance_id,
                "start": piece.start,
                "end": piece.end,
                "text": piece.text,
                "score": _number(score),
            })
    return out


def model_words(doc: Doc, probs: numpy.ndarray) -> List[Tuple[int, int, float]]:
    """``(char start, char end, probability)`` of every word the model scores
    (``words.word_bounds`` / ``word_values``); whitespace tokens, words of
    their own there, never overlap a whitespace word of the text."""
    out = []
    bounds = word_bounds(doc)
    for (start, end), value in zip(bounds, word_values(doc, probs, bounds)):
        first, last = doc[start], doc[end - 1]
        out.append((first.idx, last.idx + len(last.text), float(value)))
    return out


def _words(scored: List[Tuple[int, int, float]], turn: Turn, base: int) -> List[Dict[str, Any]]:
    """One entry per whitespace word of the turn text: its utterance, offsets
    into that utterance's text and the largest probability of the model's
    words that overlap it (normally exactly one)."""
    j = 0
    out = []
    for match in _WORD.finditer(turn.text):
        lo, hi = base + match.start(), base + match.end()
        while j < len(scored) and scored[j][1] <= lo:
            j += 1
        k, best = j, math.nan
        while k < len(scored) and scored[k][0] < hi:
            if not math.isnan(scored[k][2]):
                best = scored[k][2] if math.isnan(best) else max(best, scored[k][2])
            k += 1
        piece = turn.split_span(match.start(), match.end())[0]
        out.append({
            "utterance_id": piece.utterance_id,
            "start": piece.start,
            "end": piece.end,
            "text": piece.text,
            "prob": _number(best),
        })
    return out


def make_record(
    doc: Doc,
    row: Mapping[str, Any],
    *,
    with_probs: bool,
    spans_key: str = "paraphrase",
    cats_key: str = "PARAPHRASE",
    threshold: float = 0.5,
) -> Dict[str, Any]:
    """The annotate record of a processed pair Doc built from ``row`` (module
    doc). ``threshold`` is the pipeline's pair threshold (``is_paraphrase`` =
    score >= threshold; ``PairAnnotator`` passes its component's)."""
    if spans_key not in doc.spans or "pair_score" not in doc.spans[spans_key].attrs:
        raise ValueError(
            f"doc.spans[{spans_key!r}] has no pair score: run a paraphrase_spans component "
            "with this spans_key on the Doc first."
        )
    group = doc.spans[spans_key]
    conversation_id = row.get("conversation_id") or ""
    turns = [row_turn(row[side], conversation_id) for side in SIDES]
    doc_turns = get_turns(doc)
    bases = [_turn_base(doc, span, turn.text, side) for span, turn, side in zip(doc_turns, turns, SIDES)]
    score = _number(doc.cats.get(cats_key, group.attrs["pair_score"]))
    record: Dict[str, Any] = {"pair_id": row["pair_id"], "conversation_id": row.get("conversation_id")}
    for side in SIDES:
        record[side] = {key: row[side].get(key) for key in TURN_KEYS}
    if row.get("meta"):
        record["meta"] = row["meta"]
    record["score"] = score
    record["is_paraphrase"] = score is not None and score >= threshold
    record["vote_share"] = _number(group.attrs.get("vote_share", score))
    record["agreement"] = _number(group.attrs.get("agreement"))
    record["margin"] = _number(group.attrs.get("margin", None if score is None else score - threshold))
    second_start = doc_turns[1].start
    record["spans"] = _spans(doc, group, turns, bases, lambda i: "first" if i < second_start else "second")
    if with_probs:
        scored = model_words(doc, numpy.asarray(group.attrs["token_probs"], dtype="float32"))
        record["words"] = {
            side: _words(scored, turn, base) for side, turn, base in zip(SIDES, turns, bases)
        }
    return record
