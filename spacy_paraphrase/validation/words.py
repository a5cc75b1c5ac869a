"""The words coders highlight and the model's words on them (the coding page,
``validate score``'s word-level figures, ``convert coded``).

A turn's words are its whitespace-separated words (``\\S+``, as the
records' per-word probabilities): the coding page shows them, a coder's
highlight is a list of their indices, and the model's words of a record are
the words that overlap one of its spans on that side (span offsets are into
each utterance's own text; the turn's ``offsets`` place the utterances in the
turn text)."""
import re
from typing import Any, Dict, List, Set, Tuple

from ..annotate.record_format import SIDES, SPAN_FIELDS, SPANS, TURN_FIELDS
WORD = re.compile(r"\S+")


def word_bounds(text: str) -> List[Tuple[int, int]]:
    """(start, end) of each word of a turn text."""
    return [(m.start(), m.end()) for m in WORD.finditer(text or "")]


def turn_words(text: str) -> List[str]:
    """The words of a turn text, as the coding page shows them."""
    return WORD.findall(text or "")


def model_words(record: Dict[str, Any], side: str) -> Set[int]:
    """Indices of the words of the record's ``side`` turn ("first" or
    "second") that overlap one of the model's spans on that side (none when
    the model did not call the pair a paraphrase: its record has no spans)."""
    if side not in SIDES:
        raise ValueError(f"side {side!r}: first or second")
    turn = record[side]
    starts = {str(u): (o[0] if o else 0)
              for u, o in zip(turn.get(TURN_FIELDS.utterance_ids) or [], turn.get(TURN_FIELDS.offsets) or [])}
    ranges = []
    for span in record.get(SPANS.key) or []:
        if span.get(SPAN_FIELDS.side) != side:
            continue
        base = starts.get(str(span.get(SPAN_FIELDS.utterance_id)), 0)
        ranges.append((base + span[SPAN_FIELDS.start], base + span[SPAN_FIELDS.end]))
    return {i for i, (lo, hi) in enumerate(word_bounds(turn.get(TURN_FIELDS.text) or ""))
            if any(s < hi and lo < e for s, e in ranges)}
