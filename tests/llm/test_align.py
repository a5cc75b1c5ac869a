import pytest
import spacy

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.llm.align import SHORT_EVIDENCE, text_units

from benchmarks.run_llm_alignment import exact_word_match

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
    # word for word twice (the same words said again): the first, as the authors' rule
    assert align_quote(first, "I said no").span.start == 0
    status = locate_quote(doc, "I said no", "first")
    assert (status.status, status.start, status.end) == ("aligned", 0, 3)
    status = locate_quote(doc, "i SAID no", "first")  # normalized, twice in the turn
    assert (status.status, status.method, status.start, status.end) == ("aligned", "normalized", 0, 3)
    # short step, the same words twice: the first
    doc2, first2, _ = pair(nlp, "We won the big game. Then we won the big game again.", "You won.")
    assert align_quote(first2, "we won big game").span.text == "We won the big game"
    # fuzzy: two equally good windows with different words
    doc2, first2, _ = pair(nlp, "We won the big game. Then we won our big game again.", "You won.")
    assert align_quote(first2, "we won big game") is None
    assert locate_quote(doc2, "we won big game", "first").status == "ambiguous"
    assert align_quote(first2, "we won big game again").span.text == "we won our big game again"
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


# The four defects of issue 38, on excerpts of ContextDeP dev/train pairs and
# perturbations of their highlights (quotes as an LLM changes them).
NEWSPAPER = ("I think she ran a great newspaper.",
             "That's right. We heard Ben Bradlee being interviewed earlier about how badly the Post "
             "wanted to be a great newspaper, and she certainly did that.")
INTERNET = ("I was worried when the pings stopped and no one answered their phone.",
            "So you learned via the Internet.")
RUSSIA = ("And in the end, it was Russia, a country not known for its leadership on public health issues, "
          "that stepped in and introduced the measure.",
          "And when Russia stepped in, did the U.S. back off")


def test_other_turn_word_for_word_beats_a_fuzzy_echo_in_the_asked_turn(nlp):
    doc, first, second = pair(nlp, *NEWSPAPER)
    # the guest's words filed under the host: the host's "be a great newspaper" is only an echo
    status = locate_quote(doc, "she ran a great newspaper.", "second")
    assert (status.status, status.side_found, status.method) == ("other_turn", "first", "exact")
    assert doc[status.start : status.end].text == "she ran a great newspaper."
    dropped = locate_quote(doc, "she ran a great newspaper.", "second", use_other_turn=False)
    assert dropped.status == "other_turn" and not dropped.kept  # no span in the asked turn either
    # align_quote looks at one turn only: there the echo is the best it has
    assert align_quote(second, "she ran a great newspaper.").method == "fuzzy"


def test_the_better_turn_wins_and_a_tie_is_ambiguous(nlp):
    # the quote is word for word in both turns: the turn the model named wins
    doc, _, second = pair(nlp, "No, the flight was coming from Brazil.", "Coming from Brazil, OK.")
    status = locate_quote(doc, "coming from Brazil", "second")
    assert (status.status, status.side_found) == ("aligned", "second") and status.start == second.start
    # the same words in both turns with a filler put in (short step): the turn the model named
    doc, first, second = pair(nlp, "Turkey is garbage. That is what he said.", "Turkey is garbage? Really?")
    for side, turn in (("first", first), ("second", second)):
        status = locate_quote(doc, "Turkey is really garbage", side)
        assert (status.status, status.method, status.start) == ("aligned", "short", turn.start)
    # equally good (fuzzy) in both turns, with different words: ambiguous, no span
    doc, _, _ = pair(nlp, "Turkey is pure garbage. That is what he said.", "Turkey is mere garbage? Really?")
    for side in ("first", "second"):
        assert locate_quote(doc, "Turkey is total garbage", side).status == "ambiguous"


@pytest.mark.parametrize("quote,side,expected", [
    ("you learned via the In", "second", "you learned via the Internet"),  # exact, cut-off last word
    ("YOU LEARNED VIA THE INTER", "second", "you learned via the Internet"),  # normalized
    ("you learned the Intern", "second", "you learned via the Internet"),  # fuzzy: a word left out too
    ("no one answered their pho", "first", "no one answered their phone"),
])
def test_cut_off_last_word_is_kept(nlp, quote, side, expected):
    doc, _, _ = pair(nlp, *INTERNET)
    status = locate_quote(doc, quote, side)
    assert status.status == "aligned" and doc[status.start : status.end].text == expected


