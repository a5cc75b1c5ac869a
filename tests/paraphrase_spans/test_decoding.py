"""Span decoding (paraphrase_spans/decoding.py): gaps bridged, edges trimmed, short spans
dropped, spans capped per turn; the defaults keep the paper's plain rule."""
import numpy
import pytest

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.paraphrase_spans.readout import Readout
from spacy_paraphrase.paraphrase_spans.decoding import decode_turn, is_filler

FIRST = ["we", "lost", "the", "game", "and", "then", "the", "cup", "final", "."]
SECOND = ["so", "you", "lost", "?"]
#         we   lost the  game and  then the  cup  final .     so   you  lost ?
PROBS = [0.1, 0.9, 0.6, 0.8, 0.1, 0.1, 0.6, 0.7, 0.2, 0.6, 0.1, 0.2, 0.9, 0.1]


def _spans(readout, doc):
    return [(s.start, s.end, s.label_) for s in readout.highlight_spans(doc, numpy.asarray(PROBS, dtype="float32"))]


def test_defaults_are_maximal_runs(nlp):
    doc = make_pair_doc(nlp, FIRST, SECOND)
    assert _spans(Readout(highlight_threshold=0.5), doc) == [
        (1, 4, "SOURCE"), (6, 8, "SOURCE"), (9, 10, "SOURCE"), (12, 13, "PARAPHRASE")]


def test_gap_bridging_trimming_min_length_and_cap(nlp):
    doc = make_pair_doc(nlp, FIRST, SECOND)
    r = Readout(highlight_threshold=0.5)
    # a gap of two tokens ("and then") is bridged with max_gap 2, not with 1; "final" (one token) with both
    assert _spans(r.replace(max_gap=2), doc) == [(1, 10, "SOURCE"), (12, 13, "PARAPHRASE")]
    assert _spans(r.replace(max_gap=1), doc) == [(1, 4, "SOURCE"), (6, 10, "SOURCE"), (12, 13, "PARAPHRASE")]
    # trimming drops the stop word at the edge ("the cup" -> "cup") and the lone "."
    assert _spans(r.replace(trim_edges=True), doc) == [(1, 4, "SOURCE"), (7, 8, "SOURCE"), (12, 13, "PARAPHRASE")]
    # punctuation is no word: min_span_length 1 drops the lone "."; 2 drops "lost" in the second turn too
    assert _spans(r.replace(min_span_length=1), doc) == [(1, 4, "SOURCE"), (6, 8, "SOURCE"), (12, 13, "PARAPHRASE")]
    assert _spans(r.replace(min_span_length=2), doc) == [(1, 4, "SOURCE"), (6, 8, "SOURCE")]
    # the cap keeps the span with the largest probability mass, in text order
    assert _spans(r.replace(max_spans=1), doc) == [(1, 4, "SOURCE"), (12, 13, "PARAPHRASE")]
    capped = r.replace(max_spans=2)
    assert _spans(capped, doc) == [(1, 4, "SOURCE"), (6, 8, "SOURCE"), (12, 13, "PARAPHRASE")]


def test_span_flags_follow_the_decoded_spans(nlp):
    doc = make_pair_doc(nlp, FIRST, SECOND)
    r = Readout(highlight_threshold=0.5, max_spans=1)
    flags = r.span_flags(doc, numpy.asarray(PROBS, dtype="float32"))
    assert numpy.flatnonzero(flags).tolist() == [1, 2, 3, 12]
    # the written spans and the flags the scorer reads agree
    r = r.replace(threshold=0.1)
    r.annotate(doc, numpy.asarray(PROBS, dtype="float32"))
    assert [(s.start, s.end) for s in doc.spans["paraphrase"]] == [(1, 4), (12, 13)]


def test_settings_are_validated():
    with pytest.raises(ValueError, match="max_gap must be an integer >= 0"):
        Readout(max_gap=-1)
    with pytest.raises(ValueError, match="min_span_length must be an integer >= 0"):
        Readout(min_span_length=-1)
    with pytest.raises(ValueError, match="max_spans"):
        Readout(max_spans=1.5)
    with pytest.raises(ValueError, match="trim_edges"):
        Readout(trim_edges="yes")
    # a tuned value that comes back as a whole float is kept as an int
    assert Readout(max_gap=2.0).max_gap == 2 and isinstance(Readout(max_gap=2.0).max_gap, int)


def test_filler_and_no_highlight(nlp):
    doc = make_pair_doc(nlp, ["The,", "game", "…", " "], ["Yes"])
    assert [is_filler(t) for t in doc[:4]] == [True, False, True, True]
    assert decode_turn(doc, [False] * len(doc), numpy.zeros(len(doc)), 0, 4, "SOURCE") == []
