"""Strings against word lists: the same pairs given both ways, compared word by word.

ContextDeP-style data comes as word lists (one token per whitespace word); users
pass strings, which spaCy tokenizes ("Rome." -> "Rome", "."). ``check_strings``
runs a pipeline on both inputs of the same pairs and reports what a user would
see differ (``python -m spacy_paraphrase check-strings``; docs/results.md,
"Strings and word lists"):

- spans of the string input made only of punctuation or whitespace;
- turns whose highest probability sits only on tokens without a letter or digit;
- word-level agreement: a word counts as highlighted when any of its tokens is
  (mean Jaccard per pair, share of identical pair decisions);
- the usual scores for both inputs, the string input scored word by word
  (``project_to_words``) against the word-level reference.
"""
import sys
from typing import Dict, List, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example
from tqdm import tqdm

from ..metrics import jaccard
from ..pair_doc import PARAPHRASE_LABEL, copy_pair_doc, get_turns, make_pair_doc, runs_to_spans
from ..words import token_map
from .readout import SOURCE_LABEL, Readout


def has_word_character(text: str) -> bool:
    return any(c.isalnum() for c in text)


def string_turns(doc: Doc) -> Tuple[str, str]:
    """The two turns of a word-list pair Doc as the strings a user would pass:
    the words joined by one space (empty words give double spaces)."""
    return tuple(" ".join(t.text if t.text.strip() else "" for t in turn_span) for turn_span in get_turns(doc))


def as_string_doc(nlp: Language, doc: Doc) -> Doc:
    """The same pair built from strings (tokenized by ``nlp``)."""
    first, second = string_turns(doc)
    return make_pair_doc(nlp, first, second)


def project_to_words(string_doc: Doc, word_doc: Doc, readout: Readout) -> Doc:
    """A copy of ``word_doc`` (one token per word) carrying the processed
    ``string_doc``'s results word by word: a word's probability is the largest
    of its tokens', a word is in a span when any of its tokens is, the pair
    score and decision are the string Doc's."""
    if string_doc.text != word_doc.text:
        raise ValueError("The string Doc and the word-list Doc have different texts: not the same pair.")
    probs = readout.token_probs(string_doc)
    in_span = readout.highlighted(string_doc)
    mapping = token_map(string_doc, word_doc)
    word_probs = numpy.full((len(word_doc),), numpy.nan, dtype="float32")
    for w, tokens in enumerate(mapping):
        values = probs[tokens]
        if len(values) and not numpy.isnan(values).all():
            word_probs[w] = numpy.nanmax(values)
    flags = numpy.asarray([bool(in_span[tokens].any()) for tokens in mapping], dtype=bool)
    out = copy_pair_doc(word_doc)
    spans = []
    for label, turn_span in zip((SOURCE_LABEL, PARAPHRASE_LABEL), get_turns(out)):
        spans.extend(runs_to_spans(out, flags, turn_span.start, turn_span.end, label))
    group = SpanGroup(out, name=readout.spans_key, spans=spans)
    for key, value in string_doc.spans[readout.spans_key].attrs.items():
        group.attrs[key] = value
    group.attrs["token_probs"] = word_probs
    group.attrs["scores"] = [float(numpy.nanmean(word_probs[s.start: s.end])) for s in spans]
    out.spans[readout.spans_key] = group
    out.cats.update(string_doc.cats)
    return out


def punctuation_only_spans(doc: Doc, spans_key: str) -> Tuple[int, int]:
    """(spans without a letter or digit, all spans) of a processed Doc."""
    spans = list(doc.spans[spans_key])
    return sum(not has_word_character(s.text) for s in spans), len(spans)


def turn_max_on_words(doc: Doc, probs: numpy.ndarray) -> List[bool]:
    """Per turn with any probability: is its highest probability reached by a
    token with a letter or digit (ties count)?"""
    out = []
    for turn_span in get_turns(doc):
        p = probs[turn_span.start: turn_span.end]
        if numpy.isnan(p).all():
            continue
        top = numpy.nanmax(p)
        out.append(any(has_word_character(turn_span[i].text) for i in numpy.flatnonzero(p == top)))
    return out


def compare_inputs(word_docs: Sequence[Doc], string_docs: Sequence[Doc], projected: Sequence[Doc],
                   readout: Readout) -> Dict[str, float]:
    """The checks of the module docstring over processed Docs of the same pairs."""
    n_punct = n_spans = 0
    turns: List[bool] = []
    jaccards: List[float] = []
    same = 0
    for word_doc, string_doc, proj in zip(word_docs, string_docs, projected):
        p, n = punctuation_only_spans(string_doc, readout.spans_key)
        n_punct, n_spans = n_punct + p, n_spans + n
        turns.extend(turn_max_on_words(string_doc, readout.token_probs(string_doc)))
        j = jaccard(readout.highlighted(word_doc), readout.highlighted(proj))
        jaccards.append(1.0 if j is None else j)
        same += readout.decision(word_doc) == readout.decision(string_doc)
    n = max(len(jaccards), 1)
    return {
        "strings_spans": n_spans,
        "strings_punctuation_only_spans": n_punct,
        "strings_turns": len(turns),
        "strings_turn_max_on_word_share": float(numpy.mean(turns)) if turns else 1.0,
        "word_jaccard_between_inputs": float(numpy.mean(jaccards)) if jaccards else 1.0,
        "same_decision_share": same / n,
    }


def check_strings(nlp: Language, examples: Sequence[Example], readout: Readout, *,
                  batch_size: int = 8, progress: bool = False) -> Tuple[List[Example], List[Example], Dict[str, float]]:
    """Run ``nlp`` on every pair as word lists and as strings. Returns the
    processed word-list examples, the string results projected to words (both
    scorable against the references), and ``compare_inputs``'s checks.
    ``progress``: show a bar of the pairs on stderr (on a terminal only)."""
    def shown(docs, desc):
        return tqdm(docs, total=len(examples), desc=desc, unit="pairs", file=sys.stderr, leave=False,
                    disable=None if progress else True)

    from ..evaluation import default_batch_size

    batch_size = batch_size or default_batch_size()
    word_docs = list(shown(nlp.pipe([eg.predicted for eg in examples], batch_size=batch_size), "words"))
    string_docs = list(shown(nlp.pipe([as_string_doc(nlp, eg.predicted) for eg in examples], batch_size=batch_size),
                             "strings"))
    projected = [project_to_words(s, eg.predicted, readout) for s, eg in zip(string_docs, examples)]
    checks = compare_inputs(word_docs, string_docs, projected, readout)
    words = [Example(d, eg.reference) for d, eg in zip(word_docs, examples)]
    strings = [Example(d, eg.reference) for d, eg in zip(projected, examples)]
    return words, strings, checks
