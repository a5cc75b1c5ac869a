"""Quote alignment: finding an LLM's "verbatim" quote in the turn it quotes.

LLMs do not quote verbatim: they leave words out, add or change words, write
"you have" for "you've", change case and punctuation, or quote the other
turn. The ContextDeP authors' exact lower-cased word match loses 17% of
GPT-4's highlights this way. ``align_quote`` searches a quote in one turn in
three steps and stops at the first that finds it:

1. ``exact``: the quote's text occurs in the turn's text (case-sensitive),
   widened to whole tokens. Score 100.
2. ``normalized``: the quote's *units* occur as a contiguous run of the
   turn's units. A unit is a lower-cased run of letters/digits after curly
   quotes are straightened and contractions are expanded (``you've`` ->
   ``you have``, ``don't`` -> ``do not``; a token's ``norm_`` is used when
   spaCy's tokenizer split a contraction off, e.g. ``'ve`` -> ``have``);
   punctuation and whitespace are dropped. Score 100.
3. ``fuzzy``: every window of the turn's units whose length is within
   ``max(1, round(0.5 * n))`` of the quote's ``n`` units is compared with
   the quote (RapidFuzz ``fuzz.ratio`` on the units joined by spaces, 0-100);
   the best window wins when its score is >= ``min_score`` (default
   ``DEFAULT_MIN_SCORE`` = 80). Ties are broken by the length closest to the
   quote's.

A quote that matches in two places that do not overlap, equally well (two
exact or normalized occurrences, or two fuzzy windows with the same best
score), is *ambiguous* and not aligned. ``locate_quote`` adds the search in
the other turn (the LLM quoted the wrong turn) and returns a status for every
quote: ``QuoteStatus``.
"""
import dataclasses
import re
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

from ..pair_doc import get_turns

DEFAULT_MIN_SCORE = 80.0
METHODS = ("exact", "normalized", "fuzzy")
# How a quote fared (QuoteStatus.status).
ALIGNED = "aligned"
OTHER_TURN = "other_turn"
NOT_FOUND = "not_found"
AMBIGUOUS = "ambiguous"
EMPTY = "empty"
STATUSES = (ALIGNED, OTHER_TURN, NOT_FOUND, AMBIGUOUS, EMPTY)

_QUOTE_CHARS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201b": "'", "\u02bc": "'", "\u2032": "'", "`": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
})
_EDGE_PUNCT = " .,;:!?\"()[]{}<>-\u2013\u2014\u2026*"
_UNIT = re.compile(r"[^\W_]+", re.UNICODE)
# Contraction endings, as spaCy's English tokenizer exceptions norm them.
_SUFFIXES = (
    ("n't", "not"), ("'ve", "have"), ("'re", "are"), ("'ll", "will"), ("'m", "am"), ("'d", "would"), ("'s", "is"),
)
_WHOLE = {"can't": "can not", "cannot": "can not", "won't": "will not", "shan't": "shall not", "ain't": "is not",
          "gonna": "going to", "wanna": "want to", "gotta": "got to", "y'all": "you all", "let's": "let us"}


def _expand(text: str) -> str:
    """Lower-case, straighten quotes, expand contractions."""
    text = text.lower().translate(_QUOTE_CHARS).strip(_EDGE_PUNCT)
    if text in _WHOLE:
        return _WHOLE[text]
    for suffix, full in _SUFFIXES:
        if text.endswith(suffix) and len(text) >= len(suffix):
            head = text[: -len(suffix)]
            if suffix == "n't" and head in ("ca", "wo", "sha"):
                head = {"ca": "can", "wo": "will", "sha": "shall"}[head]
            return f"{head} {full}"
    return text


def text_units(text: str) -> List[str]:
    """The units of a string (module doc, step 2)."""
    units: List[str] = []
    for word in text.split():
        units.extend(_UNIT.findall(_expand(word)))
    return units


def _token_units(token) -> List[str]:
    norm = token.norm_
    # spaCy's tokenizer splits "you've" into "you" + "'ve" (norm "have")
    source = norm if norm and norm != token.lower_ and norm.isalpha() else token.text
    return _UNIT.findall(_expand(source))


def span_units(span: Span) -> Tuple[List[str], List[int]]:
    """The units of a span's tokens and, per unit, its token's index in the Doc."""
    units: List[str] = []
    owners: List[int] = []
    for token in span:
        for unit in _token_units(token):
            units.append(unit)
            owners.append(token.i)
    return units, owners


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


class _Ambiguous(Exception):
    pass


def _find_all(seq: Sequence[str], sub: Sequence[str]) -> List[int]:
    n, m = len(seq), len(sub)
    return [i for i in range(n - m + 1) if list(seq[i : i + m]) == list(sub)]


