"""Quote alignment on quotes made from ContextDeP dev highlights by the
paper's failure types, against the authors' exact rule (docs/llm.md).

For every majority-paraphrase dev pair (2 x "yes" votes >= annotators), the
intended spans are the maximal runs of words that most of its "yes"
annotators highlighted (2 x count >= yes votes), per turn. Each span becomes
quotes of these kinds (seeded):

- ``verbatim``: the span's words;
- ``omitted_word``: one inner word left out (spans of >= 4 words);
- ``added_word``: a filler word put in ("really", "just", ...; >= 3 words);
- ``contraction``: "you've" <-> "you have" etc. (spans that have one);
- ``case``: the quote upper-cased; ``punctuation``: edge punctuation stripped,
  commas removed, a period added, in curly quotes;
- ``wrong_turn``: the verbatim quote filed under the other speaker (unless
  that speaker said it word for word too: then that turn is right; counted
  in ``n_wrong_turn_in_both``);
  ``wrong_turn_echo``: those of them that also match the stated turn
  fuzzily (a window of it scores >= ``min_score``) but not word for word;
- ``truncated_last``: the last word cut off mid-way ("the new sch"; spans of
  >= 2 words whose last word has >= 4 letters);
- ``dropped_second``: the second word left out (spans of >= 4 words);
- ``short_added`` / ``short_replaced``: 2-3-word spans with a filler word put
  in / one word replaced by a common word, at every place (each span gives
  3-4 / 2-3 quotes); ``part_added`` / ``part_replaced``: the same for
  ``--short-windows`` (default 2) seeded 2-3-word runs of each longer span
  that hold a content word (a model quoting part of a highlight; the
  intended span is then that run; not in the mean Jaccard);
- ``not_in_text``: a span of *another* pair, filed under this pair's turn
  (expected: aligned nowhere); ``not_in_text_short``: 2-3-word spans of
  other pairs, as they are and with one word replaced (the quotes the
  ``short`` step could take); ``not_in_text_program``: 2-3-word runs of
  the turns of other pairs of the same program (the QID's broadcaster,
  "CNN" / "NPR": the data names no shows, and dev has one pair per
  interview), as they are and with one word replaced (phrases of the same
  talk: "who signed the" where the pair has "who is the").

Kinds of issue 50, drawn from a random stream of their own (``seed + 1``), so
that the quotes of the kinds above stay the same:

- ``truncated_every``: the last word cut to every proper prefix, one letter
  included ("it had come in the m"; spans of >= 2 words whose last word has
  >= 2 letters), each prefix a quote;
- ``inner_filler`` / ``inner_filler_4``: a filler (``INNER_FILLERS``) put in
  at each inner place of a 2-3-word / 4-word span ("Rudy basically
  Giuliani").

These and the ``part_*`` kinds are reported per kind, not in the mean
Jaccard (which keeps the kinds it was measured on before). Per made quote,
also whether its span is the intended one (``ours_perfect`` /
``authors_perfect``) and whether the authors' rule's Jaccard beats ours
(``below_authors``).

For each kind: how often the quote gives a span, how often that span is in
the wrong turn (for ``wrong_turn*``: in the stated one), the mean word-level
Jaccard with the intended span (0 when nothing is aligned; for
``not_in_text*`` the share aligned anywhere is the error rate), for
``locate_quote`` (default settings: other turn used, ``--short-evidence``) and for the authors'
rule (``exact_word_match`` in the stated turn).

Unique places (``unique_place``; the definition is printed with the results,
``UNIQUE_DOC``): each made quote is also classified by whether its intended
place is its unique match in the pair, and the share found (a span that
overlaps the intended words) and the Jaccard are given over all quotes and
over the unique ones, with the counts. The issue's bars for short quotes
("found when the match is unique in the pair") are read on the unique ones.
Quotes of other pairs that have a place here that would count as unique
(``unique_fit``) are counted too, and the replaced and invented ones split by
whether the words they keep there hold a rare word (``keeps_rare_word``).


    python -m benchmarks.run_llm_alignment ../shared/data/contextdep/dev.tsv \
        -o benchmarks/results/llm_alignment.json
    python -m benchmarks.run_llm_alignment ../shared/data/contextdep/train.tsv \
        -o benchmarks/results/llm_alignment_train.json

``--short-evidence strict`` runs ``locate_quote`` with the other setting (the
``*_strict`` results); ``RESULT.json --bars MORE.json ...`` prints the issue's
bars, one row per result (docs/llm.md).

``--log FILE`` writes every quote and what was found (JSONL). docs/llm.md's
before -> now table: this benchmark run on older code (a checkout of the
commit, with this file) gives BEFORE.json, then
``python -m benchmarks.run_llm_alignment benchmarks/results/llm_alignment.json --before BEFORE.json``.
"""
import argparse
import ast
import csv
import json
import random
import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import spacy

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.llm.align import (
    DEFAULT_MIN_SCORE, DEFAULT_SHORT_EVIDENCE, SHORT_EVIDENCE, locate_quote, text_units,
)

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


