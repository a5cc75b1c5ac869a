import pytest
import spacy

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.llm.align import exact_word_match, text_units

from .helpers import require

require("rapidfuzz", "fuzzy quote alignment")

from spacy_paraphrase.llm import align_quote, locate_quote  # noqa: E402


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def pair(nlp, a, b):
    doc = make_pair_doc(nlp, a, b)
    return doc, doc.spans["turns"][0], doc.spans["turns"][1]


def test_exact_returns_span_of_same_doc(nlp):
    doc, first, _ = pair(nlp, "And it will be my 20th time in doing it.", "Twenty times!")
    found = align_quote(first, "my 20th time")
    assert found.method == "exact" and found.score == 100
    assert found.span.doc is doc and found.span.text == "my 20th time"


def test_exact_does_not_match_inside_a_word(nlp):
    _, first, _ = pair(nlp, "the cat sat", "ok")
    # "he" occurs only inside "the": not a quote of the turn
    assert align_quote(first, "he", fuzzy=False) is None
    assert align_quote(first, "cat", fuzzy=False).span.text == "cat"


@pytest.mark.parametrize("quote", ["MY 20TH TIME", "my 20th time,", "“my  20th time”", "my\n20th time"])
def test_normalized_case_punctuation_quotes_whitespace(nlp, quote):
    _, first, _ = pair(nlp, "And it will be my 20th time in doing it.", "Twenty times!")
    found = align_quote(first, quote)
    assert found.method == "normalized" and found.span.text == "my 20th time"


def test_contraction_both_ways_and_spacy_split_tokens(nlp):
    _, first, _ = pair(nlp, "Well, you've been doing this for a while now.", "Yes.")
    found = align_quote(first, "you have been doing this")
    assert found.method == "normalized" and found.span.text == "you've been doing this"
    # a word-list turn: "you've" is one token
    doc = make_pair_doc(nlp, "you have been doing this".split(), ["yes"])
    found = align_quote(doc.spans["turns"][0], "you've been doing this")
    assert found.method == "normalized" and (found.start, found.end) == (0, 5)


def test_fuzzy_omitted_and_added_word(nlp):
    _, first, _ = pair(nlp, "So we are coming back daryn to a normal winter this year.", "OK.")
    found = align_quote(first, "coming back to a normal winter")
    assert found.method == "fuzzy" and found.span.text == "coming back daryn to a normal winter"
    assert 80 <= found.score < 100
    found = align_quote(first, "coming back daryn to a really normal winter")
    assert found.method == "fuzzy" and found.span.text == "coming back daryn to a normal winter"


def test_min_score_is_the_cut(nlp):
    _, first, _ = pair(nlp, "So we are coming back daryn to a normal winter this year.", "OK.")
    score = align_quote(first, "coming back to a normal winter").score
    assert align_quote(first, "coming back to a normal winter", min_score=score + 0.01) is None
    assert align_quote(first, "coming back to a normal winter", min_score=score) is not None
    assert align_quote(first, "coming back to a normal winter", fuzzy=False) is None


def test_not_in_text(nlp):
    doc, first, _ = pair(nlp, "The flight was coming from Brazil.", "Coming from Brazil, OK.")
    assert align_quote(first, "the senator resigned yesterday") is None
    status = locate_quote(doc, "the senator resigned yesterday", "first")
    assert status.status == "not_found" and not status.kept


def test_other_turn_kept_or_dropped(nlp):
    doc, _, second = pair(nlp, "The flight was coming from Brazil.", "That is what the airline says, OK.")
    status = locate_quote(doc, "what the airline says", "first")
    assert status.status == "other_turn" and status.side_found == "second"
    assert (status.start, status.end) == (second.start + 2, second.start + 6)
    dropped = locate_quote(doc, "what the airline says", "first", use_other_turn=False)
    assert dropped.status == "other_turn" and not dropped.kept


def test_ambiguous(nlp):
    doc, first, _ = pair(nlp, "I said no. And then I said no again.", "No?")
    assert align_quote(first, "I said no") is None
    assert locate_quote(doc, "I said no", "first").status == "ambiguous"
    # normalized: twice in the turn
    assert locate_quote(doc, "i SAID no", "first").status == "ambiguous"
    # fuzzy: two equally good windows
    doc2, first2, _ = pair(nlp, "We won the big game. Then we won the big game again.", "You won.")
    assert align_quote(first2, "we won big game") is None
    assert locate_quote(doc2, "we won big game", "first").status == "ambiguous"
    assert align_quote(first2, "we won big game again").span.text == "we won the big game again"
    # one occurrence is fine
    assert align_quote(first, "I said no again").span.text == "I said no again"


def test_empty_quote(nlp):
    doc, first, _ = pair(nlp, "Hello there.", "Hi.")
    assert align_quote(first, "...") is None
    assert locate_quote(doc, " ... ", "first").status == "empty"


def test_bad_input_is_a_clear_error(nlp):
    doc, first, _ = pair(nlp, "Hello there.", "Hi.")
    with pytest.raises(TypeError, match="turn Span"):
        align_quote(doc, "hello")
    with pytest.raises(TypeError, match="string"):
        align_quote(first, None)
    with pytest.raises(ValueError, match="min_score"):
        align_quote(first, "hello", min_score=120)
    with pytest.raises(ValueError, match="side"):
        locate_quote(doc, "hello", "guest")


def test_units():
    assert text_units("You've  GOT it, don't you? Can't.") == ["you", "have", "got", "it", "do", "not", "you", "can", "not"]


def test_authors_exact_rule():
    words = "So we are coming back daryn to a normal winter".split()
    assert exact_word_match(words, "Coming back daryn") == (3, 6)
    assert exact_word_match(words, "coming back dar") == (3, 6)  # last word may be a prefix
    assert exact_word_match(words, "coming back to a normal winter") is None
