"""Quote alignment: finding an LLM's "verbatim" quote in the turn it quotes.

LLMs do not quote verbatim: they leave words out, add or change words, write
"you have" for "you've", change case and punctuation, stop mid-word, or quote
the other turn. The ContextDeP authors' exact lower-cased word match loses
17% of GPT-4's highlights this way. ``align_quote`` searches a quote in one
turn in four steps and stops at the first that finds it:

1. ``exact``: the quote's text occurs in the turn's text (case-sensitive) at
   word boundaries, widened to whole tokens. Score 100.
2. ``normalized``: the quote's *units* occur as a contiguous run of the
   turn's units. A unit is a lower-cased run of letters/digits after curly
   quotes are straightened and contractions are expanded (``you've`` ->
   ``you have``, ``don't`` -> ``do not``; a token's ``norm_`` is used when
   spaCy's tokenizer split a contraction off, e.g. ``'ve`` -> ``have``);
   punctuation and whitespace are dropped. Score 100.
3. ``short``: a quote of 2-4 units one edit from a run of the turn: one unit
   added (a run of 2-3 units), one replaced (2-3 units) or one word left
   out (a run one unit longer, or two for a contraction: "I been punished"
   for "I haven't been punished"; such a fit matches every unit of the
   quote and beats the others). Another form of the turn's word ("camps" / "camp", "steps" /
   "stepped": the same stem once -ing, -ed, -(e)s, -ly, -er and a final e
   are cut) is no replacement. The units that match are the evidence: two
   content words (a number, or >= 3 letters and not a stop word), or one
   that is not among the frequent English words of ``common_words.py``, or
   one frequent content word among >= 2 matching units when the quote's unit
   that does not match is a *filler* (a stop word or an adverb in -ly:
   "going to really be"). "the thing" with "thing" replaced, or "unclog the
   time" for "the time", is no evidence. The fit must be the only one **in
   the pair** (both turns of the Doc). At the edge, a quote unit that does
   not match reads as put in when it is a filler (the span leaves the turn's
   neighbour out) and as a replacement otherwise (the span takes the turn's
   word in). Score: RapidFuzz ratio of the quote and the run.
4. ``fuzzy``: every window of the turn's units whose length is within
   ``max(1, round(0.5 * n))`` of the quote's ``n`` units and that holds one
   of the quote's content words or a form of it (any of its words, when it
   has none) is
   compared with the quote (RapidFuzz ``fuzz.ratio`` on the units joined by
   spaces, 0-100); the best window counts when its score is >=
   ``min_score`` (default ``DEFAULT_MIN_SCORE`` = 80), ties broken by the
   length closest to the quote's; for a quote of 2-3 units, the units it
   shares with the window must be evidence as in step 3. Of the windows over
   it that score >=
   ``min_score``, one that starts with the quote's first unit and ends with
   its last wins (a word left out or changed inside must not cut an edge
   word off).

In every step the quote's last unit may be a prefix of the turn's unit (the
authors' rule for a word cut off mid-way: "the new sch" is "the new
school"), for quotes of >= 2 units whose last unit has >= 2 letters (>= 3 in
step 3); a whole-word match wins over a prefix match.

A quote that matches in two places that do not overlap, equally well (two
exact or normalized occurrences, or two fuzzy windows with the same best
score), is *ambiguous* and not aligned.

**Which turn** (``locate_quote``; it returns a ``QuoteStatus`` for every
quote): a quote filed under one turn is searched in the pair before a fuzzy
match is accepted. Exact or normalized in its own turn: ``aligned`` there
(even when the other turn has it too: the model's label decides). Else
exact or normalized in the other turn: ``other_turn`` (the model filed it
under the wrong speaker; a fuzzy echo of it in its own turn gets no span).
Else a short fit (step 3) in its own turn: ``aligned``. Else the fuzzy
matches of both turns: the better score wins (``other_turn`` when it is the
other's); the same score in both is ``ambiguous``. A short fit only in the
other turn is not used (two errors at once).
"""
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

from ..pair_doc import TURNS_KEY, get_turns
from .quote_match import (  # noqa: F401 (text_units, span_units, SHORT_UNITS: part of this module's API)
    SHORT_UNITS, Ambiguous, exact_run, fuzzy_window, normalized_run, prefix_ok, short_fits, span_units, text_units,
)

DEFAULT_MIN_SCORE = 80.0
METHODS = ("exact", "normalized", "fuzzy", "short")
# How a quote fared (QuoteStatus.status).
ALIGNED = "aligned"
OTHER_TURN = "other_turn"
NOT_FOUND = "not_found"
AMBIGUOUS = "ambiguous"
EMPTY = "empty"
STATUSES = (ALIGNED, OTHER_TURN, NOT_FOUND, AMBIGUOUS, EMPTY)