def test_whole_word_beats_a_prefix_and_two_completions_are_ambiguous(nlp):
    doc, first, _ = pair(nlp, "I said no. Then I said nothing at all.", "Nothing?")
    # "I said no" is whole once; "I said nothing" only as a prefix: not ambiguous
    assert align_quote(first, "I said no").span.text == "I said no"
    # "n" cut from "no" or from "nothing": two different words, no guess
    assert align_quote(first, "I said n", fuzzy=False) is None
    assert locate_quote(doc, "I said n", "first").status == "ambiguous"


# Issue 50: a last word cut off anywhere, one letter included, as the authors' rule takes it.
MAIL = ("I thought it had come in the mail, so much for that. They went into bones and a pope.",
        "The mail? We need positive train control, then positive train control again.")


@pytest.mark.parametrize("quote,side,expected", [
    ("it had come in the m", "first", "it had come in the mail"),  # exact, one letter
    ("IT HAD COME IN THE M", "first", "it had come in the mail"),  # normalized, one letter
    ("so m", "first", "so much"),
    ("into b", "first", "into bones"),
    ("a p", "first", "a pope"),
    # the same phrase twice: every place completes it to the same words, so the first, as the authors' rule
    ("positive train c", "second", "positive train control"),
    ("POSITIVE TRAIN CONT", "second", "positive train control"),
])
def test_any_proper_prefix_completes_a_word_for_word_quote(nlp, quote, side, expected):
    doc, _, _ = pair(nlp, *MAIL)
    status = locate_quote(doc, quote, side)
    assert status.status == "aligned" and status.method in ("exact", "normalized")
    assert doc[status.start : status.end].text == expected
    turn = doc.spans["turns"][0 if side == "first" else 1]
    assert "train" not in quote or doc[status.end].text == ","  # the first place of the phrase said twice
    assert exact_word_match([t.text for t in turn], quote) is not None  # the authors' rule takes it too


@pytest.mark.parametrize("quote,side,expected", [
    ("you via the Internet.", "second", "you learned via the Internet"),  # dropped second word
    ("And Russia stepped in, did the U.S. back off?", "second", "And when Russia stepped in, did the U.S. back off"),
    ("And in the end, it Russia, a country not known", "first", "And in the end, it was Russia, a country not known"),
    ("it was Russia, a country known for its leadership", "first", "it was Russia, a country not known for its leadership"),
])
def test_a_dropped_word_does_not_cut_the_edge_word(nlp, quote, side, expected):
    doc, _, _ = pair(nlp, *RUSSIA) if "Russia" in quote else pair(nlp, *INTERNET)
    status = locate_quote(doc, quote, side)
    assert status.status == "aligned" and doc[status.start : status.end].text == expected


@pytest.mark.parametrize("quote,side,expected", [
    ("Russia really stepped in", "second", "Russia stepped in"),  # a word added
    ("Russia stepped in just", "second", "Russia stepped in"),  # ... at the end
    ("Russia said in", "second", "Russia stepped in"),  # a word replaced
    ("Russia steps in", "second", "Russia stepped in"),
    ("public wealth issues", "first", "public health issues"),
    ("the Internets", "second", "the Internet"),  # two words: a form of the word
])
def test_short_quote_with_one_word_added_or_replaced(nlp, quote, side, expected):
    doc, _, _ = pair(nlp, *(INTERNET if "Internet" in quote else RUSSIA))
    status = locate_quote(doc, quote, side)
    assert status.status == "aligned" and status.method == "short"
    assert doc[status.start : status.end].text == expected
    turn = doc.spans["turns"][0 if side == "first" else 1]
    assert align_quote(turn, quote).span.text == expected


@pytest.mark.parametrize("quote", [
    "the senate voted",  # none of its words in the pair
    "Russia did",  # "Russia" alone, and "did" (a stop word) is no rewording of "stepped"
    "U.S. economy",  # "U.S. back": two one-letter units are no evidence, even lenient
])
@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_short_quote_refused_without_evidence_or_when_not_unique(nlp, quote, evidence):
    doc, first, second = pair(nlp, *RUSSIA)
    for side in ("first", "second"):
        assert not locate_quote(doc, quote, side, short_evidence=evidence).kept
    assert align_quote(first, quote, short_evidence=evidence) is None
    assert align_quote(second, quote, short_evidence=evidence) is None


