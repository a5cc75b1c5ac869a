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
3. ``short``: a quote of at most 4 words (2-3 words, one more when a word
   was added) and 2-6 units one edit from a run of the turn: one unit added
   (a run of 2-5 units: a 2-3-word phrase with contractions or hyphens has
   more than 3, "it's a wand", "this I-35 stretch"), one replaced (2-5
   units) or one word left out (a run one unit longer, or two for a
   contraction: "I been punished" for "I haven't been punished"; such a fit
   matches every unit of the quote and beats the others). Another form of the turn's word ("camps" / "camp", "steps" /
   "stepped": the same stem once -ing, -ed, -(e)s, -ly, -er and a final e
   are cut; a stop word has no other forms: "note" is not "not") is no
   replacement. Two matching units that are neighbours in the quote must not
   lie on either side of a sentence end of the turn that the quote does not
   have ("process that takes" is not "process. That is"). The units that
   match are the evidence (a cut-off word counts for none), as
   ``short_evidence`` says. ``"strict"``: two content words (a number, or
   >= 3 letters and not a stop word), or one that is not among the frequent
   English words of ``common_words.py`` among >= 2 matching units, or one
   frequent content word among >= 2 matching units when the quote's unit
   that does not match is a *filler* (a stop word or an adverb in -ly:
   "going to really be"), or a lone word that is not a frequent one when a
   content word replaced a content word ("way stole" for "allegedly stole";
   not "she ran" for "we ran", "the process" for "election process", "new
   childhood" for "my childhood": a rare word of the pair's topic beside a
   word that does not match is anywhere in talk of that topic); "the thing"
   with "thing" replaced, or "unclog the time" for "at the time", is no
   evidence. ``"lenient"``
   (the default) also takes matching units of >= 2 letters from two of the
   quote's words when the quote's other unit is a filler put in or the quote
   left a word out ("it was across" for "It was all across"; not the "it is"
   of "It's big", nor "U.S."), but not when it replaced a word, is another
   word put in or another form of a word: frequent words and a word of the
   quote's own are no evidence ("who signed the" is not "who is the",
   "coming from" not "come from", "unclog the time" not "at the time").
   Which to use: docs/llm.md, "Alignment: measured". The fit must be the
   only one **in the pair** (both turns of the Doc), or its places must all
   be the same words (a phrase said again: the first, in the quote's own
   turn if it is there). At the edge, a quote unit that does
   not match reads as put in when it is a filler (the span leaves the turn's
   neighbour out) and as a replacement otherwise (the span takes the turn's
   word in). A quote of 4 words with a filler put in inside ("sell a
   basically free ticket?") is the quote without that filler, word for word,
   at its one place in the pair, when its words are evidence. Score:
   RapidFuzz ratio of the quote and the run.
4. ``fuzzy``: every window of the turn's units whose length is within
   ``max(1, round(0.5 * n))`` of the quote's ``n`` units and that holds one
   of the quote's content words or a form of it (any of its words, when it
   has none) is
   compared with the quote (RapidFuzz ``fuzz.ratio`` on the units joined by
   spaces, 0-100); the best window counts when its score is >=
   ``min_score`` (default ``DEFAULT_MIN_SCORE`` = 80), ties broken by the
   length closest to the quote's; for a quote of 2-3 units or 2-3 words
   ("he didn't think" is not "I don't think"), the units it
   shares with the window must be evidence as in step 3, by the strict rule
   whatever ``short_evidence`` says (the best window need not be the only
   place in the pair). Of the windows over
   it that score >=
   ``min_score``, one that starts with the quote's first unit and ends with
   its last wins (a word left out or changed inside must not cut an edge
   word off), and of those, the one that holds more of the quote's units in
   order ("You you did" is "You said you did", not "you did").

In every step the quote's last unit may be a prefix of the turn's unit (a
word cut off mid-way: "the new sch" is "the new school"), for quotes of >= 2
units: in steps 1 and 2, where every other unit matches word for word, any
proper prefix, one letter included ("it had come in the m" is "... in the
mail", "a p" is "a pope"), as the authors' rule (which takes any proper
prefix of the last word, also of a one-word quote); in step 4 from 2 letters,
in step 3 from 3 (with a word changed too, a letter or two is no evidence).
A one-unit quote is never cut off: too short to be evidence on its own. A
whole-word match wins over a prefix match.