@dataclasses.dataclass(frozen=True)
class QuoteAlignment:
    """Where a quote was found: ``span`` (in the same Doc as the turn), the
    step that found it (``method``: exact / normalized / fuzzy) and its score
    (0-100; 100 for exact and normalized)."""

    span: Span
    method: str
    score: float

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        return self.span.end


def _check(turn: Span, quote: str, min_score: float) -> None:
    if not isinstance(turn, Span):
        raise TypeError(f"align_quote needs a turn Span (e.g. from get_turns(doc)), got {type(turn).__name__}")
    if not isinstance(quote, str):
        raise TypeError(f"align_quote needs the quote as a string, got {type(quote).__name__}")
    if not 0 <= float(min_score) <= 100:
        raise ValueError(f"min_score must be in [0, 100], got {min_score!r}")


def _rank(found: QuoteAlignment) -> Tuple[int, float]:
    """How good a match is: exact and normalized (2, 100) beat any fuzzy (1, score)."""
    return (2, 100.0) if found.method in ("exact", "normalized") else (1, found.score)


def _align(turn: Span, quote: str, min_score: float, fuzzy: bool) -> Optional[QuoteAlignment]:
    """Steps 1, 2 and (``fuzzy``) 4 of the module doc in one turn. Raises Ambiguous."""
    quote = quote.strip()
    q_units = text_units(quote)
    if not q_units:
        return None
    prefix = prefix_ok(q_units)
    span = exact_run(turn, quote, prefix)
    if span is not None:
        return QuoteAlignment(span, "exact", 100.0)
    span = normalized_run(turn, q_units, prefix)
    if span is not None:
        return QuoteAlignment(span, "normalized", 100.0)
    if fuzzy:
        found = fuzzy_window(turn, q_units, min_score, prefix)
        if found is not None:
            return QuoteAlignment(found[0], "fuzzy", found[1])
    return None


def _uniqueshort_fits(turns: Sequence[Span], quote: str) -> Optional[QuoteAlignment]:
    """Step 3: the one place in ``turns`` where a short quote fits with one
    edit (of the fits that match the most quote units), else None."""
    places = short_fits(turns, text_units(quote))
    if not places:
        return None
    most = max(p[1] for p in places)
    places = sorted((p for p in places if p[1] == most), key=lambda p: (p[0].start, p[0].end))
    distinct = [p for k, p in enumerate(places) if k == 0 or p[0].start >= places[k - 1][0].end]
    if len(distinct) != 1:
        return None
    best = max(places, key=lambda p: (-p[2], p[3], p[0].end - p[0].start))
    return QuoteAlignment(best[0], "short", best[3])


def _pair_turns(turn: Span) -> List[Span]:
    if TURNS_KEY in turn.doc.spans and len(turn.doc.spans[TURNS_KEY]) == 2:
        return list(get_turns(turn.doc))
    return [turn]


def align_quote(
    turn: Span, quote: str, *, min_score: float = DEFAULT_MIN_SCORE, fuzzy: bool = True
) -> Optional[QuoteAlignment]:
    """Find ``quote`` in ``turn`` (module doc): a ``QuoteAlignment`` with the
    aligned span (same Doc as ``turn``), its method and score, or None when
    the quote is not found, has no letters or digits, or is ambiguous
    (``locate_quote`` says which). Steps 1, 2 and 4 search ``turn`` only
    (``locate_quote`` also weighs the other turn); step 3 (``short``, with
    ``fuzzy``) needs its one place in the pair (both turns of ``turn.doc``
    when it is a pair Doc) to be in ``turn``."""
    _check(turn, quote, min_score)
    q_units = text_units(quote)
    try:
        found = _align(turn, quote, min_score, False)
        if found is None and fuzzy and q_units:
            short = _uniqueshort_fits(_pair_turns(turn), quote)
            if short is not None and short.start >= turn.start and short.end <= turn.end:
                return short
            window = fuzzy_window(turn, q_units, min_score, prefix_ok(q_units))
            found = QuoteAlignment(window[0], "fuzzy", window[1]) if window else None
    except Ambiguous:
        return None
    return found


@dataclasses.dataclass(frozen=True)
class QuoteStatus:
    """What became of one quote: ``status`` (aligned, other_turn, not_found,
    ambiguous, empty), the side it was quoted for (``"first"`` / ``"second"``),
    and, when found, the token offsets ``start``/``end`` (in the Doc), the
    ``side_found``, ``method`` and ``score``."""

    quote: str
    side: str
    status: str
    method: Optional[str] = None
    score: Optional[float] = None
    start: Optional[int] = None
    end: Optional[int] = None
    side_found: Optional[str] = None

    def to_dict(self) -> Dict[str, object]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @property
    def kept(self) -> bool:
        """Whether the quote gave a span (in its own turn, or in the other)."""
        return self.start is not None


