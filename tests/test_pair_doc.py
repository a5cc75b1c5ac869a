import pytest
import spacy
from hypothesis import given, settings, strategies as st
from spacy.tokens import Span

from spacy_paraphrase import PairDocError, get_turns, make_pair_doc
from spacy_paraphrase.pair_doc import copy_pair_doc, words_to_doc


def test_string_turns(nlp):
    doc = make_pair_doc(nlp, "I love it.", "You like it?")
    first, second = get_turns(doc)
    assert [t.text for t in first] == ["I", "love", "it", "."]
    assert [t.text for t in second] == ["You", "like", "it", "?"]
    assert doc.text == "I love it. You like it?"
    assert (first.label_, second.label_) == ("FIRST", "SECOND")


def test_speakers_and_id(nlp):
    doc = make_pair_doc(nlp, "a b", "c", speakers=("GUEST", "HOST"), pair_id="CNN-1-2")
    assert [s.label_ for s in doc.spans["turns"]] == ["GUEST", "HOST"]
    assert doc.spans["turns"].attrs["id"] == "CNN-1-2"


def test_word_lists_keep_indices_with_empty_words(nlp):
    words1 = ["my", "", "20th", "time", ""]
    words2 = ["", "doing", "this"]
    doc = make_pair_doc(nlp, words1, words2)
    first, second = get_turns(doc)
    assert len(first) == len(words1) and len(second) == len(words2)
    for w, t in zip(words1, first):
        assert t.text == (w or " ")
    assert doc.text[first.start_char : first.end_char] == " ".join(words1)
    assert doc.text[second.start_char : second.end_char] == " ".join(words2)
    assert words_to_doc(nlp.vocab, words1).text == " ".join(words1)
    assert words_to_doc(nlp.vocab, words2).text == " ".join(words2)


NO_SPACE_CHARS = st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cs"), blacklist_characters=" ")


@given(
    st.lists(
        st.one_of(st.just(""), st.text(alphabet=NO_SPACE_CHARS, min_size=1, max_size=6)),
        min_size=1,
        max_size=12,
    ).filter(lambda ws: any(ws))
)
@settings(max_examples=200, deadline=None)
def test_words_to_doc_property(words):
    import spacy

    nlp = spacy.blank("en")
    doc = words_to_doc(nlp.vocab, words)
    assert len(doc) == len(words)
    assert doc.text == " ".join(words)
    for w, t in zip(words, doc):
        assert t.text == (w or " ")


@pytest.mark.parametrize("bad", ["", "   ", "\n\t"])
def test_empty_turns_raise(nlp, bad):
    with pytest.raises(PairDocError, match="empty"):
        make_pair_doc(nlp, bad, "fine")
    with pytest.raises(PairDocError, match="empty"):
        make_pair_doc(nlp, "fine", bad)
    with pytest.raises(PairDocError):
        make_pair_doc(nlp, ["", ""], "fine")


def test_doc_without_turns_names_make_pair_doc(nlp):
    with pytest.raises(PairDocError, match="make_pair_doc"):
        get_turns(nlp("just text"))


def test_turns_out_of_order_or_overlapping(nlp):
    doc = make_pair_doc(nlp, "a b c", "d e")
    doc.spans["turns"] = [Span(doc, 3, 5), Span(doc, 0, 3)]
    with pytest.raises(PairDocError, match="out of order"):
        get_turns(doc)
    doc.spans["turns"] = [Span(doc, 0, 3), Span(doc, 2, 5)]
    with pytest.raises(PairDocError, match="overlap"):
        get_turns(doc)
    doc.spans["turns"] = [Span(doc, 0, 5)]
    with pytest.raises(PairDocError, match="exactly two"):
        get_turns(doc)


def test_copy_pair_doc(nlp):
    doc = make_pair_doc(nlp, ["a", "", "b"], "c d", speakers=("X", "Y"), pair_id="q1")
    doc.spans["other"] = [doc[0:1]]
    copy = copy_pair_doc(doc)
    assert [t.text for t in copy] == [t.text for t in doc]
    assert copy.text == doc.text
    assert "other" not in copy.spans
    assert [(s.start, s.end, s.label_) for s in copy.spans["turns"]] == [
        (s.start, s.end, s.label_) for s in doc.spans["turns"]
    ]
    assert copy.spans["turns"].attrs["id"] == "q1"


def test_lone_surrogate_is_a_clear_error(nlp):
    with pytest.raises(PairDocError, match="not valid Unicode"):
        make_pair_doc(nlp, "bad \ud800 text", "fine")
    with pytest.raises(PairDocError, match="not valid Unicode"):
        make_pair_doc(nlp, "fine", ["bad", "\udc80"])


def _pair(first: str, second: str):
    from spacy_paraphrase.dialogs import Turn, TurnPair, Utterance

    return TurnPair("p", "c", Turn.of([Utterance("a", "c", None, first)]), Turn.of([Utterance("b", "c", None, second)]))


@pytest.mark.parametrize("text", ["", "   ", "\u200b\u00ad", "\ufeff", "\x1b", "a\ud800b"])
def test_one_turn_check_for_make_pair_doc_and_the_annotate_records(text):
    """make_pair_doc and annotate's row check refuse the same turn texts, for
    the same reason (pair_doc.turn_text_problem): a turn with no visible
    character is refused like an empty one, not scored as nothing."""
    from spacy_paraphrase.annotate.record_format import invalid_side
    from spacy_paraphrase.pair_doc import turn_text_problem

    nlp = spacy.blank("en")
    with pytest.raises(PairDocError) as info:
        make_pair_doc(nlp, "A fine first turn.", text)
    assert invalid_side(_pair("A fine first turn.", text)) == ("second", str(info.value)) == ("second", turn_text_problem(text, "second"))


def test_the_turn_check_counts_characters_against_max_length():
    from spacy_paraphrase.annotate.record_format import invalid_side

    pair = _pair("abcdef", "ok")
    assert invalid_side(pair, max_length=6) is None
    side, reason = invalid_side(pair, max_length=5)
    assert side == "first" and "6 characters" in reason and "nlp.max_length = 5" in reason


def test_word_lists_and_docs_pass_the_same_turn_check():
    nlp = spacy.blank("en")
    with pytest.raises(PairDocError, match="no visible text"):
        make_pair_doc(nlp, ["fine"], ["\u200b", "\u00ad"])
    with pytest.raises(PairDocError, match="no visible text"):
        make_pair_doc(nlp, nlp.make_doc("fine"), nlp.make_doc("\ufeff"))
    assert [t.text for t in get_turns(make_pair_doc(nlp, ["fine", ""], ["a\u200bb"]))][1] == "a\u200bb"
