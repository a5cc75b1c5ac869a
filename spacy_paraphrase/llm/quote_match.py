"""How a quote's words match a run of a turn's words: the units a quote and a
turn are compared in, the authors' last-word-prefix rule, word forms, and the
per-turn matchers of the alignment steps (``align.py``'s module doc states the
rules; ``align_quote`` / ``locate_quote`` decide between them and the turns)."""
import os
import re
from typing import List, Optional, Sequence, Tuple

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Span

from .common_words import COMMON_WORDS

# short: quotes of 2-3 units (one more when a unit was added)
SHORT_UNITS = (2, 3)

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
    """The units of a string (``align.py``'s module doc, step 2)."""
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


class Ambiguous(Exception):
    """Two equally good places; ``rank``: how good (``align._rank``), for the choice between the turns."""

    def __init__(self, rank: Tuple[int, float] = (2, 100.0)):
        super().__init__()
        self.rank = rank


def _find_all(seq: Sequence[str], sub: Sequence[str]) -> List[int]:
    n, m = len(seq), len(sub)
    return [i for i in range(n - m + 1) if list(seq[i : i + m]) == list(sub)]


def prefix_ok(q_units: Sequence[str]) -> bool:
    """The authors' rule: a quote's last unit may be a prefix of the turn's
    unit (a word cut off mid-way); not for a one-unit quote, nor for a
    last unit of one letter."""
    return len(q_units) >= 2 and len(q_units[-1]) >= 2


def _same(window: Sequence[str], q_units: Sequence[str], prefix: bool) -> bool:
    """``window`` equals the quote's units, its last unit possibly extending the quote's."""
    if len(window) != len(q_units) or list(window[:-1]) != list(q_units[:-1]):
        return False
    return window[-1] == q_units[-1] or (prefix and window[-1].startswith(q_units[-1]))


def _distinct(spans: List[Span]) -> List[Span]:
    return [s for k, s in enumerate(spans) if k == 0 or s.start >= spans[k - 1].end]


def exact_run(turn: Span, quote: str, prefix: bool) -> Optional[Span]:
    text = turn.text
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
        span = turn.doc.char_span(turn.start_char + hit, turn.start_char + hit + len(quote), alignment_mode="expand")
        if span is not None and span.start >= turn.start and span.end <= turn.end:
            (cut if in_word else full).append(span)
    spans = _distinct(full or cut)
    if len(spans) > 1:
        raise Ambiguous()
    return spans[0] if spans else None


def normalized_run(turn: Span, q_units: List[str], prefix: bool) -> Optional[Span]:
    units, owners = span_units(turn)
    m = len(q_units)
    hits = _find_all(units, q_units)
    if not hits and prefix:
        hits = [i for i in range(len(units) - m + 1) if _same(units[i : i + m], q_units, True)]
    if not hits:
        return None
    spans = _distinct([turn.doc[owners[h] : owners[h + m - 1] + 1] for h in hits])
    if len(spans) > 1:
        raise Ambiguous()
    return spans[0]


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


def fuzzy_window(turn: Span, q_units: List[str], min_score: float, prefix: bool) -> Optional[Tuple[Span, float]]:
    from rapidfuzz import fuzz

    units, owners = span_units(turn)
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
            # a quote of 2-3 units: the units it shares with the window are evidence (step 3's rule)
            if n <= SHORT_UNITS[1] and not evidence([u for u in q_units if any(u == w or _form_of(u, w) for w in window)]):
                continue
            scored.append((score, -abs(length - n), i, i + length))
    if not scored:
        return None
    best = max(scored, key=lambda s: (s[0], s[1]))
    b_start, b_end = owners[best[2]], owners[best[3] - 1] + 1
    for score, _, i, j in scored:
        if score == best[0]:
            s, e = owners[i], owners[j - 1] + 1
            if e <= b_start or s >= b_end:  # an equally good place elsewhere
                raise Ambiguous((1, float(best[0])))
    # Of the windows over the best one, one that starts and ends with the quote's first
    # and last units wins: a dropped or changed word inside must not cut an edge word off.
    near = [s for s in scored if s[2] < best[3] and s[3] > best[2]]
    chosen = max(near, key=lambda s: (_edges(units[s[2] : s[3]], q_units, prefix), s[0], s[1]))
    return turn.doc[owners[chosen[2]] : owners[chosen[3] - 1] + 1], float(chosen[0])


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
    """Another form of the same word (step 3): the same crude stem."""
    return unit != other and len(unit) >= 3 and len(other) >= 3 and _stem(unit) == _stem(other)