FILLERS = ["really", "just", "actually", "very", "also"]
CONTRACTIONS = [("you've", "you have"), ("don't", "do not"), ("it's", "it is"), ("i'm", "i am"),
                ("can't", "cannot"), ("we're", "we are"), ("didn't", "did not"), ("that's", "that is"),
                ("they're", "they are"), ("isn't", "is not"), ("won't", "will not"), ("i've", "i have"),
                ("we've", "we have"), ("doesn't", "does not"), ("there's", "there is"), ("you're", "you are")]
INNER_FILLERS = FILLERS + ["basically", "certainly", "literally"]
REPLACEMENTS = ["people", "thing", "really", "good", "new", "time", "way", "big", "many", "said", "think", "work"]
KINDS = ("verbatim", "omitted_word", "added_word", "contraction", "case", "punctuation", "wrong_turn",
         "wrong_turn_echo", "truncated_last", "dropped_second", "short_added", "short_replaced", "part_added",
         "part_replaced", "not_in_text", "not_in_text_short", "not_in_text_program", "truncated_every", "inner_filler",
         "inner_filler_4")
PARTS = ("part_added", "part_replaced")  # reported on their own, not in the mean
NEW = ("truncated_every", "inner_filler", "inner_filler_4")  # issue 50's kinds: on their own too
INVENTED = ("not_in_text", "not_in_text_short", "not_in_text_program")
REPLACED = ("short_replaced", "part_replaced")


def read_pairs(path: Path) -> List[Dict]:
    rows = defaultdict(list)
    with open(path, newline="", encoding="utf8") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            rows[r["QID"]].append(r)
    pairs = []
    for qid, rs in rows.items():
        n = len(rs)
        yes = [r for r in rs if r["Is Paraphrase"].strip() == "1"]
        if 2 * len(yes) < n or not yes:
            continue
        g_words = rs[0]["Guest Tokens"].split(" ")
        h_words = rs[0]["Host Tokens"].split(" ")
        spans = []
        for side, words, col in (("first", g_words, "Guest Highlights"), ("second", h_words, "Host Highlights")):
            counts = [0] * len(words)
            for r in yes:
                for i, v in enumerate(ast.literal_eval(r[col])):
                    counts[i] += int(v)
            on = [2 * c >= len(yes) and words[i] != "" for i, c in enumerate(counts)]
            i = 0
            while i < len(on):
                if on[i]:
                    j = i
                    while j < len(on) and on[j]:
                        j += 1
                    spans.append((side, i, j))
                    i = j
                else:
                    i += 1
        pairs.append({"qid": qid, "words": (g_words, h_words), "spans": spans})
    return pairs


def variants(words: List[str], rng: random.Random) -> Dict[str, str]:
    text = " ".join(words)
    out = {"verbatim": text, "case": text.upper()}
    if len(words) >= 4:
        k = rng.randrange(1, len(words) - 1)
        out["omitted_word"] = " ".join(words[:k] + words[k + 1 :])
    if len(words) >= 3:
        k = rng.randrange(1, len(words))
        out["added_word"] = " ".join(words[:k] + [rng.choice(FILLERS)] + words[k:])
    low = text.lower()
    for short, full in CONTRACTIONS:
        if re.search(rf"\b{re.escape(short)}\b", low):
            out["contraction"] = re.sub(rf"\b{re.escape(short)}\b", full, low)
            break
        if re.search(rf"\b{re.escape(full)}\b", low):
            out["contraction"] = re.sub(rf"\b{re.escape(full)}\b", short, low)
            break
    out["punctuation"] = "\u201c" + re.sub(r"[,;:]", "", text).strip(".,!?-\u2014 ") + ".\u201d"
    last = re.sub(r"\W+$", "", words[-1])
    if len(words) >= 2 and len(last) >= 4 and last.isalpha():
        out["truncated_last"] = " ".join(words[:-1] + [last[: rng.randrange(2, len(last))]])
    if len(words) >= 4:
        out["dropped_second"] = " ".join(words[:1] + words[2:])
    return out


def short_variants(words: List[str], rng: random.Random) -> List[Tuple[str, str]]:
    """A 2-3-word quote with a filler put in at every place, and with each of its words replaced."""
    added = [("short_added", " ".join(words[:k] + [rng.choice(FILLERS)] + words[k:])) for k in range(len(words) + 1)]
    return added + [("short_replaced", replace_one(words, rng, k)) for k in range(len(words))]


