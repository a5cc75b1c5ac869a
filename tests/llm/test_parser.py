from spacy_paraphrase.llm.parser import parse_answer

from .helpers import answer


def test_full_answer():
    p = parse_answer(answer(True, ["a b", "c d"], ["e"]))
    assert p.answer is True and p.guest_quotes == ["a b", "c d"] and p.host_quotes == ["e"] and p.problems == []


def test_no_with_none_quotes():
    p = parse_answer(answer(False))
    assert p.answer is False and p.guest_quotes == [] and p.host_quotes == [] and p.problems == []


def test_yes_with_none_on_one_side():
    p = parse_answer(answer(True, ["a b"], []))
    assert p.answer is True and p.host_quotes == [] and p.problems == []


def test_no_classification_line_falls_back_to_explanation():
    p = parse_answer('It is restated. Therefore, the answer is Yes.\nVerbatim Quote Guest: "x"\nVerbatim Quote Host: "y"')
    assert p.answer is True and p.problems == ["no_classification"] and p.guest_quotes == ["x"]


def test_no_answer_at_all_is_unparsed_not_no():
    p = parse_answer("The guest talks about the weather and the host")
    assert p.answer is None and not p.parsed and "no_answer" in p.problems


def test_bad_classification_word_is_unparsed():
    p = parse_answer(answer(True, ["x"], ["y"]).replace("Classification: Yes.", "Classification: Maybe."))
    assert p.answer is None and "bad_classification" in p.problems


def test_missing_quote_line():
    p = parse_answer('Therefore, the answer is yes.\nVerbatim Quote Host: "y"\nClassification: Yes.')
    assert p.answer is True and p.guest_quotes == [] and p.host_quotes == ["y"] and p.problems == ["missing_guest"]


def test_unquoted_quote():
    p = parse_answer("Therefore, the answer is yes.\nVerbatim Quote Guest: coming back\nVerbatim Quote Host: None.\nClassification: Yes")
    assert p.guest_quotes == ["coming back"] and "unquoted_guest" in p.problems


def test_curly_quotes_markdown_and_case():
    p = parse_answer("verbatim quote guest: \u201cthe flight\u201d\nVERBATIM QUOTE HOST: \u201cflight\u201d\n**Classification:** **yes**")
    assert p.answer is True and p.guest_quotes == ["the flight"] and p.host_quotes == ["flight"]


def test_text_after_the_classification_is_ignored():
    text = answer(False) + "\n\nGuest: more\nHost: more\n" + answer(True, ["more"], ["more"])
    p = parse_answer(text)
    assert p.answer is False and p.guest_quotes == [] and p.host_quotes == []


def test_custom_labels():
    text = 'Verbatim Quote Client: "a"\nVerbatim Quote Counsellor: "b"\nClassification: Yes.'
    p = parse_answer(text, labels=("Client", "Counsellor"))
    assert p.guest_quotes == ["a"] and p.host_quotes == ["b"]
    assert parse_answer(text).problems == ["missing_guest", "missing_host"]


def test_not_text():
    p = parse_answer(None)
    assert p.answer is None and p.problems == ["not_text:NoneType"]