def evidence(kept: Sequence[str], swap: Optional[Tuple[str, str]] = None, whole: bool = False) -> bool:
    """Whether the quote units that match a place (``kept``; "" for a word
    matched only as a cut-off prefix) are evidence of it: two content words,
    or one that is not a frequent English word (``common_words.py``) among
    >= 2 matching units, or (``whole``: the turn's run is the quote's words
    with a filler put in or a word left out) one frequent content word among
    >= 2 matching units. A lone matching unit only when it is not a frequent
    word and the quote's other word replaced a content word with a content
    word (``swap``: the quote's, the turn's). "the thing", "you said" with a
    word replaced, or "the process" for "election process" could be anywhere."""
    content = [u for u in kept if _content(u)]
    if len(content) >= 2 or (whole and content and len(kept) >= 2):
        return True
    if not any(u not in COMMON_WORDS for u in content):
        return False
    return len(kept) >= 2 or (swap is not None and _content(swap[0]) and _content(swap[1]))


def filler(unit: str) -> bool:
    """A word LLMs put into quotes: a stop word ("just", "very") or an adverb
    in -ly ("actually", "basically")."""
    return unit in STOP_WORDS or (len(unit) >= 5 and unit.endswith("ly"))


def _one_word(doc, a: int, b: int) -> bool:
    """Tokens ``a`` .. ``b`` are one whitespace word ("haven't" as one token, or "have" + "n't")."""
    return a == b or (b == a + 1 and not doc[a].whitespace_)


def short_fits(turns: Sequence[Span], q_units: List[str]) -> List[Tuple[Span, int, int, float]]:
    """Every place in ``turns`` where a 2-4-unit quote is one edit from a run
    of 2-3 units (``align.py``'s module doc, step 3): (span, quote units
    matched, penalty, score). Penalty 1: the quote's unit that does not match
    read as replacing the turn's unit although it is a ``filler`` (more likely
    put in: "just", "actually"), or as put in although it is not (more likely
    a replacement); else 0."""
    from rapidfuzz import fuzz

    n = len(q_units)
    if not SHORT_UNITS[0] <= n <= SHORT_UNITS[1] + 1:
        return []
    prefix = prefix_ok(q_units) and len(q_units[-1]) >= 3
    found: List[Tuple[Span, int, int, float]] = []
    lengths = sorted({n - 1, n} & set(range(SHORT_UNITS[0], SHORT_UNITS[1] + 1)))
    for turn in turns:
        units, owners = span_units(turn)
        for length in lengths + [n + 1, n + 2]:
            for i in range(len(units) - length + 1):
                window = units[i : i + length]
                extra = swap = None  # the quote's unit that does not match; (it, the turn's unit)
                if length > n:  # a word left out of the quote (one unit, or a contraction's two): all its units match
                    gap = length - n
                    fits = any(_same(window[:k] + window[k + gap :], q_units, prefix)
                               and (gap == 1 or _one_word(turn.doc, owners[i + k], owners[i + k + 1])) for k in range(1, n))
                    kept = list(q_units) if fits else None
                elif length == n:  # one unit replaced (or only other forms of the turn's words)
                    same = [_same([window[k]], [q_units[k]], prefix and k == n - 1) for k in range(n)]
                    alike = [not same[k] and _form_of(window[k], q_units[k]) for k in range(n)]
                    other = [k for k in range(n) if not same[k] and not alike[k]]
                    fits = len(other) <= 1 and sum(same) < n
                    kept = [q_units[k] for k in range(n) if same[k] or alike[k]] if fits else None
                    if other:
                        extra, swap = q_units[other[0]], (q_units[other[0]], window[other[0]])
                else:  # one unit added
                    added = [k for k in range(n) if _same(window, q_units[:k] + q_units[k + 1 :], prefix and k < n - 1)]
                    kept = list(window) if added else None
                    extra = q_units[added[0]] if added else None
                if kept and window[-1] != q_units[-1] and window[-1].startswith(q_units[-1]) and kept[-1] in (
                        q_units[-1], window[-1]):
                    kept = kept[:-1] + [""]  # a cut-off word: no evidence of its own
                whole = length > n or (length == n - 1 and extra is not None and filler(extra))
                if not kept or not evidence(kept, swap, whole):
                    continue
                # a filler that does not match was more likely put in ("just"), another word more
                # likely replaces the turn's word: the other reading of the same place loses
                penalty = int(extra is not None and filler(extra) == (length == n))
                span = turn.doc[owners[i] : owners[i + length - 1] + 1]
                found.append((span, len(kept), penalty, float(fuzz.ratio(" ".join(window), " ".join(q_units)))))
    return found