def cut_every(words: List[str]) -> List[Tuple[str, str]]:
    """The span with its last word cut to every proper prefix, one letter included (>= 2 words)."""
    last = re.sub(r"\W+$", "", words[-1])
    if len(words) < 2 or len(last) < 2 or not last.isalpha():
        return []
    return [("truncated_every", " ".join(words[:-1] + [last[:c]])) for c in range(1, len(last))]


def inner_fillers(words: List[str], rng: random.Random) -> List[Tuple[str, str]]:
    """A 2-4-word span with a filler put in at each inner place."""
    if not 2 <= len(words) <= 4:
        return []
    kind = "inner_filler" if len(words) <= 3 else "inner_filler_4"
    return [(kind, " ".join(words[:k] + [rng.choice(INNER_FILLERS)] + words[k:])) for k in range(1, len(words))]


def program_runs(pair: Dict, pairs: List[Dict], rng: random.Random, n: int = 2) -> List[Tuple[str, str]]:
    """``n`` 2-3-word runs of the turns of other pairs of the same program (the QID's broadcaster), each as it
    is and with one word replaced."""
    program = pair["qid"].split("-")[0]
    others = [p for p in pairs if p is not pair and p["qid"].split("-")[0] == program]
    out = []
    for _ in range(n if others else 0):
        words = [w for w in rng.choice(others)["words"][rng.randrange(2)] if w]
        m = rng.choice((2, 3))
        if len(words) < m:
            continue
        i = rng.randrange(len(words) - m + 1)
        out += [("not_in_text_program", " ".join(words[i : i + m])),
                ("not_in_text_program", replace_one(words[i : i + m], rng))]
    return out


def short_windows(words: List[str], rng: random.Random, n: int) -> List[Tuple[int, int]]:
    """``n`` seeded 2-3-word runs of a span of >= 4 words that hold a content word."""
    from spacy.lang.en.stop_words import STOP_WORDS

    runs = [(i, i + m) for m in (2, 3) for i in range(len(words) - m + 1)
            if any(len(u) >= 3 and u not in STOP_WORDS for u in text_units(" ".join(words[i : i + m])))]
    return rng.sample(runs, min(n, len(runs))) if len(words) >= 4 else []


def replace_one(words: List[str], rng: random.Random, k: int = -1) -> str:
    k = rng.randrange(len(words)) if k < 0 else k
    new = rng.choice([w for w in REPLACEMENTS if w != words[k].lower()])
    return " ".join(words[:k] + [new] + words[k + 1 :])


def in_text(units: List[str], q: List[str]) -> bool:
    """Whether a run of ``units`` is ``q``, or ``q`` with a filler (a stop word
    or an -ly adverb, ``align.filler``) put in, or with one inner unit
    left out: the pair's own short_added / dropped-word quote, not an invented one."""
    from spacy_paraphrase.llm.align import filler

    runs = [q] + [q[:k] + q[k + 1 :] for k in range(len(q)) if len(q) > 2 and filler(q[k])]
    if any(units[i : i + len(r)] == r for r in runs for i in range(len(units))):
        return True
    return any(units[i : i + k] + units[i + k + 1 : i + len(q) + 1] == q
               for i in range(len(units) - len(q)) for k in range(1, len(q)))


def contains(turn_words: List[str], quote: str) -> bool:
    units, q = text_units(" ".join(turn_words)), text_units(quote)
    return any(units[i : i + len(q)] == q for i in range(len(units) - len(q) + 1))


def echoes(turn_words: List[str], quote: str, min_score: float) -> bool:
    """Whether the quote matches a window of the turn fuzzily (>= min_score) but not word for word."""
    from rapidfuzz import fuzz

    units, q = text_units(" ".join(turn_words)), text_units(quote)
    if not q or contains(turn_words, quote):
        return False
    slack = max(1, round(0.5 * len(q)))
    target = " ".join(q)
    return any(fuzz.ratio(" ".join(units[i : i + n]), target) >= min_score
               for n in range(max(1, len(q) - slack), len(q) + slack + 1) for i in range(len(units) - n + 1))


def fit(q: List[str], window: List[str], prefix: bool) -> Tuple[int, int]:
    """How well the quote ``q`` fits a run of units, as a key to minimise: the unit edits that
    make the run the quote (units added, left out or replaced: Levenshtein), then minus the
    quote's units kept in order (the longest common subsequence); with ``prefix``, the quote's
    last unit may be a prefix of the run's last unit (the authors' rule)."""
    from rapidfuzz.distance import LCSseq, Levenshtein

    if prefix and window and window[-1] != q[-1] and window[-1].startswith(q[-1]):
        window = window[:-1] + [q[-1]]
    return Levenshtein.distance(q, window), -LCSseq.similarity(q, window)