def _exact(turn: Span, quote: str) -> Optional[Span]:
    text = turn.text
    hits = []
    start = text.find(quote)
    while start >= 0:
        hits.append(start)
        start = text.find(quote, start + 1)
    spans = []
    for hit in hits:
        before = text[hit - 1] if hit > 0 else " "
        after = text[hit + len(quote)] if hit + len(quote) < len(text) else " "
        if (before.isalnum() and quote[:1].isalnum()) or (after.isalnum() and quote[-1:].isalnum()):
            continue  # inside a word ("he" in "the"): not a quote of it
        span = turn.doc.char_span(turn.start_char + hit, turn.start_char + hit + len(quote), alignment_mode="expand")
        if span is not None and span.start >= turn.start and span.end <= turn.end:
            if not spans or span.start >= spans[-1].end:
                spans.append(span)
    if len(spans) > 1:
        raise _Ambiguous()
    return spans[0] if spans else None


def _normalized(turn: Span, q_units: List[str]) -> Optional[Span]:
    units, owners = span_units(turn)
    hits = _find_all(units, q_units)
    if not hits:
        return None
    spans = [turn.doc[owners[h] : owners[h + len(q_units) - 1] + 1] for h in hits]
    distinct = [s for k, s in enumerate(spans) if k == 0 or s.start >= spans[k - 1].end]
    if len(distinct) > 1:
        raise _Ambiguous()
    return spans[0]


def _fuzzy(turn: Span, q_units: List[str], min_score: float) -> Optional[Tuple[Span, float]]:
    from rapidfuzz import fuzz

    units, owners = span_units(turn)
    if not units:
        return None
    n = len(q_units)
    slack = max(1, round(0.5 * n))
    target = " ".join(q_units)
    scored: List[Tuple[float, int, int, int]] = []  # score, -|len diff|, start unit, end unit
    for length in range(max(1, n - slack), min(len(units), n + slack) + 1):
        for i in range(len(units) - length + 1):
            score = fuzz.ratio(" ".join(units[i : i + length]), target)
            if score >= min_score:
                scored.append((score, -abs(length - n), i, i + length))
    if not scored:
        return None
    best = max(scored, key=lambda s: (s[0], s[1]))
    b_start, b_end = owners[best[2]], owners[best[3] - 1] + 1
    for score, _, i, j in scored:
        if score == best[0]:
            s, e = owners[i], owners[j - 1] + 1
            if e <= b_start or s >= b_end:  # an equally good place elsewhere
                raise _Ambiguous()
    return turn.doc[b_start:b_end], float(best[0])


def _check(turn: Span, quote: str, min_score: float) -> None:
    if not isinstance(turn, Span):
        raise TypeError(f"align_quote needs a turn Span (e.g. from get_turns(doc)), got {type(turn).__name__}")
    if not isinstance(quote, str):
        raise TypeError(f"align_quote needs the quote as a string, got {type(quote).__name__}")
    if not 0 <= float(min_score) <= 100:
        raise ValueError(f"min_score must be in [0, 100], got {min_score!r}")


def _align(turn: Span, quote: str, min_score: float, fuzzy: bool) -> Optional[QuoteAlignment]:
    """Raises _Ambiguous."""
    quote = quote.strip()
    q_units = text_units(quote)
    if not q_units:
        return None
    span = _exact(turn, quote)
    if span is not None:
        return QuoteAlignment(span, "exact", 100.0)
    span = _normalized(turn, q_units)
    if span is not None:
        return QuoteAlignment(span, "normalized", 100.0)
    if fuzzy:
        found = _fuzzy(turn, q_units, min_score)
        if found is not None:
            return QuoteAlignment(found[0], "fuzzy", found[1])
    return None


def align_quote(
    turn: Span, quote: str, *, min_score: float = DEFAULT_MIN_SCORE, fuzzy: bool = True
) -> Optional[QuoteAlignment]:
    """Find ``quote`` in ``turn`` (module doc): a ``QuoteAlignment`` with the
    aligned span (same Doc as ``turn``), its method and score, or None when
    the quote is not found, has no letters or digits, or is ambiguous
    (``locate_quote`` says which)."""
    _check(turn, quote, min_score)
    try:
        return _align(turn, quote, min_score, fuzzy)
    except _Ambiguous:
        return None


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
    """Search ``quote`` in the turn ``side`` ("first" = guest, "second" =
    host) of a pair Doc, then, when it is not there, in the other turn. A
    quote found only in the other turn has status ``other_turn``; its span is
    kept (``start``/``end`` set, ``side_found`` = the other side) when
    ``use_other_turn``, else it is reported and dropped."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    turns = dict(zip(SIDES, get_turns(doc)))
    _check(turns[side], quote, min_score)
    if not text_units(quote):
        return QuoteStatus(quote, side, EMPTY)
    try:
        found = _align(turns[side], quote, min_score, fuzzy)
    except _Ambiguous:
        return QuoteStatus(quote, side, AMBIGUOUS)
    if found is not None:
        return QuoteStatus(quote, side, ALIGNED, found.method, found.score, found.start, found.end, side)
    other = SIDES[1 - SIDES.index(side)]
    try:
        found = _align(turns[other], quote, min_score, fuzzy)
    except _Ambiguous:
        found = None
    if found is None:
        return QuoteStatus(quote, side, NOT_FOUND)
    if use_other_turn:
        return QuoteStatus(quote, side, OTHER_TURN, found.method, found.score, found.start, found.end, other)
    return QuoteStatus(quote, side, OTHER_TURN, found.method, found.score, side_found=other)


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