A phrase said again: a quote that matches word for word (steps 1 and 2) in
several places of a turn that are all the same words ("I said no" twice, a
cut-off "positive train c" where "positive train control" is said twice)
takes the first, as the authors' rule does; so does a short fit (step 3)
whose places are all the same words. A quote that matches in two places
with different words, equally well (a cut-off "I said n" for "no" and
"nothing", two short fits, or two fuzzy windows with the same best score),
is *ambiguous* and not aligned.

**Which turn** (``locate_quote``; it returns a ``QuoteStatus`` for every
quote): a quote filed under one turn is searched in the pair before a fuzzy
match is accepted. Exact or normalized in its own turn: ``aligned`` there
(even when the other turn has it too: the model's label decides). Else
exact or normalized in the other turn: ``other_turn`` (the model filed it
under the wrong speaker; a fuzzy echo of it in its own turn gets no span),
unless the quote has at most 3 units and matches there only with its last
word cut off ("is a" for the other turn's "is abusing": two errors at once).
Else a short fit (step 3) in its own turn: ``aligned``. Else the fuzzy
matches of both turns: the better one wins (``other_turn`` when it is the
other's): fewer unit edits to the quote (units added, left out or
replaced), then more of the quote's units in order, then the higher score
("this has not filed" is the asked turn's "this individual has not filed",
not the other's "they have not filed"); equally good in both is
``ambiguous``. A short fit only in the
other turn is not used (two errors at once).
"""
import dataclasses
import os
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc, Span

from ..pair_doc import TURNS_KEY, get_turns
from .common_words import COMMON_WORDS
from .quote_units import span_units, text_units, unit_words

# -- how a quote's words match a run of a turn's words: the units a quote and a turn
# are compared in, the authors' last-word-prefix rule, word forms, and the per-turn
# matchers of the alignment steps (align_quote / locate_quote below decide between
# them and the turns) ------------------------------------------------------------

# short: quotes of 2-3 units (one more when a unit was added); step 3 takes quotes of at most 4 words
SHORT_UNITS = (2, 3)
# the turn's run a short quote (step 3) fits: 2-5 units, as a 2-3-word phrase with contractions or
# hyphens has more than 3 ("it's a wand", "this I-35 stretch", "that's essentially laboratory-made")
SHORT_RUN = (2, 5)

def _words(q_units: Sequence[str], kept_at: Sequence[int], word_of: Optional[Sequence[int]]) -> int:
    """How many of the quote's words the matching units (``kept_at``) of >= 2 letters come from
    (``word_of``: ``unit_words``; None: each unit a word of its own)."""
    return len({(word_of[k] if word_of is not None else k) for k in kept_at if len(q_units[k]) >= 2})


class Ambiguous(Exception):
    """Two equally good places; ``rank``: how good (``align._rank``), for the choice between the turns."""

    def __init__(self, rank: Tuple[float, ...] = (2, 0, 0, 100.0)):
        super().__init__()
        self.rank = rank


def _find_all(seq: Sequence[str], sub: Sequence[str]) -> List[int]:
    n, m = len(seq), len(sub)
    return [i for i in range(n - m + 1) if list(seq[i : i + m]) == list(sub)]


# The fewest letters of a cut-off last unit each step takes: any proper prefix (the authors' rule) where
# every other unit of the quote matches word for word; where words were changed too (the fuzzy and short
# steps), a letter or two is no evidence of a word.
WORD_FOR_WORD_PREFIX, FUZZY_PREFIX, SHORT_PREFIX = 1, 2, 3


def prefix_ok(q_units: Sequence[str], letters: int = FUZZY_PREFIX) -> bool:
    """Whether a quote's last unit may be a prefix of the turn's unit (a word
    cut off mid-way): for a quote of >= 2 units whose last unit has >= ``letters``
    letters and that is not made of stop words only. The authors' rule takes any
    proper prefix of the last word, in a quote of any length (a one-word quote of
    one letter matches the first word that starts with it): too short to be
    evidence on its own, a one-unit quote is never cut off here."""
    return len(q_units) >= 2 and len(q_units[-1]) >= letters


def _same(window: Sequence[str], q_units: Sequence[str], prefix: bool) -> bool:
    """``window`` equals the quote's units, its last unit possibly extending the quote's."""
    if len(window) != len(q_units) or list(window[:-1]) != list(q_units[:-1]):
        return False
    return window[-1] == q_units[-1] or (prefix and window[-1].startswith(q_units[-1]))


def _distinct(spans: List[Span]) -> List[Span]:
    return [s for k, s in enumerate(spans) if k == 0 or s.start >= spans[k - 1].end]


def _said_again(places: Sequence[Span], stated: Optional[Span] = None) -> Span:
    """The place to take of a quote's equally good places (one or more, in text order, as
    ``_distinct`` keeps them). A phrase said again (every place has the same words: "I said no"
    twice, or a cut-off "small busi" where "small businesses" occurs twice) gives the first, as
    the authors' rule takes it: the first in ``stated`` (the turn the quote was filed under) when
    one is there and ``stated`` is given. Places with different words raise Ambiguous ("I said n"
    for "I said no" and "I said nothing")."""
    if len({tuple(span_units(s)[0]) for s in places}) > 1:
        raise Ambiguous()
    if stated is None:
        return places[0]
    return min(places, key=lambda s: (not (stated.start <= s.start < stated.end), s.start))


def _one_place(spans: List[Span]) -> Optional[Span]:
    """The place of a word-for-word match in one turn (``spans``: its places in text order), or
    None: ``_said_again`` of the distinct places. Raises Ambiguous."""
    spans = _distinct(spans)
    return _said_again(spans) if spans else None


def exact_run(turn_span: Span, quote: str, prefix: bool) -> Optional[Span]:
    text = turn_span.text
    full: List[Span] = []
    cut: List[Span] = []  # the quote's last word is a prefix of the turn's
    start = text.find(quote)
    while start >= 0:
        hit, start = start, text.find(quote, start + 1)
        before = text[hit - 1] if hit > 0 else " "
        after = text[hit + len(quote)] if hit + len(quote) < len(text) else " "
        if before.isalnum() and quote[:1].isalnum():
            continue  # inside a word ("he" in "the"): not a quote of it
        in_word = after.isalnum() and quote[-1:].isalnum()
        if in_word and not prefix:
            continue
        begin = turn_span.start_char + hit
        span = turn_span.doc.char_span(begin, begin + len(quote), alignment_mode="expand")
        if span is not None and span.start >= turn_span.start and span.end <= turn_span.end:
            (cut if in_word else full).append(span)
    return _one_place(full or cut)


def normalized_run(turn_span: Span, q_units: List[str], prefix: bool) -> Optional[Span]:
    units, owners = span_units(turn_span)
    m = len(q_units)
    hits = _find_all(units, q_units)
    if not hits and prefix:
        hits = [i for i in range(len(units) - m + 1) if _same(units[i : i + m], q_units, True)]
    return _one_place([turn_span.doc[owners[h] : owners[h + m - 1] + 1] for h in hits])


def _window_text(window: Sequence[str], q_units: Sequence[str], prefix: bool) -> str:
    last = window[-1]
    if prefix and len(last) > len(q_units[-1]) and last.startswith(q_units[-1]):
        last = q_units[-1]  # compare a cut-off last word with the same cut of the turn's word
    return " ".join(list(window[:-1]) + [last])


def _edges(window: Sequence[str], q_units: Sequence[str], prefix: bool) -> int:
    """How many of the quote's edge units (first, last) the window starts / ends with."""
    first = window[0] == q_units[0]
    last = window[-1] == q_units[-1] or (prefix and window[-1].startswith(q_units[-1]))
    return int(first) + int(last)


def fuzzy_window(turn_span: Span, q_units: List[str], min_score: float, prefix: bool,
                 n_words: Optional[int] = None, ends: bool = False) -> Optional[Tuple[Span, float]]:
    from rapidfuzz import fuzz

    units, owners = span_units(turn_span)
    if not units:
        return None
    n = len(q_units)
    slack = max(1, round(0.5 * n))
    target = " ".join(q_units)
    content = [u for u in q_units if _content(u)] or list(q_units)
    scored: List[Tuple[float, int, int, int]] = []  # score, -|len diff|, start unit, end unit
    for length in range(max(1, n - slack), min(len(units), n + slack) + 1):
        for i in range(len(units) - length + 1):
            score = fuzz.ratio(_window_text(units[i : i + length], q_units, prefix), target)
            # a window shares a content word (any word, when the quote has none) with the quote:
            # "your community" is not "our country"
            window = units[i : i + length]
            if score < min_score or not any(_alike(u, w) for u in content for w in window):
                continue
            # a quote of 2-3 units: the units it shares with the window are evidence (step 3's strict rule:
            # the best window need not be the only place in the pair, so short_evidence does not loosen it)
            if min(n, n_words or n) <= SHORT_UNITS[1] and (
                    not evidence([u for u in q_units if any(u == w or _form_of(u, w) for w in window)])
                    or (not ends and _split(turn_span.doc, owners[i : i + length], [
                        (j, j) for j in range(length) if window[j] in q_units], None))):
                continue  # ... and, as there, no two of its words across a sentence end the quote lacks (``ends``)
            scored.append((score, -abs(length - n), i, i + length))
    if not scored:
        return None
    best = max(scored, key=lambda s: (s[0], s[1]))
    b_start, b_end = owners[best[2]], owners[best[3] - 1] + 1
    for score, _, i, j in scored:
        if score == best[0]:
            s, e = owners[i], owners[j - 1] + 1
            if e <= b_start or s >= b_end:  # an equally good place elsewhere
                raise Ambiguous((1, *_fit(units[best[2] : best[3]], q_units, prefix), float(best[0])))
    # Of the windows over the best one, one that starts and ends with the quote's first
    # and last units wins: a dropped or changed word inside must not cut an edge word off.
    # With the same edges, the window that holds more of the quote's units in order wins: "you you
    # did" is "you said you did", not "you did" (whose "you" is the quote's second unit).
    near = [s for s in scored if s[2] < best[3] and s[3] > best[2]]
    chosen = max(near, key=lambda s: (_edges(units[s[2] : s[3]], q_units, prefix),
                                      _in_order(units[s[2] : s[3]], q_units), s[0], s[1]))
    return turn_span.doc[owners[chosen[2]] : owners[chosen[3] - 1] + 1], float(chosen[0])


def _fit(window: Sequence[str], q_units: Sequence[str], prefix: bool) -> Tuple[int, int]:
    """How well a run of units fits the quote, for the choice between the turns: minus the unit
    edits (units added, left out or replaced) that make it the quote, then how many of the quote's
    units it holds in order; a cut-off last unit counts as its whole word."""
    from rapidfuzz.distance import Levenshtein

    window = _window_text(window, q_units, prefix).split(" ")
    return -Levenshtein.distance(window, list(q_units)), _in_order(window, q_units)


def _in_order(window: Sequence[str], q_units: Sequence[str]) -> int:
    """How many of the quote's units the window holds in order (longest common subsequence)."""
    from rapidfuzz.distance import LCSseq

    return LCSseq.similarity(list(window), list(q_units))


def _content(unit: str) -> bool:
    """A content word: a number, or >= 3 letters and not a stop word."""
    return unit.isdigit() or (len(unit) >= 3 and unit not in STOP_WORDS)


def _alike(unit: str, other: str) -> bool:
    """Two forms of one word: equal, or a common start of >= 4 letters, or the
    shorter (>= 3 letters) starts the other ("camp" / "camps", "step" /
    "stepped", "cut" / "cuts")."""
    common = len(os.path.commonprefix([unit, other]))
    return unit == other or common >= 4 or (common >= 3 and common == min(len(unit), len(other)))


def _stem(unit: str) -> str:
    """A crude stem for telling forms of one word apart from other words:
    "stepped" / "steps" -> "step", "issues" / "issue" -> "issu"; "think" and
    "thing", "fairly" and "fair" stay apart."""
    for suffix in ("ing", "ed", "es", "s"):
        if unit.endswith(suffix) and len(unit) - len(suffix) >= 3:
            unit = unit[: -len(suffix)]
            break
    if len(unit) >= 4 and unit[-1] == unit[-2] and unit[-1] not in "aeiouls":
        unit = unit[:-1]  # "stepp" -> "step"
    return unit[:-1] if len(unit) > 3 and unit.endswith("e") else unit


def _form_of(unit: str, other: str) -> bool:
    """Another form of the same word (step 3): the same crude stem; a stop word has no other forms
    ("note" is not "not", "wed" not "we")."""
    return (unit != other and len(unit) >= 3 and len(other) >= 3 and unit not in STOP_WORDS
            and other not in STOP_WORDS and _stem(unit) == _stem(other))


def evidence(kept: Sequence[str], swap: Optional[Tuple[str, str]] = None, whole: bool = False,
             lenient: bool = False, words: int = 0, changed: bool = False) -> bool:
    """Whether the quote units that match a place (``kept``; "" for a word
    matched only as a cut-off prefix) are evidence of it: two content words,
    or one that is not a frequent English word (``common_words.py``) among
    >= 2 matching units, or (``whole``: the turn's run is the quote's words
    with a filler put in or a word left out) one frequent content word among
    >= 2 matching units. A lone matching unit only when it is not a frequent
    word and the quote's other word replaced a content word with a content
    word (``swap``: the quote's, the turn's); a cut-off word ("") counts for
    none. "the thing", "you said" with a word replaced, or "the process" for
    "election process" could be anywhere.
    ``lenient`` (``short_evidence = "lenient"``, the default of ``locate_quote``)
    also takes matching units of two or more letters from two of the quote's
    words (``words``: "it was" of "it was across" for "It was all across"; not
    "U.S.", nor the "it is" of "it's easy") unless ``changed`` (the quote's
    unit that does not match replaced a word, is another word than a filler
    put in, or a matching word is another form: "who signed the" is not "who
    is the"). A lone word wants a content word for a content word in both
    settings ("she ran" of another pair is no "we ran")."""
    matched = [u for u in kept if u]  # a cut-off word is no evidence of its own, nor a second unit
    content = [u for u in matched if _content(u)]
    if len(content) >= 2 or (whole and content and len(matched) >= 2):
        return True
    if lenient and words >= 2 and not changed:
        return True  # not for frequent words and a word of the quote's own: "who signed the" is no "who is the"
    if not any(u not in COMMON_WORDS for u in content):
        return False
    return len(matched) >= 2 or (swap is not None and _content(swap[0]) and _content(swap[1]))


_SENTENCE_END = frozenset(".?!")


def _split(doc: Doc, owners: Sequence[int], matched: Sequence[Tuple[int, int]], ends: Optional[Sequence[bool]]) -> bool:
    """Whether two matching units of a short quote that are neighbours in the quote and in the turn's
    run (``matched``: (position in the run, the quote unit's index); ``owners``: the run's tokens) lie
    on either side of a sentence end of the turn that the quote does not have: words next to each
    other across a sentence end are no phrase ("process that takes" is not "process. That is")."""
    for (a, qa), (b, qb) in zip(matched, matched[1:]):
        if b == a + 1 and qb == qa + 1 and not (ends and ends[qa]) and owners[b] > owners[a] and (
                _word_ends(doc[owners[a]].text) or any(doc[t].text in _SENTENCE_END for t in range(owners[a] + 1, owners[b]))):
            return True
    return False


def filler(unit: str) -> bool:
    """A word LLMs put into quotes: a stop word ("just", "very") or an adverb
    in -ly ("actually", "basically")."""
    return unit in STOP_WORDS or (len(unit) >= 5 and unit.endswith("ly"))


def _one_word(doc, a: int, b: int) -> bool:
    """Tokens ``a`` .. ``b`` are one whitespace word ("haven't" as one token, or "have" + "n't")."""
    return a == b or (b == a + 1 and not doc[a].whitespace_)


def short_fits(turns: Sequence[Span], q_units: List[str], lenient: bool = False,
               word_of: Optional[Sequence[int]] = None,
               ends: Optional[Sequence[bool]] = None) -> List[Tuple[Span, int, int, float]]:
    """Every place in ``turns`` where a quote of 2-6 units is one edit from a run
    of 2-5 units (``align.py``'s module doc, step 3): (span, quote units
    matched, penalty, score). ``lenient``: ``short_evidence = "lenient"``;
    ``word_of``: per quote unit, its word (``unit_words``; None: each unit a
    word of its own); ``ends``: per quote unit, whether its word ends a sentence in the quote
    (None: none does). Penalty 1: the quote's unit that does not match
    read as replacing the turn's unit although it is a ``filler`` (more likely
    put in: "just", "actually"), or as put in although it is not (more likely
    a replacement); else 0."""
    from rapidfuzz import fuzz

    n = len(q_units)
    if not SHORT_UNITS[0] <= n <= SHORT_RUN[1] + 1:
        return []
    prefix = prefix_ok(q_units, SHORT_PREFIX)
    found: List[Tuple[Span, int, int, float]] = []
    lengths = sorted({n - 1, n} & set(range(SHORT_RUN[0], SHORT_RUN[1] + 1)))
    for turn_span in turns:
        units, owners = span_units(turn_span)
        for length in lengths + [n + 1, n + 2]:
            for i in range(len(units) - length + 1):
                window = units[i : i + length]
                extra = swap = None  # the quote's unit that does not match; (it, the turn's unit)
                if length > n:  # a word left out of the quote (one unit, or a contraction's two): all its units match
                    gap = length - n
                    fits = any(_same(window[:k] + window[k + gap :], q_units, prefix)
                               and (gap == 1 or _one_word(turn_span.doc, owners[i + k], owners[i + k + 1]))
                               for k in range(1, n))
                    kept = list(q_units) if fits else None
                    kept_at = list(range(n))
                elif length == n:  # one unit replaced (or only other forms of the turn's words)
                    same = [_same([window[k]], [q_units[k]], prefix and k == n - 1) for k in range(n)]
                    alike = [not same[k] and _form_of(window[k], q_units[k]) for k in range(n)]
                    other = [k for k in range(n) if not same[k] and not alike[k]]
                    fits = len(other) <= 1 and sum(same) < n
                    kept_at = [k for k in range(n) if same[k] or alike[k]]
                    kept = [q_units[k] for k in kept_at] if fits else None
                    if other:
                        extra, swap = q_units[other[0]], (q_units[other[0]], window[other[0]])
                    if kept and _split(turn_span.doc, owners[i : i + length], [(k, k) for k in kept_at], ends):
                        continue
                else:  # one unit added
                    added = [k for k in range(n) if _same(window, q_units[:k] + q_units[k + 1 :], prefix and k < n - 1)]
                    kept = list(window) if added else None
                    extra = q_units[added[0]] if added else None
                    if added and _split(turn_span.doc, owners[i : i + length],
                                        [(j, j + int(j >= added[0])) for j in range(length)], ends):
                        continue
                    kept_at = [k for k in range(n) if not added or k != added[0]]
                if kept and window[-1] != q_units[-1] and window[-1].startswith(q_units[-1]) and kept[-1] in (
                        q_units[-1], window[-1]):
                    kept = kept[:-1] + [""]  # a cut-off word: no evidence of its own
                    kept_at = [k for k in kept_at if k != n - 1]
                whole = length > n or (length == n - 1 and extra is not None and filler(extra))
                # a word replaced, another than a filler put in, or another form of a word
                changed = (extra is not None and not whole) or (length == n and any(alike))
                if not kept or not evidence(kept, swap, whole, lenient, _words(q_units, kept_at, word_of), changed):
                    continue
                # a filler that does not match was more likely put in ("just"), another word more
                # likely replaces the turn's word: the other reading of the same place loses
                penalty = int(extra is not None and filler(extra) == (length == n))
                span = turn_span.doc[owners[i] : owners[i + length - 1] + 1]
                found.append((span, len(kept), penalty, float(fuzz.ratio(" ".join(window), " ".join(q_units)))))
    return found


# -- placing a quote ----------------------------------------------------------------

DEFAULT_MIN_SCORE = 80.0
# What the matching words of a short quote (steps 3 and 4) must be: neither places a quote of
# another pair in the alignment benchmark, "lenient" finds more quotes with a word added or left
# out (docs/llm.md, "Alignment: measured").
SHORT_EVIDENCE = ("lenient", "strict")
DEFAULT_SHORT_EVIDENCE = "lenient"
# How a quote fared (QuoteStatus.status).
ALIGNED = "aligned"
OTHER_TURN = "other_turn"
NOT_FOUND = "not_found"
AMBIGUOUS = "ambiguous"
EMPTY = "empty"


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


def _check(turn_span: Span, quote: str, min_score: float, short_evidence: str) -> bool:
    """Checks the arguments; whether the short evidence is lenient."""
    if not isinstance(turn_span, Span):
        raise TypeError(f"align_quote needs a turn Span (e.g. from get_turns(doc)), got {type(turn_span).__name__}")
    if not isinstance(quote, str):
        raise TypeError(f"align_quote needs the quote as a string, got {type(quote).__name__}")
    if not 0 <= float(min_score) <= 100:
        raise ValueError(f"min_score must be in [0, 100], got {min_score!r}")
    return lenient_evidence(short_evidence)


def lenient_evidence(short_evidence: str) -> bool:
    """Whether ``short_evidence`` (one of ``SHORT_EVIDENCE``) is lenient; ValueError for another value."""
    if short_evidence not in SHORT_EVIDENCE:
        raise ValueError(f"short_evidence must be one of {SHORT_EVIDENCE}, got {short_evidence!r}")
    return short_evidence == "lenient"


def _rank(found: QuoteAlignment, q_units: Sequence[str]) -> Tuple[float, ...]:
    """How good a match is: exact and normalized beat any fuzzy one; of two fuzzy ones, the one
    with fewer unit edits to the quote, then more of its units in order (``_fit``), then the
    higher score: "this has not filed" is "this individual has not filed" (one unit left out),
    not "they have not filed" (two replaced) although that scores higher."""
    if found.method in ("exact", "normalized"):
        return (2, 0, 0, 100.0)
    return (1, *_fit(span_units(found.span)[0], q_units, prefix_ok(q_units)), found.score)


def _word_for_word(turn_span: Span, quote: str) -> Optional[QuoteAlignment]:
    """Steps 1 and 2 of the module doc in one turn. Raises Ambiguous."""
    quote = quote.strip()
    q_units = text_units(quote)
    if not q_units:
        return None
    prefix = prefix_ok(q_units, WORD_FOR_WORD_PREFIX)
    span = exact_run(turn_span, quote, prefix)
    if span is not None:
        return QuoteAlignment(span, "exact", 100.0)
    span = normalized_run(turn_span, q_units, prefix)
    if span is not None:
        return QuoteAlignment(span, "normalized", 100.0)
    return None


def _ends_inside(quote: str) -> bool:
    """Whether a word of ``quote`` before its last ends a sentence ("process. That is")."""
    words = [word for word in quote.split() if text_units(word)]
    return any(_word_ends(word) for word in words[:-1])


def _word_ends(word: str) -> bool:
    """Whether a whitespace word ends a sentence (".", "?", "!", before closing quotes or brackets)."""
    return word.rstrip("\"')”’").endswith(tuple(_SENTENCE_END))


def _n_words(quote: str) -> int:
    """How many whitespace words of ``quote`` hold a unit."""
    return sum(1 for word in quote.split() if text_units(word))


def _uniqueshort_fits(turns: Sequence[Span], quote: str, lenient: bool) -> Optional[QuoteAlignment]:
    """Step 3: the one place in ``turns`` where a short quote fits with one
    edit (of the fits that match the most quote units), else None."""
    n_words = _n_words(quote)
    if n_words == SHORT_UNITS[1] + 2:
        return _inner_filler_fit(turns, quote, lenient)
    if n_words > SHORT_UNITS[1] + 1:
        return None  # not a quote of 2-3 words (one more when a word was added)
    words = quote.split()
    word_of = unit_words(quote)
    ends = [_word_ends(words[k]) for k in word_of]
    places = short_fits(turns, text_units(quote), lenient, word_of, ends)
    if not places:
        return None
    most = max(p[1] for p in places)
    places = sorted((p for p in places if p[1] == most), key=lambda p: (p[0].start, p[0].end))
    distinct = _distinct([p[0] for p in places])
    try:  # unlike a word-for-word match, the places span the pair: the stated turn (``turns[0]``) first
        first = _said_again(distinct, turns[0])
    except Ambiguous:
        return None  # fits with different words: no short fit (the fuzzy step may still find one)
    if len(distinct) > 1:  # the same words said again: the fits over the place taken
        places = [p for p in places if p[0].start < first.end and p[0].end > first.start]
    best = max(places, key=lambda p: (-p[2], p[3], p[0].end - p[0].start))
    return QuoteAlignment(best[0], "short", best[3])


def _inner_filler_fit(turns: Sequence[Span], quote: str, lenient: bool) -> Optional[QuoteAlignment]:
    """Step 3 for a quote of 4 words with a filler put in inside ("sell a basically free ticket?"): the
    one place in ``turns`` of the quote without one of its inner fillers, word for word, when its
    words are evidence, else None."""
    from rapidfuzz import fuzz

    words = [word for word in quote.split() if text_units(word)]
    spans: List[Span] = []
    for k in range(1, len(words) - 1):
        if not all(filler(u) for u in text_units(words[k])):
            continue
        rest = " ".join(words[:k] + words[k + 1 :])
        q_units = text_units(rest)
        if not evidence(q_units, whole=True, lenient=lenient, words=_words(q_units, range(len(q_units)), unit_words(rest))):
            continue
        for turn_span in turns:
            try:
                span = normalized_run(turn_span, q_units, prefix_ok(q_units, WORD_FOR_WORD_PREFIX))
            except Ambiguous:
                return None
            if span is not None:
                spans.append(span)
    spans = sorted(spans, key=lambda span: (span.start, span.end))
    if len(_distinct(spans)) != 1:
        return None
    units = span_units(spans[0])[0]
    return QuoteAlignment(spans[0], "short", float(fuzz.ratio(" ".join(units), " ".join(text_units(quote)))))


def _pair_turns(turn_span: Span) -> List[Span]:
    """``turn_span`` and, in a pair Doc, the other turn."""
    if TURNS_KEY in turn_span.doc.spans and len(turn_span.doc.spans[TURNS_KEY]) == 2:
        return sorted(get_turns(turn_span.doc), key=lambda t: t.start != turn_span.start)
    return [turn_span]


def align_quote(
    turn: Span, quote: str, *, min_score: float = DEFAULT_MIN_SCORE, fuzzy: bool = True,
    short_evidence: str = DEFAULT_SHORT_EVIDENCE,
) -> Optional[QuoteAlignment]:
    """Find ``quote`` in ``turn`` (module doc): a ``QuoteAlignment`` with the
    aligned span (same Doc as ``turn``), its method and score, or None when
    the quote is not found, has no letters or digits, or is ambiguous
    (``locate_quote`` says which). Steps 1, 2 and 4 search ``turn`` only
    (``locate_quote`` also weighs the other turn); step 3 (``short``, with
    ``fuzzy``) needs its one place in the pair (both turns of ``turn.doc``
    when it is a pair Doc) to be in ``turn``. ``short_evidence``: what a short
    quote's matching words must be (``SHORT_EVIDENCE``, module doc)."""
    lenient = _check(turn, quote, min_score, short_evidence)
    q_units = text_units(quote)
    try:
        found = _word_for_word(turn, quote)
        if found is None and fuzzy and q_units:
            short = _uniqueshort_fits(_pair_turns(turn), quote, lenient)
            if short is not None and short.start >= turn.start and short.end <= turn.end:
                return short
            window = fuzzy_window(turn, q_units, min_score, prefix_ok(q_units), _n_words(quote), _ends_inside(quote))
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
    short_evidence: str = DEFAULT_SHORT_EVIDENCE,
) -> QuoteStatus:
    """Find ``quote``, filed under the turn ``side`` ("first" = guest,
    "second" = host) of a pair Doc, in the pair (module doc, "Which turn").
    A quote placed in the other turn has status ``other_turn``; its span is
    kept (``start``/``end`` set, ``side_found`` = the other side) when
    ``use_other_turn``, else it is reported and dropped. ``short_evidence``:
    what a short quote's matching words must be (``SHORT_EVIDENCE``, module doc)."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    turns = dict(zip(SIDES, get_turns(doc)))
    lenient = _check(turns[side], quote, min_score, short_evidence)
    if not text_units(quote):
        return QuoteStatus(quote, side, EMPTY)
    other = SIDES[1 - SIDES.index(side)]
    pair = (turns[side], turns[other])
    results: Dict[str, object] = {}
    for name in (side, other):
        try:
            results[name] = _word_for_word(turns[name], quote)
        except Ambiguous as err:
            results[name] = err
        if name == side and results[name] is not None:
            break  # word for word in its own turn (or twice there): the other turn cannot beat it
    asked, elsewhere = results[side], results.get(other)
    if isinstance(asked, Ambiguous):
        return QuoteStatus(quote, side, AMBIGUOUS)
    if asked is not None:
        return _status(quote, side, ALIGNED, asked, side)
    if elsewhere is not None and not _short_cut(elsewhere, quote):  # word for word only in the other turn
        if isinstance(elsewhere, Ambiguous):
            return QuoteStatus(quote, side, NOT_FOUND)
        return _status(quote, side, OTHER_TURN, elsewhere, other, use_other_turn)
    if not fuzzy:
        return QuoteStatus(quote, side, NOT_FOUND)
    short = _uniqueshort_fits(pair, quote, lenient)
    if short is not None and short.start >= turns[side].start and short.end <= turns[side].end:
        return _status(quote, side, ALIGNED, short, side)
    fuzzy_found: Dict[str, object] = {}
    q_units = text_units(quote)
    for name in (side, other):
        try:
            found = fuzzy_window(turns[name], q_units, min_score, prefix_ok(q_units), _n_words(quote),
                                 _ends_inside(quote))
            fuzzy_found[name] = QuoteAlignment(found[0], "fuzzy", found[1]) if found else None
        except Ambiguous as err:
            fuzzy_found[name] = err
    ranks = {name: None if r is None else r.rank if isinstance(r, Ambiguous) else _rank(r, q_units)
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


def _short_cut(found: object, quote: str) -> bool:
    """Whether a word-for-word match (or Ambiguous) of a quote of at most 3 units reads its last
    unit as a cut-off word: in the other turn that is two errors at once ("is a" of another pair
    is no "is abusing" there)."""
    q_units = text_units(quote)
    return (isinstance(found, QuoteAlignment) and len(q_units) <= SHORT_UNITS[1]
            and span_units(found.span)[0][-1] != q_units[-1])


def _status(quote: str, side: str, status: str, found: QuoteAlignment, side_found: str,
            keep: bool = True) -> QuoteStatus:
    if keep:
        return QuoteStatus(quote, side, status, found.method, found.score, found.start, found.end, side_found)
    return QuoteStatus(quote, side, status, found.method, found.score, side_found=side_found)