def runs(doc, q: List[str], edits: int):
    """Every run of units of the pair's turns within ``edits`` unit edits of the quote ``q``, of at
    least two units (one for a quote of one): (``fit`` key, start token, end token)."""
    from spacy_paraphrase.llm.align import prefix_ok, span_units

    prefix = prefix_ok(q)
    for turn in doc.spans["turns"]:
        units, owners = span_units(turn)
        for m in range(max(min(2, len(q)), len(q) - edits), len(q) + edits + 1):
            for i in range(len(units) - m + 1):
                key = fit(q, units[i : i + m], prefix)
                if key[0] <= edits:
                    yield key, owners[i], owners[i + m - 1] + 1


def unique_place(doc, quote: str, intended: Tuple[int, int]) -> bool:
    """Whether the intended place is the quote's unique match in the pair: no run of units of
    either turn, not overlapping the intended tokens and of at least two units (one for a quote of
    one), that the quote fits at least as well as the intended run (``fit``: as few unit edits
    and, with as many, as many of the quote's units kept); and the intended run keeps one of the
    quote's units. "if way" for "if we" is unique when no other run of the pair
    is "if X" or "X way"; "small busi" is not where "small business" and "small businesses" both
    occur; "she the report" for "she sent the report" is, although "the report" occurs again."""
    from spacy_paraphrase.llm.align import prefix_ok, span_units

    q = text_units(quote)
    want = fit(q, span_units(doc[intended[0] : intended[1]])[0], prefix_ok(q))
    if want[1] == 0:
        return False  # none of the quote's units is at the intended place: a quote of nothing there
    return not any(key <= want and (end <= intended[0] or start >= intended[1])
                   for key, start, end in runs(doc, q, want[0]))


def unique_fit(doc, quote: str) -> Optional[Tuple[int, int]]:
    """The place of a quote (of another pair) in this pair that ``unique_place`` would call its
    unique match, or None: the runs one unit edit from it that keep one of its units and fit it
    best (``fit``) all overlap one another (the first is returned). Such an invented quote looks,
    to the pair, like one of the pair's own quotes with a word replaced."""
    places = [(key, start, end) for key, start, end in runs(doc, text_units(quote), 1) if key[1] < 0]
    if not places:
        return None
    best = min(key for key, _, _ in places)
    spans = [(start, end) for key, start, end in places if key == best]
    if any(e <= s2 or s >= e2 for s, e in spans for s2, e2 in spans):
        return None
    return spans[0]


def keeps_rare_word(doc, quote: str, place: Tuple[int, int]) -> bool:
    """Whether the quote's units that match the run at ``place`` (an optimal unit alignment) hold a
    content word outside the frequent English words of ``llm/common_words.py`` (the aligner's
    evidence of a place for a quote of one word)."""
    from rapidfuzz.distance import Levenshtein

    from spacy_paraphrase.llm.align import COMMON_WORDS, _content, span_units

    q, w = text_units(quote), span_units(doc[place[0] : place[1]])[0]
    kept = [q[k] for tag, a1, a2, _, _ in Levenshtein.opcodes(q, w) if tag == "equal" for k in range(a1, a2)]
    return any(_content(u) and u not in COMMON_WORDS for u in kept)


