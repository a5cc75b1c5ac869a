"""The expressions most often highlighted on the second turn: each
PARAPHRASE span of a pair the model calls a paraphrase is reduced to its
content words (stop words and punctuation dropped), lower-cased and
lemmatised with spaCy's lookup lemmatizer (``spacy-lookups-data``); every
run of one to three consecutive content lemmas counts once per span, so
that "the big dogs" and "a big dog barking" both count for "big dog". A run
that only ever occurs inside a longer one that is listed (the same spans)
is left out, as saying nothing more. Most pairs first, with an example
pair each."""
from collections import Counter
from typing import Any, Dict, List, Sequence, Tuple

import spacy

from ..annotate.record_format import PAIR_ID, SIDES, SPAN_FIELDS, SPANS, record_decision


def lemmatizer(lang: str = "en"):
    """(a blank pipeline with a lookup lemmatizer, True) or (the blank
    pipeline, False) when spacy-lookups-data has no table for ``lang``."""
    nlp = spacy.blank(lang)
    try:
        nlp.add_pipe("lemmatizer", config={"mode": "lookup"})
        nlp.initialize()
        return nlp, True
    except (ValueError, OSError, ImportError):  # no lookup table for this language
        return spacy.blank(lang), False


MAX_WORDS = 3


def content_lemmas(doc) -> List[str]:
    """The lower-cased lemmas of the phrase's content words (no stop words,
    punctuation or space: "'s", "the", "is" have nothing to read)."""
    return [w for w in ((t.lemma_ or t.text).lower() for t in doc if not (t.is_punct or t.is_space or t.is_stop))
            if w]


def runs(words: Sequence[str], longest: int = MAX_WORDS) -> set:
    """Every run of 1 to ``longest`` consecutive words, as tuples."""
    return {tuple(words[i:i + n]) for n in range(1, longest + 1) for i in range(len(words) - n + 1)}


def _inside(short: tuple, long: tuple) -> bool:
    return len(short) < len(long) and any(long[i:i + len(short)] == short for i in range(len(long) - len(short) + 1))


def top_phrases(records: Sequence[Dict[str, Any]], lang: str = "en", n: int = 25) -> Tuple[List[Dict[str, Any]], bool]:
    """(rows ``phrase, count, pairs, example_pair_id, example_text``: count =
    spans, pairs = pairs with the phrase, most pairs first; whether words
    were lemmatised)."""
    nlp, lemmatised = lemmatizer(lang)
    texts, owners = [], []
    for record in records:
        if not record_decision(record).is_paraphrase:
            continue
        for span in record.get(SPANS.key) or []:
            if span.get(SPAN_FIELDS.side) == SIDES[1] and span.get(SPAN_FIELDS.text):
                texts.append(span[SPAN_FIELDS.text])
                owners.append(record)
    counts: Counter = Counter()
    pairs: Dict[tuple, set] = {}
    example: Dict[tuple, Tuple[str, str]] = {}
    for doc, text, record in zip(nlp.pipe(t.lower() for t in texts), texts, owners):
        for run in runs(content_lemmas(doc)):
            counts[run] += 1
            pairs.setdefault(run, set()).add(str(record[PAIR_ID.key]))
            example.setdefault(run, (str(record[PAIR_ID.key]), text))
    kept: List[tuple] = []
    for run in sorted(counts, key=lambda r: (-counts[r], -len(r), r)):  # longer runs before the runs inside them
        if not any(counts[k] == counts[run] and _inside(run, k) for k in kept):
            kept.append(run)
    kept.sort(key=lambda r: (-len(pairs[r]), -counts[r], -len(r), r))
    return [{"phrase": " ".join(r), "count": counts[r], "pairs": len(pairs[r]), "example_pair_id": example[r][0],
             "example_text": example[r][1]} for r in kept[:n]], lemmatised