FOUR_MILES = ("It was taken from a satellite at about four miles per second, and they think the police allegedly "
              "stole the tapes. It is going to be a great idea, worth $89 billion.",
              "No warning. It was all across the roadway at the time, a fairly rare thing, you know.")


@pytest.mark.parametrize("quote,side,expected", [
    ("way stole", "first", "allegedly stole"),  # two words, one replaced: a rare word is the evidence
    ("No warning. just", "second", "No warning"),  # a filler at the edge was put in: the span leaves "It" out
    ("thing the roadway", "second", "across the roadway"),  # another word at the edge replaced "across"
    ("going to actually be", "first", "going to be"),  # the turn's words with a filler put in: "going" is enough
])
def test_short_quote_replaced_word_and_edges(nlp, quote, side, expected):
    doc, _, _ = pair(nlp, *FOUR_MILES)
    status = locate_quote(doc, quote, side)
    assert (status.status, status.method) == ("aligned", "short")
    assert doc[status.start : status.end].text == expected


@pytest.mark.parametrize("quote", [
    "the thing",  # "they think": "thing" is no form of "think"
    "fair skin",  # nor "fair" of "fairly"
    "great said",  # a lone frequent word is no evidence, nor for the fuzzy step ("great idea")
    "big time",
    "$20 bill",  # a cut-off word ("billion") is no evidence of its own
    "It's big",  # "It is going": "it is" are two units of one word of the quote, no evidence even lenient
    "unclog the time",  # "at the time": frequent words and a word of its own (issue 50)
])
@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_invented_short_quote_placed_nowhere(nlp, quote, evidence):
    doc, _, _ = pair(nlp, *FOUR_MILES)
    for side in ("first", "second"):
        assert not locate_quote(doc, quote, side, short_evidence=evidence).kept


@pytest.mark.parametrize("text,quote,side,expected", [
    # two stop words ("And when Russia"): "they" is a filler at the edge, so read as put in
    (RUSSIA, "and when they", "second", "And when"),
    # two stop words, a word left out ("all" of "It was all across")
    (FOUR_MILES, "it was across", "second", "It was all across"),
])
def test_lenient_evidence_places_what_strict_refuses(nlp, text, quote, side, expected):
    doc, _, _ = pair(nlp, *text)
    status = locate_quote(doc, quote, side)  # lenient is the default
    assert (status.status, status.method) == ("aligned", "short")
    assert doc[status.start : status.end].text == expected
    turn = doc.spans["turns"][0 if side == "first" else 1]
    assert align_quote(turn, quote).span.text == expected
    for s in ("first", "second"):
        assert not locate_quote(doc, quote, s, short_evidence="strict").kept
    assert align_quote(turn, quote, short_evidence="strict") is None


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_two_words_of_one_letter_or_a_cut_off_word_are_no_lenient_evidence(nlp, evidence):
    doc, first, _ = pair(nlp, *FOUR_MILES)
    # "a great idea": "a" has one letter, so only "great" (a frequent word) matches
    assert not locate_quote(doc, "a great deal", "first", short_evidence=evidence).kept
    # "at the time": "tim" is a cut-off word, so only "the" matches for step 3; the fuzzy step finds it
    status = locate_quote(doc, "in the tim", "second", short_evidence=evidence)
    assert (status.status, status.method) == ("aligned", "fuzzy")


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_a_short_quote_with_two_places_is_not_placed_by_the_fuzzy_step(nlp, evidence):
    # "going to work": one word from "going to be" and from "going to do"; the fuzzy step takes the
    # strict rule ("going" is a frequent word, "to" a stop word), as its best window need not be the only one
    doc, _, _ = pair(nlp, "We are going to be fine, and the kids are going to do well.", "OK.")
    assert not locate_quote(doc, "going to work", "first", short_evidence=evidence).kept


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
@pytest.mark.parametrize("quote", ["who signed the", "what was missing?"])
def test_frequent_words_and_a_replaced_word_are_no_evidence(nlp, evidence, quote):
    # issue 50: quotes of another pair, one word from "who is the" / "what was happening"
    doc, _, _ = pair(nlp, "Who is the man in charge? And what was happening there?", "I don't know.")
    assert not locate_quote(doc, quote, "first", short_evidence=evidence).kept


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
@pytest.mark.parametrize("quote", [
    "coming from",  # "come from": a frequent word in another form and a stop word
    "he didn't think",  # "I don't think": 4 units, but 3 words, so the fuzzy step wants evidence too
])
def test_frequent_words_in_another_form_are_no_evidence(nlp, evidence, quote):
    doc, _, _ = pair(nlp, "Where do they come from? I don't think anyone knows.", "Nobody knows.")
    assert not locate_quote(doc, quote, "first", short_evidence=evidence).kept


