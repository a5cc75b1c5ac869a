import numpy

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.paraphrase_spans.strings import check_strings, project_to_words, turn_max_on_words
from spacy_paraphrase.words import token_map

FIRST = "And it will be my 20th time in doing it as a television commentator from Rome."
SECOND = "Yes, you've been doing this for a while now."


def test_string_and_word_input_give_the_same_words(trained_pipeline):
    nlp, _ = trained_pipeline
    as_words = nlp(make_pair_doc(nlp, FIRST.split(" "), SECOND.split(" ")))
    as_string = nlp(make_pair_doc(nlp, FIRST, SECOND))
    assert len(as_string) > len(as_words)  # "Rome" + ".", "Yes" + ",", "you" + "'ve", ...
    probs_w, probs_s = token_probs(as_words), token_probs(as_string)
    mapping = token_map(as_string, as_words)
    for word, tokens in enumerate(mapping):
        # every token of a word carries the word's own probability
        numpy.testing.assert_allclose(probs_s[tokens], probs_w[word], rtol=1e-5, atol=1e-6)
    rome = [t.i for t in as_string if t.text == "Rome"][0]
    assert as_string[rome + 1].text == "." and probs_s[rome + 1] == probs_s[rome]
    assert abs(as_string.cats["PARAPHRASE"] - as_words.cats["PARAPHRASE"]) < 1e-6
    readout = nlp.get_pipe("paraphrase_spans").readout.replace(threshold=0.0, highlight_threshold=0.9,
                                                                  highlight_scale="turn_max")
    readout.reannotate(as_words)
    readout.reannotate(as_string)
    projected = project_to_words(as_string, make_pair_doc(nlp, FIRST.split(" "), SECOND.split(" ")), readout)
    assert [(s.start, s.end) for s in projected.spans["paraphrase"]] == [
        (s.start, s.end) for s in as_words.spans["paraphrase"]]
    assert all(turn_max_on_words(as_string, probs_s))


def test_check_strings_reports_agreement(trained_pipeline):
    nlp, examples = trained_pipeline
    readout = nlp.get_pipe("paraphrase_spans").readout.replace(threshold=0.0)
    words, strings, checks = check_strings(nlp, examples, readout)
    assert len(words) == len(strings) == len(examples)
    assert checks["same_decision_share"] == 1.0
    assert checks["word_jaccard_between_inputs"] == 1.0
    assert checks["strings_punctuation_only_spans"] == 0
    for w, s in zip(words, strings):
        assert len(s.predicted) == len(w.reference)  # scored word by word against the reference
