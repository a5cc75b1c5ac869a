import warnings

import numpy
import pytest
from spacy import displacy

from spacy_paraphrase import PairDocError, make_pair_doc
from spacy_paraphrase.visualize import DISPLACY_COLORS, displacy_manual
from tests.visualize.helpers import gold_docs, model_doc


def _probs(first_idx, second_idx):
    probs = numpy.zeros(24, dtype="float32")
    probs[list(first_idx)] = 0.9
    probs[[13 + i for i in second_idx]] = 0.9
    return probs


def test_one_dict_per_turn_with_turn_relative_tokens():
    doc = model_doc(_probs([4, 5, 6], [5]))
    first, second = displacy_manual(doc)
    assert first["tokens"] == "And it will be my 20th time in doing it from Rome .".split(" ")
    assert first["text"] == doc.spans["turns"][0].text and first["title"] == "GUEST"
    assert first["spans"] == [{"start_token": 4, "end_token": 7, "label": "SOURCE"}]
    assert second["spans"] == [{"start_token": 5, "end_token": 6, "label": "PARAPHRASE"}]
    assert second["tokens"][5] == "doing" and second["title"] == "HOST"
    assert first["settings"] == {"lang": "en", "direction": "ltr"}


def test_displacy_renders_it_without_w117_on_empty_groups():
    # No spans at all (pair below the threshold), and spans in one turn only.
    no_spans = model_doc(numpy.full(24, 0.1))
    one_side = model_doc(_probs([4], []), threshold=0.0)
    assert len(no_spans.spans["paraphrase"]) == 0
    data = displacy_manual(no_spans) + displacy_manual(one_side)
    assert data[0]["spans"] == [] and data[3]["spans"] == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        html = displacy.render(data, style="span", manual=True, jupyter=False,
                               options={"colors": DISPLACY_COLORS})
    assert html.count("Rome") == 2 and "SOURCE" in html and DISPLACY_COLORS["SOURCE"] in html
    # What the manual format avoids: the Doc route warns on an empty group.
    with pytest.warns(UserWarning, match="W117"):
        displacy.render(no_spans, style="span", jupyter=False, options={"spans_key": "paraphrase"})


def test_gold_docs_and_docs_without_spans(tmp_path, nlp):
    (gold,) = gold_docs(tmp_path, "majority")
    first, second = displacy_manual(gold)
    assert [first["tokens"][s["start_token"]] for s in first["spans"]] == ["snow"]
    assert second["spans"] == [{"start_token": 2, "end_token": 4, "label": "PARAPHRASE"}]
    plain = make_pair_doc(nlp, "a b", "c")
    assert [turn["spans"] for turn in displacy_manual(plain)] == [[], []]
    with pytest.raises(PairDocError):
        displacy_manual(nlp("not a pair"))
