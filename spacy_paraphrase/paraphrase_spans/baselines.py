"""Reference baselines that write the same outputs as ``paraphrase_spans``,
so they are scored by the same scorer:

``lexical``
    A token gets probability 1 when it is a non-stopword word (lower-cased,
    punctuation at its ends removed) that also occurs in the other turn, else 0.
``always``
    Every token gets probability 1: the pair is always a paraphrase and every
    word is highlighted.
"""
from typing import Callable, Optional

import numpy
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc

from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, get_turns
from .readout import Readout

KINDS = ("lexical", "always")


def _norm(text: str) -> str:
    """Lower-cased, without punctuation at either end ("Rome." -> "rome")."""
    start, end = 0, len(text)
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return text[start:end].lower()


def _content_words(span, stop_words) -> set:
    words = {_norm(t.text) for t in span}
    return {w for w in words if w and w not in stop_words}


def baseline_probs(doc: Doc, kind: str, stop_words) -> numpy.ndarray:
    first, second = get_turns(doc)
    probs = numpy.zeros((len(doc),), dtype="float32")
    if kind == "always":
        probs[first.start : second.end] = 1.0
        return probs
    w1 = _content_words(first, stop_words)
    w2 = _content_words(second, stop_words)
    shared = w1 & w2
    for span in (first, second):
        for t in span:
            if _norm(t.text) in shared:
                probs[t.i] = 1.0
    return probs


class ParaphraseBaseline(Pipe):
    # how ``tune`` / ``cross-tune`` tune it (``tuning/choice.py``)
    tuned_as = "spans"

    def __init__(
        self,
        nlp: Language,
        name: str,
        kind: str,
        spans_key: str,
        cats_key: str,
        scorer: Optional[Callable],
    ):
        if kind not in KINDS:
            raise ValueError(f"Unknown baseline kind {kind!r}; choose one of {KINDS}.")
        self.name = name
        self.kind = kind
        self.stop_words = set(nlp.Defaults.stop_words)
        self.scorer = scorer
        # the paper's rule (the Readout defaults): threshold and highlight
        # threshold 0.5, absolute scale
        self.cfg = Readout(spans_key=spans_key, cats_key=cats_key).to_cfg()

    @property
    def readout(self) -> Readout:
        """The readout of ``cfg`` (read on every call, like the component's)."""
        return Readout.from_cfg(self.cfg)

    def __call__(self, doc: Doc) -> Doc:
        self.readout.annotate(doc, baseline_probs(doc, self.kind, self.stop_words))
        return doc

    def score(self, examples, **kwargs):
        kwargs = dict(kwargs)
        kwargs.update(self.cfg)
        kwargs["name"] = self.name
        return self.scorer(examples, **kwargs)


@Language.factory(
    "paraphrase_baseline",
    assigns=["doc.spans", "doc.cats"],
    default_config={
        "kind": "lexical",
        "spans_key": SPANS_KEY,
        "cats_key": PARAPHRASE_LABEL,
        "scorer": {"@scorers": "spacy_paraphrase.paraphrase_spans_scorer.v1"},
    },
)
def make_paraphrase_baseline(nlp, name, kind, spans_key, cats_key, scorer):
    return ParaphraseBaseline(nlp, name, kind, spans_key, cats_key, scorer)
