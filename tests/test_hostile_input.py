"""Messy real-world input: each case gets a clear error or a documented,
checked result."""
import numpy
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from spacy.tokens import Span

from spacy_paraphrase import PairDocError, make_pair_doc, token_probs
from spacy_paraphrase.pair_doc import has_visible_text


def _scored(doc):
    probs = token_probs(doc)
    first, second = doc.spans["turns"]
    assert not numpy.isnan(probs[first.start : second.end]).any()
    assert ((probs >= 0) & (probs <= 1)).all()
    assert doc.cats["PARAPHRASE"] == pytest.approx(doc.spans["paraphrase"].attrs["pair_score"])
    return probs


@pytest.mark.parametrize(
    "first,second",
    [
        ("Yes.", "No."),  # single-token turns (plus punctuation)
        (["Yes"], ["No"]),
        ("Բարեւ, ինչպե՞ս ես։", "Լավ եմ, շնորհակալություն։"),  # Armenian
        ("我们赢了比赛。", "你们赢了！"),  # Chinese
        ("لقد فزنا بالمباراة", "مبروك الفوز"),  # Arabic
        ("We won 🎉🎉", "🏆 congrats"),  # emoji
        ("zero\u200bwidth and\u00adsoft hyphen", "bell\x07 and nul-ish \x01 chars"),  # zero-width / control
        (["word", "\u200b", "\x07", "other"], ["\u2063", "reply"]),  # tokens the tokenizer maps to nothing
        ("a\n\nb\tc", "line\r\nbreaks"),
    ],
)
def test_unusual_text_is_fully_scored(trained_pipeline, first, second):
    nlp, _ = trained_pipeline
    doc = nlp(make_pair_doc(nlp, first, second))
    _scored(doc)


def test_tokens_without_pieces_follow_the_documented_rule(trained_pipeline):
    nlp, _ = trained_pipeline
    doc = nlp(make_pair_doc(nlp, ["word", "\u200b", "other"], ["reply", "\u2063"]))
    probs = token_probs(doc)
    assert probs[1] == pytest.approx(min(probs[0], probs[2]))  # inside a turn: min of neighbours
    assert probs[4] == 0.0  # at a turn's edge


def test_bad_docs_raise_clear_errors(trained_pipeline):
    nlp, _ = trained_pipeline
    with pytest.raises(PairDocError, match="make_pair_doc"):
        nlp("no turns here")
    doc = make_pair_doc(nlp, "a b c", "d e")
    doc.spans["turns"] = [Span(doc, 3, 5), Span(doc, 0, 3)]
    with pytest.raises(PairDocError, match="out of order"):
        nlp(doc)
    doc.spans["turns"] = [Span(doc, 0, 3), Span(doc, 2, 5)]
    with pytest.raises(PairDocError, match="overlap"):
        nlp(doc)
    for bad in ("", "  \n "):
        with pytest.raises(PairDocError, match="empty"):
            make_pair_doc(nlp, bad, "x")


def test_many_short_pairs_in_one_batch(trained_pipeline):
    nlp, _ = trained_pipeline
    docs = [make_pair_doc(nlp, f"p{i}", "q") for i in range(3000)]
    out = list(nlp.pipe(docs, batch_size=1000))
    assert len(out) == 3000
    for doc in out[::97]:
        _scored(doc)


TEXT = st.text(min_size=0, max_size=40)


@given(first=TEXT, second=TEXT)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_fuzz_make_pair_doc_and_pipeline(trained_pipeline, first, second):
    """Arbitrary Unicode: either the documented PairDocError (empty/whitespace
    turn, invalid Unicode, no visible character) or a fully scored Doc."""
    nlp, _ = trained_pipeline
    try:
        doc = make_pair_doc(nlp, first, second)
    except PairDocError:
        assert (not first.strip() or not second.strip() or _has_surrogate(first + second)
                or not has_visible_text(first) or not has_visible_text(second))
        return
    _scored(nlp(doc))


def _has_surrogate(text):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)
