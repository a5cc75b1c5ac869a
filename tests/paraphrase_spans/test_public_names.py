"""spacy_paraphrase.paraphrase_spans: the component's package, named after it,
exports the functions the README documents, the readout's own objects; there is
no second name for it."""
import importlib
import inspect

import numpy
import pytest

import spacy_paraphrase
from spacy_paraphrase import make_pair_doc, paraphrase_spans
from spacy_paraphrase.paraphrase_spans import readout


def test_documented_names_are_the_readout_objects():
    assert paraphrase_spans.__all__ == ["highlight_flags", "token_probs"]
    for name in paraphrase_spans.__all__:
        assert getattr(paraphrase_spans, name) is getattr(readout, name), name
    assert spacy_paraphrase.token_probs is readout.token_probs
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("spacy_paraphrase.spans")
    assert list(inspect.signature(paraphrase_spans.highlight_flags).parameters) == ["doc", "probs", "threshold", "scale"]


def test_highlight_flags_as_documented(nlp):
    doc = make_pair_doc(nlp, ["a", "b"], ["c", "d"])
    probs = numpy.array([0.4, 0.15, 0.9, numpy.nan], dtype="float32")
    assert paraphrase_spans.highlight_flags(doc, probs, 0.5).tolist() == [False, False, True, False]
    assert paraphrase_spans.highlight_flags(doc, probs, 0.5, "turn_max").tolist() == [True, False, True, False]
