"""Annotate records (one JSON object per turn pair, see docs/annotate.md) as
pair views.

A record gives span offsets into each *utterance's* own text, while a turn's
text is its utterances' texts joined by one space. Where an utterance starts
in its turn is read from the turn's ``"offsets"`` when present (annotate
rows), else from the record's ``"words"`` (written with ``--with-probs``: the
turn's whitespace words with their utterance offsets); without them, from
each span's ``"text"``: the first position after a joining space (or the
turn's start, for its first utterance), in utterance order and past the spans
of earlier utterances, where the span's text is found at its offset. A span
that cannot be placed, or whose ``"text"`` disagrees with the turn's text,
raises a ValueError naming the record. A span cut in two at an utterance
boundary is drawn as one again.
"""
import math
import re
from typing import Dict, List, Mapping, Optional, Sequence

from .views import Mark, PairView, SHADE_NONE, SHADE_PROBABILITY, TurnView, Word, clamp01

SIDES = ("first", "second")
DEFAULT_SPEAKERS = ("FIRST", "SECOND")
_WORD = re.compile(r"\S+")


def pair_view_from_record(
    record: Mapping, index: int = 0, *, threshold: Optional[float] = None
) -> PairView:
    """The view of one annotate record (see the module doc)."""
    if not isinstance(record, Mapping):
        raise ValueError(f"An annotate record must be a JSON object, got {type(record).__name__}.")
    pair_id = record.get("pair_id")
    name = f"annotate record {pair_id!r}" if pair_id is not None else f"annotate record {index + 1}"
    words = record.get("words") or {}
    if not isinstance(words, Mapping):
        raise ValueError(f"{name}: 'words' must be an object with 'first' and 'second' lists.")
    spans = record.get("spans") or []
    if not isinstance(spans, list) or not all(isinstance(s, Mapping) for s in spans):
        raise ValueError(f"{name}: 'spans' must be a list of objects.")
    for span in spans:
        if span.get("side") not in SIDES:
            raise ValueError(f"{name}: a span's 'side' must be 'first' or 'second', got {span.get('side')!r}.")
    turns = []
    for side, default in zip(SIDES, DEFAULT_SPEAKERS):
        turn = record.get(side)
        if not isinstance(turn, Mapping) or not isinstance(turn.get("text"), str):
            raise ValueError(f"{name}: {side!r} must be an object with a 'text' string.")
        side_spans = [s for s in spans if s["side"] == side]
        turns.append(_turn_view(f"{name}, {side} turn", turn, default, words.get(side), side_spans))
    view = PairView(
        pair_id=str(pair_id) if pair_id is not None else f"pair {index + 1}",
        turns=(turns[0], turns[1]),
        shading=SHADE_PROBABILITY if any(t.words for t in turns) else SHADE_NONE,
        score=_number(record.get("score")),
        score_name="pair score",
        vote_share=_number(record.get("vote_share")),
        agreement=_number(record.get("agreement")),
    )
    decision = record.get("is_paraphrase")
    margin = _number(record.get("margin"))
    if threshold is not None and view.score is not None:
        # A given threshold wins; the margin is then measured from it.
        view.threshold = float(threshold)
        view.margin = view.score - view.threshold
        decision = view.score >= view.threshold
    elif margin is not None and view.score is not None:
        # Records keep the margin (score − the pipeline's threshold), not the threshold.
        view.threshold = view.score - margin
        view.margin = margin
        if decision is None:
            decision = margin >= 0
    view.decision = None if decision is None else bool(decision)
    if record.get("conversation_id") is not None:
        view.notes.append(f"conversation {record['conversation_id']}")
    return view