def jaccard(a: Tuple[int, int], b: Tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union else 0.0


def run(path: Path, seed: int = 0, min_score: float = DEFAULT_MIN_SCORE, n_windows: int = 2,
        log: Optional[List[Dict]] = None, short_evidence: str = DEFAULT_SHORT_EVIDENCE) -> Dict:
    """The table; ``log`` (a list) receives one row per quote (kind, quote, turns, what was found; for a
    replaced quote with a unique place, ``evidence``: whether its kept words hold a rare one)."""
    rng = random.Random(seed)
    nlp = spacy.blank("en")
    pairs = read_pairs(path)
    results = {kind: {"n": 0, "ours_kept": 0, "ours_wrong_turn": 0, "ours_jaccard": 0.0, "authors_kept": 0,
                      "authors_jaccard": 0.0, "methods": defaultdict(int), "spans": 0.0,
                      "ours_span_jaccard": 0.0, "found": 0, "n_unique": 0, "found_unique": 0,
                      "jaccard_unique": 0.0, "spans_unique": 0.0, "span_jaccard_unique": 0.0, "n_rare": 0,
                      "found_rare": 0, "n_frequent": 0, "found_frequent": 0, "ours_perfect": 0,
                      "authors_perfect": 0, "below_authors": 0} for kind in KINDS}
    rng_new = random.Random(seed + 1)  # issue 50's kinds: the other kinds' quotes stay as they were
    t0 = time.perf_counter()
    n_calls = in_both = in_pair = 0
    all_spans = [(p, s) for p in pairs for s in p["spans"]]
    short_spans = [(p, s) for p, s in all_spans if 2 <= s[2] - s[1] <= 3]  # invented short quotes: 4 per span
    for pair in pairs:
        doc = make_pair_doc(nlp, pair["words"][0], pair["words"][1])
        offset = {"first": 0, "second": len(pair["words"][0])}
        for side, i, j in pair["spans"]:
            words = pair["words"][0 if side == "first" else 1]
            intended = (offset[side] + i, offset[side] + j)
            quotes = [(kind, q, side, intended) for kind, q in variants(words[i:j], rng).items()]
            windows = [(i, j)] if j - i <= 3 else [(i + a, i + b) for a, b in short_windows(words[i:j], rng, n_windows)]
            for a, b in windows:
                part = (offset[side] + a, offset[side] + b)
                quotes.extend((kind if j - i <= 3 else kind.replace("short", "part"), q, side, part)
                              for kind, q in short_variants(words[a:b], rng))
            other = "second" if side == "first" else "first"
            verbatim = " ".join(words[i:j])
            other_words = pair["words"][0 if other == "first" else 1]
            if contains(other_words, verbatim):
                in_both += 1  # word for word in the stated turn too: that turn is right, not counted
            else:
                quotes.append(("wrong_turn", verbatim, other, intended))
                if echoes(other_words, verbatim, min_score):
                    quotes.append(("wrong_turn_echo", verbatim, other, intended))
            quotes.extend((kind, q, side, intended)
                          for kind, q in cut_every(words[i:j]) + inner_fillers(words[i:j], rng_new))
            per_span = Counter(q[0] for q in quotes)  # the short kinds give several quotes per span
            for kind, quote, stated, intended in quotes:
                res = results[kind]
                res["n"] += 1
                res["spans"] += 1 / per_span[kind]
                status = locate_quote(doc, quote, stated, min_score=min_score, short_evidence=short_evidence)
                n_calls += 1
                res["methods"][status.status if status.status != "aligned" else status.method] += 1
                unique = unique_place(doc, quote, intended)
                score = jaccard((status.start, status.end), intended) if status.kept else 0.0
                stated_words = pair["words"][0 if stated == "first" else 1]
                hit = exact_word_match(stated_words, quote)
                theirs = 0.0
                if hit is not None:
                    res["authors_kept"] += 1
                    if stated == side:
                        theirs = jaccard((offset[side] + hit[0], offset[side] + hit[1]), intended)
                        res["authors_jaccard"] += theirs
                res["ours_perfect"] += int(score == 1.0)
                res["authors_perfect"] += int(theirs == 1.0)
                res["below_authors"] += int(score < theirs)
                rare = None
                if unique and kind in REPLACED:
                    rare = "rare" if keeps_rare_word(doc, quote, intended) else "frequent"
                if log is not None:
                    log.append({"kind": kind, "quote": quote, "stated": stated, "status": status.status,
                                "method": status.method, "found": doc[status.start : status.end].text if status.kept
                                else None, "intended": doc[intended[0] : intended[1]].text, "unique": unique,
                                "jaccard": score, "authors_jaccard": theirs, "evidence": rare, "doc": doc.text})
                res["found"] += int(score > 0)
                res["n_unique"] += int(unique)
                if rare is not None:
                    res[f"n_{rare}"] += 1
                    res[f"found_{rare}"] += int(score > 0)
                res["spans_unique"] += int(unique) / per_span[kind]
                if unique:
                    res["found_unique"] += int(score > 0)
                    res["jaccard_unique"] += score
                    res["span_jaccard_unique"] += score / per_span[kind]
                if status.kept:
                    res["ours_kept"] += 1
                    res["ours_wrong_turn"] += int(status.side_found != side)
                    res["ours_jaccard"] += score
                    res["ours_span_jaccard"] += score / per_span[kind]
            # quotes of other pairs, filed under this turn: one span; two short spans, as they are and changed
            invented = []
            for _ in range(2):
                other_pair, (o_side, oi, oj) = rng.choice(all_spans)
                if other_pair is not pair:
                    invented.append(("not_in_text", " ".join(other_pair["words"][0 if o_side == "first" else 1][oi:oj])))
            for _ in range(4):
                other_pair, (o_side, oi, oj) = rng.choice(short_spans)
                if other_pair is not pair:
                    o_words = other_pair["words"][0 if o_side == "first" else 1][oi:oj]
                    invented.append(("not_in_text_short", " ".join(o_words)))
                    invented.append(("not_in_text_short", replace_one(o_words, rng)))
            invented += program_runs(pair, pairs, rng_new)
            pair_units = text_units(doc.text)
            for kind, quote in invented:
                if in_text(pair_units, text_units(quote)):
                    in_pair += 1  # in the text after all
                    continue
                res = results[kind]
                res["n"] += 1
                status = locate_quote(doc, quote, side, min_score=min_score, short_evidence=short_evidence)
                n_calls += 1
                res["methods"][status.status if status.status != "aligned" else status.method] += 1
                res["ours_kept"] += int(status.kept)
                place = unique_fit(doc, quote)
                fits_once = place is not None
                res["n_unique"] += int(fits_once)
                res["found_unique"] += int(fits_once and status.kept)
                if fits_once:
                    rare = "rare" if keeps_rare_word(doc, quote, place) else "frequent"
                    res[f"n_{rare}"] += 1
                    res[f"found_{rare}"] += int(status.kept)
                if log is not None:
                    log.append({"kind": kind, "quote": quote, "stated": side, "status": status.status,
                                "method": status.method, "found": doc[status.start : status.end].text if status.kept
                                else None, "intended": None, "unique_fit": fits_once, "doc": doc.text})
                res["authors_kept"] += int(exact_word_match(words, quote) is not None)
    elapsed = time.perf_counter() - t0
    table = {}
    for kind, res in results.items():
        n = max(res["n"], 1)
        row = {"n": res["n"], "ours_aligned": res["ours_kept"] / n, "authors_aligned": res["authors_kept"] / n,
               "methods": dict(res["methods"])}
        if kind in INVENTED:  # quotes of other pairs that fit one place of this pair, one unit edit away
            row.update({"n_unique": res["n_unique"], "ours_aligned_unique": res["found_unique"]})
        if kind in INVENTED + REPLACED:  # those unique ones by the words they keep
            row.update({key: res[key] for key in ("n_rare", "found_rare", "n_frequent", "found_frequent")})
        if kind not in INVENTED:
            row["ours_wrong_turn"] = res["ours_wrong_turn"] / n
            row["ours_jaccard"] = res["ours_jaccard"] / n
            row["authors_jaccard"] = res["authors_jaccard"] / n
            unique = max(res["n_unique"], 1)
            row.update({key: res[key] for key in ("ours_perfect", "authors_perfect", "below_authors")})
            row.update({"ours_found": res["found"] / n, "n_unique": res["n_unique"],
                        "ours_found_unique": res["found_unique"] / unique,
                        "ours_jaccard_unique": res["jaccard_unique"] / unique})
        table[kind] = row
    # wrong_turn_echo repeats some wrong_turn quotes: counted once in the mean
    made = [k for k in KINDS if k not in INVENTED + PARTS + NEW and k != "wrong_turn_echo"]
    total = sum(results[k]["n"] for k in made)
    summary = {
        "ours_mean_jaccard": sum(results[k]["ours_jaccard"] for k in made) / total,
        # each span counted once per kind (a short kind's quotes of one span: their mean), as before the
        # short kinds were quoted at every place
        "ours_mean_jaccard_per_span": (sum(results[k]["ours_span_jaccard"] for k in made)
                                       / sum(results[k]["spans"] for k in made)),
        "ours_mean_jaccard_per_span_unique": (sum(results[k]["span_jaccard_unique"] for k in made)
                                              / sum(results[k]["spans_unique"] for k in made)),
        "n_quotes_unique": sum(results[k]["n_unique"] for k in made),
        "authors_mean_jaccard": sum(results[k]["authors_jaccard"] for k in made) / total,
        "ours_not_in_text_aligned": table["not_in_text"]["ours_aligned"],
        "authors_not_in_text_aligned": table["not_in_text"]["authors_aligned"],
        "ours_invented_aligned": sum(results[k]["ours_kept"] for k in INVENTED),
        "n_invented": sum(results[k]["n"] for k in INVENTED),
        # of them placed: those with a place here one unit edit away (unique_fit), which the text cannot tell
        # from one of this pair's quotes with a word replaced
        "ours_invented_aligned_unique_fit": sum(results[k]["found_unique"] for k in INVENTED),
        "n_invented_unique_fit": sum(results[k]["n_unique"] for k in INVENTED),
        "n_wrong_turn_in_both": in_both, "n_invented_in_text": in_pair, "n_quotes": total, "n_pairs": len(pairs), "ms_per_quote": 1000 * elapsed / max(n_calls, 1),
    }
    return {"data": path.name, "seed": seed, "min_score": min_score, "short_evidence": short_evidence,
            "short_windows": n_windows, "summary": summary,
            "kinds": table}


def markdown(result: Dict) -> str:
    lines = [f"`locate_quote` with `short_evidence = \"{result.get('short_evidence', 'strict')}\"`, "
             f"`min_score = {result['min_score']:g}`; {result['data']}, seed {result['seed']}.", "","| quote kind | n | ours: aligned | ours: in the wrong turn | ours: Jaccard | authors' rule: aligned | "
             "authors' rule: Jaccard | our methods |",
             "|---|---|---|---|---|---|---|---|"]
    for kind, row in result["kinds"].items():
        methods = ", ".join(f"{k} {v}" for k, v in sorted(row["methods"].items()))
        lines.append(f"| {kind} | {row['n']} | {row['ours_aligned']:.3f} | {row.get('ours_wrong_turn', float('nan')):.3f} | "
                     f"{row.get('ours_jaccard', float('nan')):.3f} | {row['authors_aligned']:.3f} | "
                     f"{row.get('authors_jaccard', float('nan')):.3f} | {methods} |")
    s = result["summary"]
    lines.append("")
    lines.append(f"Mean Jaccard over the {s['n_quotes']} made quotes ({s['n_pairs']} pairs; wrong_turn_echo counted "
                 f"once, as wrong_turn; part_*, truncated_every, inner_filler* left out): ours {s['ours_mean_jaccard']:.3f} (each span once per "
                 f"kind: {s['ours_mean_jaccard_per_span']:.3f}), authors' rule "
                 f"{s['authors_mean_jaccard']:.3f}; quotes in neither turn aligned: ours "
                 f"{s['ours_invented_aligned']} of {s['n_invented']}; {s['ms_per_quote']:.2f} ms per quote. "
                 f"Not made: {s['n_wrong_turn_in_both']} wrong-turn quotes that the stated turn holds word for word "
                 f"too (aligned there, by design); {s['n_invented_in_text']} quotes of other pairs that this pair holds "
                 f"(word for word, or with a filler put in or a word left out).")
    lines += ["", UNIQUE_DOC, "",
              "| quote kind | n | unique (not unique) | found: all | found: unique | Jaccard: all | Jaccard: unique |",
              "|---|---|---|---|---|---|---|"]
    for kind, row in result["kinds"].items():
        if kind in INVENTED:
            continue
        lines.append(f"| {kind} | {row['n']} | {row['n_unique']} ({row['n'] - row['n_unique']}) | "
                     f"{row['ours_found']:.3f} | {row['ours_found_unique']:.3f} | {row['ours_jaccard']:.3f} | "
                     f"{row['ours_jaccard_unique']:.3f} |")
    lines += ["", f"Mean Jaccard, each span once per kind: all {s['ours_mean_jaccard_per_span']:.3f}, unique places "
              f"{s['ours_mean_jaccard_per_span_unique']:.3f} ({s['n_quotes_unique']} of the {s['n_quotes']} made "
              f"quotes).", "",
              "What a unique place keeps: the replaced quotes with a unique place, and the quotes of other pairs "
              "that have a place in this pair that would count as unique for a quote of this pair with one word "
              "replaced (`unique_fit`), by whether the quote's units that match there hold a content word outside "
              "the frequent English words of `llm/common_words.py`. Given a span: found (own quotes), placed "
              "although invented (quotes of other pairs).", "",
              "| quotes | with a unique place | keeps a rare word: given a span | keeps only frequent words: given "
              "a span |", "|---|---|---|---|"]
    for kind in REPLACED + INVENTED:
        row = result["kinds"][kind]
        lines.append(f"| {kind} | {row['n_unique']} of {row['n']} | {row['found_rare']} of {row['n_rare']} | "
                     f"{row['found_frequent']} of {row['n_frequent']} |")
    lines += ["", "Spans exactly the intended ones (perfect), ours and the authors' rule's, and quotes where the "
              "authors' rule's Jaccard is higher than ours:", "",
              "| quote kind | n | ours: perfect | authors' rule: perfect | ours below the authors' rule |", "|---|---|---|---|---|"]
    for kind, row in result["kinds"].items():
        if kind not in INVENTED:
            lines.append(f"| {kind} | {row['n']} | {row['ours_perfect']} | {row['authors_perfect']} | "
                         f"{row['below_authors']} |")
    return "\n".join(lines)


UNIQUE_DOC = (
    "**Unique place.** A made quote's intended place is its *unique match in the pair* when no run of "
    "units of either turn (at least two units, one for a one-unit quote) that does not overlap the intended "
    "words fits the quote at least as well: as few unit edits (units added, left out or replaced), and with "
    "as many, as many of the quote's units kept in order; the last unit may be a prefix (the authors' rule). "
    "A quote that keeps no unit of its intended place is not unique. So \"if way\" for \"if we\" is unique "
    "when the pair has no other \"if X\" or \"X way\", \"small busi\" is not where \"small business\" "
    "and \"small businesses\" both occur. Found: a span placed that overlaps the intended words. "
    "No quote is dropped: the bars are read on the unique ones, the rates over all are given beside "
    "them, with the counts.")


def compare(before: Dict, now: Dict) -> str:
    """docs/llm.md's table: two runs of this benchmark (older code, same quotes), before -> now."""
    lines = ["| quote kind | n (unique place) | aligned (before → now) | span in the wrong turn (before → now) | "
             "Jaccard (before → now) | found, unique place (before → now) | authors' rule: Jaccard |",
             "|---|---|---|---|---|---|---|"]
    for kind, row in now["kinds"].items():
        old = before["kinds"][kind]

        def pair(key):
            return f"{old[key]:.3f} → {row[key]:.3f}" if key in row and key in old else "—"

        unique = f" ({row['n_unique']})" if "n_unique" in row else ""
        lines.append(f"| {kind} | {row['n']}{unique} | {pair('ours_aligned')} | {pair('ours_wrong_turn')} | "
                     f"{pair('ours_jaccard')} | {pair('ours_found_unique')} | "
                     f"{row.get('authors_jaccard', float('nan')):.3f} |")
    b, s = before["summary"], now["summary"]
    unique = (f" (unique places: {b['ours_mean_jaccard_per_span_unique']:.3f} → "
              f"{s['ours_mean_jaccard_per_span_unique']:.3f})" if "ours_mean_jaccard_per_span_unique" in b else "")
    lines += ["", f"Mean Jaccard (each span once per kind): {b['ours_mean_jaccard_per_span']:.3f} → "
              f"{s['ours_mean_jaccard_per_span']:.3f}{unique}; over all made quotes: {b['ours_mean_jaccard']:.3f} → "
              f"{s['ours_mean_jaccard']:.3f}; quotes in neither turn aligned: {b['ours_invented_aligned']} → "
              f"{s['ours_invented_aligned']} of {s['n_invented']}."]
    return "\n".join(lines)


def bars(results: List[Dict]) -> str:
    """The issue's bars, one row per result (a split and a ``short_evidence``): each cell all / unique place."""
    lines = ["| data | short evidence | quotes of other pairs placed (of them with a one-edit place) | wrong-turn "
             "quotes: span in the stated turn | cut-off last word: Jaccard | last word cut to every prefix: Jaccard; "
             "perfect, ours / authors' rule; below the authors' rule | dropped second word: Jaccard | 2-3 words + 1 "
             "added: found | 2-3 words + a filler inside / 4 words + a filler inside: found | 2-3 words, 1 replaced: "
             "found | mean Jaccard |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        k, s = r["kinds"], r["summary"]

        def two(kind, key):
            return f"{k[kind][key]:.3f} / {k[kind][key + '_unique']:.3f}" if kind in k else "—"

        def every():
            if "truncated_every" not in k:
                return "—"
            row = k["truncated_every"]
            return (f"{two('truncated_every', 'ours_jaccard')}; {row['ours_perfect']} / {row['authors_perfect']} of "
                    f"{row['n']}; {row['below_authors']}")

        wrong = {x: f"{k[x]['ours_wrong_turn'] * k[x]['n']:.0f} of {k[x]['n']}" for x in ("wrong_turn", "wrong_turn_echo")}
        lines.append(
            f"| {r['data']} | {r.get('short_evidence', 'strict')} | {s['ours_invented_aligned']} of {s['n_invented']} "
            f"({s.get('ours_invented_aligned_unique_fit', '?')} of {s.get('n_invented_unique_fit', '?')}) | "
            f"{wrong['wrong_turn']} (echoes {wrong['wrong_turn_echo']}) | {two('truncated_last', 'ours_jaccard')} | "
            f"{every()} | {two('dropped_second', 'ours_jaccard')} | {two('short_added', 'ours_found')} | "
            f"{two('inner_filler', 'ours_found')}; {two('inner_filler_4', 'ours_found')} | "
            f"{two('short_replaced', 'ours_found')} | {s['ours_mean_jaccard_per_span']:.3f} / "
            f"{s['ours_mean_jaccard_per_span_unique']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path, help="a ContextDeP .tsv, or with --before: this benchmark's JSON result")
    parser.add_argument("--before", type=Path, help="a result of older code: print the before -> now table")
    parser.add_argument("--bars", type=Path, nargs="*", help="more results (JSON): print the bars table of DATA and these")
    parser.add_argument("--short-evidence", choices=SHORT_EVIDENCE, default=DEFAULT_SHORT_EVIDENCE,
                        help="what a short quote's matching words must be (align.py)")
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-score", type=float, default=DEFAULT_MIN_SCORE)
    parser.add_argument("--short-windows", type=int, default=2, help="2-3-word runs of each longer span quoted")
    parser.add_argument("--log", type=Path, help="a JSONL file of every quote and what was found (to study misses)")
    args = parser.parse_args()
    if args.before:
        print(compare(json.loads(args.before.read_text()), json.loads(args.data.read_text())))
        return
    if args.bars is not None:
        print(bars([json.loads(path.read_text()) for path in [args.data, *args.bars]]))
        return
    log: Optional[List[Dict]] = [] if args.log else None
    result = run(args.data, args.seed, args.min_score, args.short_windows, log, args.short_evidence)
    if args.log:
        args.log.write_text("".join(json.dumps(row) + "\n" for row in log))
    print(markdown(result))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2) + "\n")
        args.output.with_suffix(".md").write_text(markdown(result) + "\n")


if __name__ == "__main__":
    main()
