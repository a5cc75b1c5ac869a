"""The phrases most often highlighted on the second turn: each PARAPHRASE
span of a pair the model calls a paraphrase, normalised (lower case,
punctuation dropped) and lemmatised with spaCy's lookup lemmatizer
(``spacy-lookups-data``), counted with an example pair each; phrases of
stop words only are left out."""
from collections import Counter
from typing import Any, Dict, List, Sequence, Tuple

import spacy


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


def normalise(doc) -> str:
    """The lemmas of the phrase's words, punctuation dropped; empty for a
    phrase of stop words only ("'s", "the", "is": nothing to read)."""
    words = [t for t in doc if not (t.is_punct or t.is_space)]
    if all(t.is_stop for t in words):
        return ""
    return " ".join(w for w in ((t.lemma_ or t.text).lower() for t in words) if w)


def top_phrases(records: Sequence[Dict[str, Any]], lang: str = "en", n: int = 25) -> Tuple[List[Dict[str, Any]], bool]:
    """(rows ``phrase, count, pairs, example_pair_id, example_text``, most
    frequent first; whether words were lemmatised)."""
    nlp, lemmatised = lemmatizer(lang)
    texts, owners = [], []
    for record in records:
        if not record.get("is_paraphrase"):
            continue
        for span in record.get("spans") or []:
            if span.get("side") == "second" and span.get("text"):
                texts.append(span["text"])
                owners.append(record)
    counts: Counter = Counter()
    pairs: Dict[str, set] = {}
    example: Dict[str, Tuple[str, str]] = {}
    for doc, text, record in zip(nlp.pipe(t.lower() for t in texts), texts, owners):
        phrase = normalise(doc)
        if not phrase:
            continue
        counts[phrase] += 1
        pairs.setdefault(phrase, set()).add(str(record["pair_id"]))
        example.setdefault(phrase, (str(record["pair_id"]), text))
    rows = [{"phrase": p, "count": c, "pairs": len(pairs[p]), "example_pair_id": example[p][0],
             "example_text": example[p][1]} for p, c in counts.most_common()]
    rows.sort(key=lambda r: (-r["count"], r["phrase"]))
    return rows[:n], lemmatised