def _number(value) -> Optional[float]:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _turn_view(where: str, turn: Mapping, default: str, words, spans: List[Mapping]) -> TurnView:
    text = turn["text"]
    ids = list(turn.get("utterance_ids") or [])
    view = TurnView(speaker=str(turn.get("speaker") or default), text=text)
    offsets: Dict[object, int] = {}
    if ids:
        offsets[ids[0]] = 0
    given = turn.get("offsets")  # an annotate *row* carries them: [start, end] per utterance
    if isinstance(given, list) and len(given) == len(ids):
        offsets.update((uid, int(pair[0])) for uid, pair in zip(ids, given))
    if words:
        view.words = _words(where, text, words, offsets)
    marks = []
    ends: Dict[int, int] = {}  # utterance index -> end of its last placed span in the turn
    for span in sorted(spans, key=lambda s: _utterance_index(where, ids, s)):
        index = _utterance_index(where, ids, span)
        floor = max([end + 1 for i, end in ends.items() if i < index], default=1)
        mark = _place(where, text, ids, offsets, span, floor)
        ends[index] = max(ends.get(index, 0), mark.end)
        marks.append(mark)
    view.spans = _join_split_spans(text, marks)
    return view


def _utterance_index(where: str, ids: Sequence, span: Mapping) -> int:
    if len(ids) <= 1:
        return 0
    utterance = span.get("utterance_id")
    if utterance not in ids:
        raise ValueError(f"{where}: span's utterance_id {utterance!r} is not one of {ids}.")
    return ids.index(utterance)


def _words(where: str, text: str, words, offsets: Dict[object, int]) -> List[Word]:
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
        if "start" in word and word.get("utterance_id") is not None:
            offset = match.start() - int(word["start"])
            known = offsets.setdefault(word["utterance_id"], offset)
            if known != offset:
                raise ValueError(
                    f"{where}: word {match.group()!r} puts utterance {word['utterance_id']!r} "
                    f"at character {offset} of the turn, another word at {known}."
                )
        prob = _number(word.get("prob"))
        value = float("nan") if prob is None else clamp01(prob)
        title = "no probability" if prob is None else f"p = {value:.2f}"
        out.append(Word(match.start(), match.end(), value, title))
    return out


def _place(
    where: str, text: str, ids: Sequence, offsets: Dict[object, int], span: Mapping, floor: int
) -> Mark:
    try:
        start, end = int(span["start"]), int(span["end"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: a span needs integer 'start' and 'end', got {dict(span)!r}.") from None
    if not 0 <= start <= end:
        raise ValueError(f"{where}: span offsets {start}:{end} are not a valid range.")
    index = _utterance_index(where, ids, span)
    key = ids[index] if ids else None
    expected = span.get("text")
    offset = offsets.get(key, 0 if index == 0 else None)
    if offset is None:
        offset = _find_offset(where, text, ids, offsets, index, start, expected, floor)
        offsets[key] = offset
    begin, stop = offset + start, offset + end
    if stop > len(text) or (expected is not None and text[begin:stop] != expected):
        raise ValueError(
            f"{where}: span {expected!r} ({start}:{end} of utterance {key!r}) does not match "
            f"the turn's text there ({text[begin:stop]!r})."
        )
    label = str(span.get("label") or ("SOURCE" if span.get("side") == "first" else "PARAPHRASE"))
    return Mark(begin, stop, label, _number(span.get("score")))


def _find_offset(where, text, ids, offsets, index, start, expected, floor) -> int:
    """Where utterance ``index`` starts, from a span's text (module doc): not
    before ``floor`` (past the spans of earlier utterances) nor before or at
    a known start of an earlier utterance, and before any known later one."""
    if expected is None:
        raise ValueError(
            f"{where}: cannot place a span of utterance {ids[index]!r} without the record's "
            "'words' or the span's 'text'."
        )
    known = {ids.index(k): v for k, v in offsets.items() if k in ids}
    low = max([v + 1 for i, v in known.items() if i < index] + [floor])
    high = min([v for i, v in known.items() if i > index], default=len(text) + 1)
    pos = text.find(expected, low + start)
    while pos != -1:
        offset = pos - start
        if offset >= high:
            break
        if text[offset - 1] == " ":
            return offset
        pos = text.find(expected, pos + 1)
    raise ValueError(
        f"{where}: span {expected!r} of utterance {ids[index]!r} is not in the turn's text."
    )


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