@pytest.mark.parametrize("quote,expected", [
    ("sell a basically free ticket?", "sell a free ticket"),  # 4 words with a filler inside
    ("it certainly no longer works.", "it no longer works"),
])
def test_a_filler_inside_a_four_word_quote_was_put_in(nlp, quote, expected):
    doc, _, _ = pair(nlp, "Why would you sell a free ticket? We tried, and it no longer works now.", "Really?")
    status = locate_quote(doc, quote, "first")
    assert (status.status, status.method) == ("aligned", "short")
    assert doc[status.start : status.end].text == expected


def test_short_evidence_must_be_known(nlp):
    doc, first, _ = pair(nlp, *FOUR_MILES)
    with pytest.raises(ValueError, match="short_evidence"):
        locate_quote(doc, "they stole", "first", short_evidence="loose")
    with pytest.raises(ValueError, match="short_evidence"):
        align_quote(first, "they stole", short_evidence="loose")


@pytest.mark.parametrize("words", [False, True])
def test_a_left_out_contraction_keeps_the_first_word(nlp, words):
    first, second = "Well, I haven't been punished for it.", "OK."
    doc = make_pair_doc(nlp, first.split(), second.split()) if words else make_pair_doc(nlp, first, second)
    status = locate_quote(doc, "I been punished.", "first")
    assert status.status == "aligned" and doc[status.start : status.end].text.startswith("I haven")


# Misses of the alignment benchmark's unique places (quotes shaped like the dev/train ones).
METRO = ("You said you did a number of metro areas. We looked at 12 metro areas and it was just a gentle damage.",
         "So you did a number of them, twelve.")


@pytest.mark.parametrize("quote,expected", [
    # a dropped second word: the window that holds every quote unit in order wins over the one
    # that only starts with the quote's first word ("you did ..." also starts with "you")
    ("You you did a number of metro areas.", "You said you did a number of metro areas"),
    # five words, a word left out: the fuzzy step's, not read as "We" put in before "at 12 metro areas"
    ("We at 12 metro areas", "We looked at 12 metro areas"),
])
def test_dropped_word_keeps_the_edge_word(nlp, quote, expected):
    doc, _, _ = pair(nlp, *METRO)
    status = locate_quote(doc, quote, "first")
    assert status.status == "aligned" and doc[status.start : status.end].text == expected


COMPLAINT = ("Yes, and this individual has not filed a formal complaint, as far as we know.",
             "So they have not filed a formal complaint yet.")


def test_fewer_unit_edits_beat_a_higher_score_in_the_other_turn(nlp):
    # "this has not filed ..." is the guest's run with one word left out; the host's "they have
    # not filed ..." scores higher by characters but changes two words
    doc, first, _ = pair(nlp, *COMPLAINT)
    status = locate_quote(doc, "this has not filed a formal complaint,", "first")
    assert (status.status, status.method) == ("aligned", "fuzzy")
    assert doc[status.start : status.end].text == "this individual has not filed a formal complaint"


WAND = ("It's a wand, he said, and the crowd on this I-35 stretch went quiet; he's notoriously hands-on and cheap.",
        "A wand?")


@pytest.mark.parametrize("quote,expected", [
    ("actually It's a wand,", "It's a wand"),  # 3 words, 4 units ("it is"), a filler put in
    ("It's thing wand,", "It's a wand"),  # ... a word replaced
    ("new I-35 stretch", "this I-35 stretch"),  # a hyphenated word: 4 units
    ("also this I-35 stretch", "this I-35 stretch"),  # the filler at the edge is not "on"
    ("he's hands-on and", "he's notoriously hands-on and"),  # 3 words, 5 units, a word left out
])
def test_short_quote_with_a_contraction_or_hyphen(nlp, quote, expected):
    doc, _, _ = pair(nlp, *WAND)
    status = locate_quote(doc, quote, "first")
    assert (status.status, status.method) == ("aligned", "short")
    assert doc[status.start : status.end].text == expected


