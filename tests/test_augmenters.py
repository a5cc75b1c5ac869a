import pytest
import spacy
from spacy.tokens import DocBin, Span
from spacy.util import registry

from spacy_paraphrase import get_turns, make_pair_doc
from spacy_paraphrase.augmenters import swap_turns
from spacy_paraphrase.corpus import PairCorpus


@pytest.fixture
def nlp():
    return spacy.blank("en")


def test_swap_turns_keeps_words_labels_cats_and_attrs(nlp):
    doc = make_pair_doc(nlp, "I lost my job .", ["So", "", "you", "are", "unemployed"],
                        speakers=("GUEST", "HOST"), pair_id="q1")
    doc.cats = {"IS_PARAPHRASE": 1.0, "NOT_PARAPHRASE": 0.0}
    swapped = swap_turns(doc)
    first, second = get_turns(swapped)
    assert [t.text for t in first] == ["So", " ", "you", "are", "unemployed"]
    assert [t.text for t in second] == ["I", "lost", "my", "job", "."]
    assert (first.label_, second.label_) == ("HOST", "GUEST")
    assert swapped.text == "So  you are unemployed I lost my job ."
    assert swapped.cats == doc.cats
    assert swapped.spans["turns"].attrs["id"] == "q1"
    # swapping twice gives the pair back
    again = swap_turns(swapped)
    assert again.text == doc.text
    assert [t.text for t in again] == [t.text for t in doc]
    assert [s.label_ for s in get_turns(again)] == ["GUEST", "HOST"]


@pytest.mark.parametrize(
    "first,second",
    [("a b", "c d"), ("a", "b  "), (["a", ""], "c d"), (["x", "", "y"], ["", "z"])],
)
def test_swap_turns_is_make_pair_doc_the_other_way_round(nlp, first, second):
    """Whitespace at the turns' edges (empty words, trailing spaces) is joined
    as make_pair_doc joins it, and two swaps give the pair back."""
    doc = make_pair_doc(nlp, first, second)
    swapped = swap_turns(doc)
    expected = make_pair_doc(nlp, second, first)
    assert [(t.text, t.whitespace_) for t in swapped] == [(t.text, t.whitespace_) for t in expected]
    assert [(s.start, s.end) for s in get_turns(swapped)] == [(s.start, s.end) for s in get_turns(expected)]
    assert [(t.text, t.whitespace_) for t in swap_turns(swapped)] == [(t.text, t.whitespace_) for t in doc]


def test_swap_turns_refuses_tokens_outside_the_turns(nlp):
    doc = make_pair_doc(nlp, "a b", "c d")
    doc.spans["turns"] = [Span(doc, 1, 2, label="FIRST"), Span(doc, 2, 4, label="SECOND")]
    with pytest.raises(ValueError, match="outside"):
        swap_turns(doc)


def test_swap_turns_refuses_role_spans(nlp):
    doc = make_pair_doc(nlp, "I lost my job", "You are unemployed")
    doc.spans["paraphrase"] = [Span(doc, 1, 3, label="SOURCE")]
    with pytest.raises(ValueError, match=r"span annotations \['paraphrase'\].*symmetric"):
        swap_turns(doc)
    # an empty group is refused too: its attrs hold per-token targets (ContextDeP)
    doc.spans["paraphrase"] = []
    doc.spans["paraphrase"].attrs["token_targets"] = [0.0] * len(doc)
    with pytest.raises(ValueError, match="paraphrase"):
        swap_turns(doc)


def test_pair_corpus_with_swap_augmenter_from_registry(nlp, tmp_path):
    docs = []
    for first, second, label in [("a b", "c d e", 1.0), ("f", "g h", 0.0)]:
        doc = make_pair_doc(nlp, first, second)
        doc.cats = {"IS_PARAPHRASE": label, "NOT_PARAPHRASE": 1 - label}
        docs.append(doc)
    path = tmp_path / "pairs.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    augmenter = registry.augmenters.get("spacy_paraphrase.swap_turns_augmenter.v1")()
    reader = registry.readers.get("spacy_paraphrase.PairCorpus.v1")
    examples = list(reader(path, augmenter=augmenter)(nlp))
    assert [eg.reference.text for eg in examples] == ["a b c d e", "c d e a b", "f g h", "g h f"]
    assert [eg.reference.cats["IS_PARAPHRASE"] for eg in examples] == [1.0, 1.0, 0.0, 0.0]
    for eg in examples:
        # the predicted side is a bare pair Doc with the reference's tokens and turns
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
        assert [(s.start, s.end) for s in get_turns(eg.predicted)] == [
            (s.start, s.end) for s in get_turns(eg.reference)
        ]
        assert eg.predicted.cats == {}
    assert len(list(PairCorpus(path)(nlp))) == 2
    # limit applies to the corpus' pairs, before augmentation
    assert [eg.reference.text for eg in reader(path, limit=1, augmenter=augmenter)(nlp)] == ["a b c d e", "c d e a b"]
