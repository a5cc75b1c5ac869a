import numpy
from thinc.types import Ragged

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.words import widen_alignment, word_bounds, word_index, word_values

FIRST = "It was my 20th time, from Rome.  Yes (really)!"
SECOND = "You have been doing this U.S. thing."


def test_string_and_word_list_have_the_same_words(nlp):
    as_string = make_pair_doc(nlp, FIRST, SECOND)
    as_words = make_pair_doc(nlp, FIRST.split(" "), SECOND.split(" "))
    assert len(as_string) > len(as_words)  # spaCy splits punctuation off
    bounds_s, bounds_w = word_bounds(as_string), word_bounds(as_words)
    assert len(bounds_s) == len(bounds_w) == len(as_words)
    words_s = [as_string[a:b].text for a, b in bounds_s]
    assert words_s == [t.text for t in as_words]
    # "Rome" and "." are one word; the double space is a word of its own
    rome = [i for i, t in enumerate(as_string) if t.text == "Rome"][0]
    assert word_index(as_string)[rome] == word_index(as_string)[rome + 1]


def test_words_never_cross_turns(nlp):
    doc = make_pair_doc(nlp, ["no", "space"], ["after"])
    assert word_index(doc).tolist() == [0, 1, 2]


def _ragged(lists):
    flat = numpy.asarray([i for lst in lists for i in lst], dtype="i")
    return Ragged(flat, numpy.asarray([len(lst) for lst in lists], dtype="i"))


def test_widen_alignment_unions_pieces_of_a_word(nlp):
    doc = make_pair_doc(nlp, "Rome. Yes", "ok")  # tokens: Rome . Yes ok
    align = _ragged([[1], [2], [3], [5]])
    wide = widen_alignment(doc, align)
    assert wide.lengths.tolist() == [2, 2, 1, 1]
    assert wide.dataXd.tolist() == [1, 2, 1, 2, 3, 5]


def test_widen_alignment_leaves_word_lists_untouched(nlp):
    doc = make_pair_doc(nlp, ["Rome.", "Yes"], ["ok"])
    align = _ragged([[1, 2], [3], [5]])
    assert widen_alignment(doc, align) is align


def test_word_values_take_the_largest_token_value(nlp):
    doc = make_pair_doc(nlp, "Rome. Yes", "ok")
    values = numpy.asarray([0.2, numpy.nan, 0.7, numpy.nan], dtype="float32")
    out = word_values(doc, values)
    assert out[:2].tolist() == [numpy.float32(0.2), numpy.float32(0.7)]
    assert numpy.isnan(out[2])