# Evidence of a place, issue 50's last stretch: quotes of other pairs of the same program that the
# benchmark placed.
PROGRAM = ("We ran the numbers: it is worth $89 billion, and the administration has a plan. It is a process. "
           "That is what they do in their election process.",
           "I think what they're doing in my childhood town is fine. It doesn't appear to be.")


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
@pytest.mark.parametrize("quote", [
    "she ran.",  # "We ran": a lone rare word, a stop word replaced by a stop word
    "a billion",  # "$89 billion"
    "the process",  # "election process": a stop word for a content word
    "administration is",  # "administration has"
    "new childhood.",  # "my childhood": a content word for a stop word
])
def test_a_lone_word_needs_a_content_word_for_a_content_word(nlp, evidence, quote):
    doc, _, _ = pair(nlp, *PROGRAM)
    for side in ("first", "second"):
        assert not locate_quote(doc, quote, side, short_evidence=evidence).kept
    # with a content word for a content word it is a reworded phrase
    status = locate_quote(doc, "electoral process", "first", short_evidence=evidence)
    assert doc[status.start : status.end].text == "election process"


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_a_stop_word_has_no_other_forms(nlp, evidence):
    # "note" is no form of "not" (their crude stems are alike), so this is two words replaced
    doc, _, _ = pair(nlp, *PROGRAM)
    assert not locate_quote(doc, "note appeared. It", "second", short_evidence=evidence).kept
    status = locate_quote(doc, "not appeared to", "second", short_evidence=evidence)  # a form of "appear"
    assert doc[status.start : status.end].text == "n't appear to"


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_neighbours_across_a_sentence_end_are_no_phrase(nlp, evidence):
    doc, _, _ = pair(nlp, *PROGRAM)
    assert not locate_quote(doc, "process that takes", "first", short_evidence=evidence).kept
    status = locate_quote(doc, "process. That takes", "first", short_evidence=evidence)  # the quote has it too
    assert doc[status.start : status.end].text == "process. That is"
    # turns given as words (ContextDeP's tokens): the sentence end is part of the word "process."
    doc = make_pair_doc(nlp, "It is a process. That is what we do.".split(), "OK.".split())
    assert not locate_quote(doc, "process that takes", "first", short_evidence=evidence).kept
    assert locate_quote(doc, "a process that", "first", short_evidence=evidence).kept  # no sentence end inside


@pytest.mark.parametrize("evidence", SHORT_EVIDENCE)
def test_a_cut_off_word_is_no_second_matching_word(nlp, evidence):
    # "think the" as "think what they're" with "what" left out and "the" cut from "they": only "think"
    # (a frequent word) matches
    doc, _, _ = pair(nlp, *PROGRAM)
    assert not locate_quote(doc, "think the", "second", short_evidence=evidence).kept


@pytest.mark.parametrize("quote,expected", [("be a", "be another"), ("for the", "for them"), ("is a", "is abusing")])
def test_a_short_quote_cut_off_only_in_the_other_turn_is_not_placed(nlp, quote, expected):
    doc, _, _ = pair(nlp, "They will be another country for them. This is abusing.", "OK, then.")
    assert not locate_quote(doc, quote, "second").kept  # a cut word and the wrong turn: two errors at once
    status = locate_quote(doc, quote, "first")  # in its own turn: the authors' rule
    assert doc[status.start : status.end].text == expected
    # a longer quote cut off in the other turn is placed there
    status = locate_quote(doc, "will be another coun", "second")
    assert (status.status, doc[status.start : status.end].text) == ("other_turn", "will be another country")


@pytest.mark.parametrize("quote", ["the night just shift?", "THE NIGHT SHIFT"])
def test_the_same_words_said_again_give_the_first_place(nlp, quote):
    # word for word (normalized) or one edit (short step) from "the night shift", said twice: the first
    doc, first, _ = pair(nlp, "We worked the night shift. Then the night shift again.", "OK.")
    status = locate_quote(doc, quote, "first")
    assert (status.status, doc[status.start : status.end].text, status.start) == ("aligned", "the night shift", 2)


@pytest.mark.parametrize("side", ["first", "second"])
def test_the_same_words_in_both_turns_give_the_quotes_own_turn(nlp, side):
    # one edit from "stepped in", which the guest and the host both said: the turn the model named
    doc, first, second = pair(nlp, *RUSSIA)
    turn = first if side == "first" else second
    status = locate_quote(doc, "stepped in really", side)
    assert (status.status, status.side_found) == ("aligned", side)
    assert turn.start <= status.start and doc[status.start : status.end].text == "stepped in"
    assert align_quote(turn, "stepped in really").span.start == status.start