SIDES = ("first", "second")


def locate_quote(
    doc: Doc,
    quote: str,
    side: str,
    *,
    min_score: float = DEFAULT_MIN_SCORE,
    fuzzy: bool = True,
    use_other_turn: bool = True,
) -> QuoteStatus:
    """Find ``quote``, filed under the turn ``side`` ("first" = guest,
    "second" = host) of a pair Doc, in the pair (module doc, "Which turn").
    A quote placed in the other turn has status ``other_turn``; its span is
    kept (``start``/``end`` set, ``side_found`` = the other side) when
    ``use_other_turn``, else it is reported and dropped."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    turns = dict(zip(SIDES, get_turns(doc)))
    _check(turns[side], quote, min_score)
    if not text_units(quote):
        return QuoteStatus(quote, side, EMPTY)
    other = SIDES[1 - SIDES.index(side)]
    pair = (turns[side], turns[other])
    results: Dict[str, object] = {}
    for name in (side, other):
        try:
            results[name] = _align(turns[name], quote, min_score, False)  # exact and normalized
        except Ambiguous as err:
            results[name] = err
        if name == side and results[name] is not None:
            break  # word for word in its own turn (or twice there): the other turn cannot beat it
    asked, elsewhere = results[side], results.get(other)
    if isinstance(asked, Ambiguous):
        return QuoteStatus(quote, side, AMBIGUOUS)
    if asked is not None:
        return _status(quote, side, ALIGNED, asked, side)
    if elsewhere is not None:  # word for word only in the other turn
        if isinstance(elsewhere, Ambiguous):
            return QuoteStatus(quote, side, NOT_FOUND)
        return _status(quote, side, OTHER_TURN, elsewhere, other, use_other_turn)
    if not fuzzy:
        return QuoteStatus(quote, side, NOT_FOUND)
    short = _uniqueshort_fits(pair, quote)
    if short is not None and short.start >= turns[side].start and short.end <= turns[side].end:
        return _status(quote, side, ALIGNED, short, side)
    fuzzy_found: Dict[str, object] = {}
    q_units = text_units(quote)
    for name in (side, other):
        try:
            found = fuzzy_window(turns[name], q_units, min_score, prefix_ok(q_units))
            fuzzy_found[name] = QuoteAlignment(found[0], "fuzzy", found[1]) if found else None
        except Ambiguous as err:
            fuzzy_found[name] = err
    ranks = {name: None if r is None else r.rank if isinstance(r, Ambiguous) else _rank(r)
             for name, r in fuzzy_found.items()}
    if ranks[side] is None and ranks[other] is None:
        return QuoteStatus(quote, side, NOT_FOUND)
    if ranks[side] is not None and ranks[side] == ranks[other]:
        return QuoteStatus(quote, side, AMBIGUOUS)  # equally good in both turns
    if ranks[other] is None or (ranks[side] is not None and ranks[side] > ranks[other]):
        asked = fuzzy_found[side]
        if isinstance(asked, Ambiguous):
            return QuoteStatus(quote, side, AMBIGUOUS)
        return _status(quote, side, ALIGNED, asked, side)
    elsewhere = fuzzy_found[other]
    if isinstance(elsewhere, Ambiguous):
        return QuoteStatus(quote, side, NOT_FOUND)
    return _status(quote, side, OTHER_TURN, elsewhere, other, use_other_turn)


def _status(quote: str, side: str, status: str, found: QuoteAlignment, side_found: str,
            keep: bool = True) -> QuoteStatus:
    if keep:
        return QuoteStatus(quote, side, status, found.method, found.score, found.start, found.end, side_found)
    return QuoteStatus(quote, side, status, found.method, found.score, side_found=side_found)


def exact_word_match(turn_words: Sequence[str], quote: str) -> Optional[Tuple[int, int]]:
    """The ContextDeP authors' rule, for comparison: the quote's lower-cased
    whitespace words must occur as a run of the turn's lower-cased words, only
    the quote's last word may be a prefix of the turn's word; the first
    occurrence wins. (start, end) word indices, or None."""
    q = quote.lower().split()
    words = [w.lower() for w in turn_words]
    if not q:
        return None
    for i in range(len(words) - len(q) + 1):
        if words[i : i + len(q) - 1] == q[:-1] and words[i + len(q) - 1].startswith(q[-1]):
            return i, i + len(q)
    return None
